/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package plugin is SparkReservations, the kube-scheduler plugin behind the gang scheduler's
// --gang-enforcement=plugin: the room a Reservation plans for a member of an admitted Spark
// run stays that member's until its pod is on the node. It honours the reservations written
// with that enforcement (spec.enforcement: plugin) and no others.
//
// Filter counts, on each node, the room held for members whose pods are not there yet
// (reservation.Ledger.HeldOn) as used, for every pod but the member it is held for; and keeps
// a member to its planned node (a driver to its reservation's, an executor to the node the gang
// scheduler released it onto). Pods not yet admitted need nothing here: the gang scheduler
// keeps them gated, so they wait without taking anything. Executors beyond the gang (dynamic
// allocation) are members of no slot: they fit only into room that nothing holds, and the gang
// scheduler lets them go only within their queue's quota. Pods of no Spark application
// schedule as with the stock kube-scheduler, but for the held room.
//
// Saying so: once the ledger holds a reservation, the plugin sets its Held condition (held.go),
// and the gang scheduler starts the run's driver only then.
//
// Booking and giving back: a member counts as on its node from the moment the scheduler
// assumes it there (HeldOn reads the pods of the node as the scheduler's cache has them,
// assumed ones included), and Reserve books its place in the ledger, so that it stays taken
// after the pod ends and leaves the node; Unreserve (the binding failed) gives it back.
package plugin

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/scheduler/reservation"
)

// Name is the plugin's name in a KubeSchedulerConfiguration.
const Name = "SparkReservations"

// Args are the plugin's arguments (pluginConfig args).
type Args struct {
	// ReservationTimeout is the gang scheduler's --gang-reservation-timeout: how long after
	// its admission a reservation holds room for members still unbound, such as "5m".
	// Unset or not positive: reservation.DefaultTimeout, as the operator's flag.
	ReservationTimeout metav1.Duration `json:"reservationTimeout,omitempty"`
}

// reservations is the Reservation resource, as the dynamic client and the scheduler's event
// registration name it.
var reservations = schedv1alpha1.GroupVersion.WithResource("reservations")

// Reservations is the plugin.
type Reservations struct {
	ledger *reservation.Ledger
	now    func() time.Time
	// acks says the reservations the ledger holds are held (held.go); nil: it does not.
	acks *acknowledger
	// placed, pods and nodes are what takenOn judges a reservation by: the pods this scheduler
	// placed lately, and its informers' pods and nodes.
	placed placements
	pods   listersv1.PodLister
	nodes  listersv1.NodeLister
	// nodeInfo is the node as the current scheduling cycle's snapshot has it (Reserve).
	nodeInfo func(node string) (fwk.NodeInfo, error)
}

var (
	_ fwk.PreFilterPlugin   = &Reservations{}
	_ fwk.FilterPlugin      = &Reservations{}
	_ fwk.EnqueueExtensions = &Reservations{}
	_ fwk.ReservePlugin     = &Reservations{}
)

// New builds the plugin for one profile: it reads its arguments, checks that the cluster
// serves Reservations (so a scheduler without the operator's CRDs says so at start instead of
// waiting for ever), and fills its ledger from an informer before the first cycle.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	timeout, err := timeoutOf(obj)
	if err != nil {
		return nil, err
	}
	if err := served(h); err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(h.KubeConfig())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	p := &Reservations{ledger: &reservation.Ledger{Timeout: timeout}, now: time.Now}
	pods, nodes := h.SharedInformerFactory().Core().V1().Pods(), h.SharedInformerFactory().Core().V1().Nodes()
	p.pods, p.nodes = pods.Lister(), nodes.Lister()
	p.nodeInfo = func(node string) (fwk.NodeInfo, error) { return h.SnapshotSharedLister().NodeInfos().Get(node) }
	p.acks = newAcknowledger(dyn.Resource(reservations), p.takenOn, p.ledger.Judge, p.ledger.Judged, p.now)
	// The scheduler starts these informers only after New (see held.go).
	p.acks.synced = func() bool { return pods.Informer().HasSynced() && nodes.Informer().HasSynced() }
	go p.acks.run(ctx)
	factory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	informer := factory.ForResource(reservations).Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    p.set,
		UpdateFunc: func(_, obj any) { p.set(obj) },
		DeleteFunc: p.remove,
	}); err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return nil, fmt.Errorf("%s: the Reservation informer did not sync", Name)
	}
	klog.FromContext(ctx).Info("holding the room of Spark reservations", "plugin", Name, "reservationTimeout", timeout)
	return p, nil
}

// timeoutOf reads the reservation timeout of the plugin's arguments (nil: none given).
func timeoutOf(obj runtime.Object) (time.Duration, error) {
	args := Args{}
	if obj != nil {
		if err := frameworkruntime.DecodeInto(obj, &args); err != nil {
			return 0, fmt.Errorf("%s args: %w", Name, err)
		}
	}
	if args.ReservationTimeout.Duration <= 0 {
		return reservation.DefaultTimeout, nil
	}
	return args.ReservationTimeout.Duration, nil
}

// served fails with what to do when the cluster does not serve Reservations.
func served(h fwk.Handle) error {
	dc, err := discovery.NewDiscoveryClientForConfig(h.KubeConfig())
	if err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	list, err := dc.ServerResourcesForGroupVersion(reservations.GroupVersion().String())
	if err == nil {
		for _, r := range list.APIResources {
			if r.Name == reservations.Resource {
				return nil
			}
		}
	}
	return fmt.Errorf("%s: the cluster does not serve %s (%v): install the Spark operator's CRDs (charts/spark-operator/crds) first", Name, reservations, err)
}

func (p *Reservations) set(obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	var r schedv1alpha1.Reservation
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &r); err != nil {
		klog.ErrorS(err, "unreadable Reservation; ignored", "reservation", klog.KObj(u))
		return
	}
	if r.Spec.Enforcement != schedv1alpha1.EnforcementPlugin {
		// Held by placeholders, or by nothing: holding it here too would count it twice.
		p.ledger.Remove(types.NamespacedName{Namespace: r.Namespace, Name: r.Name})
		return
	}
	p.ledger.Set(&r)
	if p.acks != nil {
		p.acks.held(&r)
	}
}

func (p *Reservations) remove(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		p.ledger.Remove(types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()})
	}
}

// Name is the plugin's name.
func (p *Reservations) Name() string { return Name }

// PreFilter keeps a driver to its planned node at once.
func (p *Reservations) PreFilter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if node, ok := p.ledger.PlannedNode(pod, p.now()); ok {
		return &fwk.PreFilterResult{NodeNames: sets.New(node)}, nil
	}
	return nil, nil
}

// PreFilterExtensions: none; Filter reads the pods of the node it is given, so the pods
// preemption adds or removes are counted without them.
func (p *Reservations) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter refuses a node where pod does not fit beside the room held for others.
func (p *Reservations) Filter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	node := ni.Node().Name
	now := p.now()
	if planned, ok := p.ledger.PlannedNode(pod, now); ok && planned != node {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node(s) other than the one its Spark reservation planned for it")
	}
	return p.besideHeld(pod, ni, now)
}

// besideHeld refuses pod on ni unless it fits beside the room held there for others.
func (p *Reservations) besideHeld(pod *v1.Pod, ni fwk.NodeInfo, now time.Time) *fwk.Status {
	node := ni.Node().Name
	pods := func(yield func(*v1.Pod) bool) {
		for _, info := range ni.GetPods() {
			if !yield(info.GetPod()) {
				return
			}
		}
	}
	held := p.ledger.HeldOn(node, pods, pod, now)
	if len(held.Requests) == 0 {
		return nil
	}
	need := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	if short := shortOf(need, held.Requests, ni); short != "" {
		if planned, ok := p.ledger.PlannedNode(pod, now); ok && planned == node {
			// A member kept out of its own planned node: the plans and the placements
			// disagree, which the Held judgement exists to prevent. Say everything that
			// went into the verdict, so that it can be traced.
			p.explainRefusal(pod, need, ni, p.ledger.HeldOnBy(node, pods, pod, now))
		}
		return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("node(s) had %s reserved for Spark applications' members (Reservation %s)", short, held.Reservations[0]))
	}
	return nil
}

// explainRefusal logs why a member was refused on its planned node: the node's room, what
// each reservation holds there, and every pod the scheduler counts on it.
func (p *Reservations) explainRefusal(pod *v1.Pod, need v1.ResourceList, ni fwk.NodeInfo, held reservation.Holding) {
	alloc, used := ni.GetAllocatable(), ni.GetRequested()
	onNode := make([]string, 0, len(ni.GetPods()))
	for _, info := range ni.GetPods() {
		q := info.GetPod()
		cpu := resourcehelper.PodRequests(q, resourcehelper.PodResourcesOptions{})[v1.ResourceCPU]
		onNode = append(onNode, fmt.Sprintf("%s/%s cpu=%s phase=%s node-annotation=%q deleting=%t",
			q.Namespace, q.Name, cpu.String(), q.Status.Phase, q.Annotations[reservation.AnnotationNode], q.DeletionTimestamp != nil))
	}
	by := make([]string, 0, len(held.By))
	for _, name := range held.Reservations {
		cpu := held.By[name][v1.ResourceCPU]
		by = append(by, name+" cpu="+cpu.String())
	}
	klog.InfoS("a Spark member was refused on its planned node", "pod", klog.KObj(pod), "node", ni.Node().Name,
		"needCPU", need.Cpu().String(), "allocatableMilliCPU", alloc.GetMilliCPU(), "requestedMilliCPU", used.GetMilliCPU(),
		"held", by, "pods", onNode)
}

// shortOf names the first resource, by name, that need does not find free on ni beside held
// ("" when it fits). Resources need does not ask for are no reason to refuse.
func shortOf(need, held v1.ResourceList, ni fwk.NodeInfo) string {
	alloc, used := ni.GetAllocatable(), ni.GetRequested()
	for _, name := range sets.List(sets.KeySet(held)) {
		want, ok := need[name]
		if !ok || want.IsZero() {
			continue
		}
		h := held[name]
		var free, wantV, heldV int64
		switch name {
		case v1.ResourceCPU:
			free, wantV, heldV = alloc.GetMilliCPU()-used.GetMilliCPU(), want.MilliValue(), h.MilliValue()
		case v1.ResourceMemory:
			free, wantV, heldV = alloc.GetMemory()-used.GetMemory(), want.Value(), h.Value()
		case v1.ResourceEphemeralStorage:
			free, wantV, heldV = alloc.GetEphemeralStorage()-used.GetEphemeralStorage(), want.Value(), h.Value()
		default:
			free, wantV, heldV = alloc.GetScalarResources()[name]-used.GetScalarResources()[name], want.Value(), h.Value()
		}
		if wantV > free-heldV {
			return string(name)
		}
	}
	return ""
}

// Reserve remembers where pod was placed (held.go), checks again that it fits beside the room
// held there now, and books its place if it takes a member's on node.
//
// The check again closes a window Filter leaves open: a reservation the ledger took after the
// cycle filtered nodes (it arrived while the cycle scored them, on a scheduler short of CPU)
// was judged without this pod, which it did not know of yet, and said held; the pod, placed
// into its room, would then keep one of its members out. The placement is recorded first, so
// that a judgement from then on counts the pod, and a reservation taken before the check
// refuses it here.
func (p *Reservations) Reserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	now := p.now()
	p.placed.add(pod, node, now)
	if p.nodeInfo != nil {
		ni, err := p.nodeInfo(node)
		if err != nil {
			p.placed.remove(pod.UID)
			return fwk.AsStatus(fmt.Errorf("%s: reading node %s of the cycle's snapshot: %w", Name, node, err))
		}
		if st := p.besideHeld(pod, ni, now); !st.IsSuccess() {
			p.placed.remove(pod.UID)
			return st
		}
	}
	p.ledger.Book(pod, node)
	return nil
}

// Unreserve gives back what Reserve booked.
func (p *Reservations) Unreserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	p.ledger.Unbook(pod)
	p.placed.remove(pod.UID)
}

// EventsToRegister: what may make room for a pod this plugin refused. A pod deleted or ended
// (the scheduler reports an assigned pod ending as its deletion), a node added or grown, a
// reservation changed (a member bound, a run replanned) or deleted (its run ended).
func (p *Reservations) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	gvk := fwk.EventResource(reservations.Resource + "." + reservations.Version + "." + reservations.Group)
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Delete}},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAllocatable}},
		{Event: fwk.ClusterEvent{Resource: gvk, ActionType: fwk.All}},
	}, nil
}
