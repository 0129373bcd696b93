/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/klog/v2"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/scheduler/reservation"
)

// Saying a reservation is held. The gang scheduler plans from its cache, and this plugin learns
// of the reservation through a watch of its own: a pod this scheduler placed before it read the
// reservation (its binding perhaps not yet in the operator's cache) may have taken room the plan
// counted on, and a member would then wait beside its running driver. So once the ledger holds
// a reservation, the plugin judges it against what it placed itself, and says so in its Held
// condition, for the generation it read:
//   - true (RoomHeld) when the pods on each planned node (those bound, and those it placed whose
//     binding its watch has not shown yet) fit beside all the room held there: from then on no
//     pod is placed into the room but its members;
//   - false (RoomTaken, naming the node) when they do not even without the pods ending there:
//     the gang scheduler plans the run again at once;
//   - nothing yet while they fit only once the pods ending there are gone (judged again every
//     endingRecheck).
// The gang scheduler starts the run's driver only on the first. The judgement waits ackDelay
// after the ledger takes the reservation, so that a scheduling cycle that filtered nodes before
// has reserved its pod by then, and it waits for the scheduler's informers of pods and nodes to
// sync: a restarted scheduler reads the reservations before the scheduler starts those, and
// judged then it would find every planned node empty or gone, and every plan held.
//
// Every replica of spark-scheduler judges and writes it, the standbys of a leader election too:
// they hold the same ledger from the same watch, but a standby places nothing, so its verdict
// rests on the bound pods alone, without the leader's placements not yet bound. With one
// replica (the chart's default) that does not arise.

// heldReason and heldMessage are the Held condition's.
const (
	heldReason  = "RoomHeld"
	heldMessage = "spark-scheduler's " + Name + " plugin holds the room planned for the members"
)

// ackWorkers is how many Held writes are in flight at most.
const ackWorkers = 4

// ackDelay is how long after the ledger takes a reservation the plugin judges it.
const ackDelay = 100 * time.Millisecond

// endingRecheck is how often a reservation waiting for pods ending on its nodes, or for the
// scheduler's informers to sync, is judged again.
const endingRecheck = 250 * time.Millisecond

// errEnding: the reservation waits for pods ending on its nodes; nothing is written yet.
var errEnding = errors.New("waiting for pods ending on its planned nodes")

// errNotSynced: the scheduler's informers of pods and nodes have not synced; nothing is judged
// yet.
var errNotSynced = errors.New("waiting for the scheduler's pods and nodes to sync")

// heldGeneration is a generation of a reservation the ledger holds.
type heldGeneration struct {
	name       types.NamespacedName
	uid        types.UID
	generation int64
}

// acknowledger writes the Held condition of the reservation generations it is given, as judge
// finds them, and records each judgement written (the ledger's Judge, ahead of the watch).
type acknowledger struct {
	queue  workqueue.TypedRateLimitingInterface[heldGeneration]
	client dynamic.NamespaceableResourceInterface
	judge  func(types.NamespacedName) (verdict, error)
	record func(types.NamespacedName, int64, reservation.Judgement)
	// current is the generation the ledger holds of a reservation, and what was found of it
	// (nil: not asked).
	current func(types.NamespacedName) (int64, reservation.Judgement, bool)
	now     func() time.Time
	// synced tells whether what judge reads has synced (nil: always).
	synced func() bool
}

func newAcknowledger(client dynamic.NamespaceableResourceInterface, judge func(types.NamespacedName) (verdict, error),
	record func(types.NamespacedName, int64, reservation.Judgement), current func(types.NamespacedName) (int64, reservation.Judgement, bool),
	now func() time.Time) *acknowledger {
	return &acknowledger{
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[heldGeneration](),
			workqueue.TypedRateLimitingQueueConfig[heldGeneration]{Name: "spark-reservations-held"}),
		client: client, judge: judge, record: record, current: current, now: now}
}

// said reports whether r's Held condition speaks of its current generation already.
func said(r *schedv1alpha1.Reservation) bool {
	c := meta.FindStatusCondition(r.Status.Conditions, schedv1alpha1.ConditionHeld)
	return c != nil && c.ObservedGeneration == r.Generation
}

// held asks for r's Held condition to be judged and written, unless it speaks of r's generation
// already.
func (a *acknowledger) held(r *schedv1alpha1.Reservation) {
	if said(r) {
		return
	}
	a.queue.AddAfter(heldGeneration{name: types.NamespacedName{Namespace: r.Namespace, Name: r.Name}, uid: r.UID, generation: r.Generation}, ackDelay)
}

// run writes Held conditions until ctx ends.
func (a *acknowledger) run(ctx context.Context) {
	for range ackWorkers {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for a.next(ctx) {
			}
		}, time.Second)
	}
	<-ctx.Done()
	a.queue.ShutDown()
}

// next writes one Held condition; false once the queue is shut down.
func (a *acknowledger) next(ctx context.Context) bool {
	g, quit := a.queue.Get()
	if quit {
		return false
	}
	defer a.queue.Done(g)
	switch err := a.write(ctx, g); {
	case errors.Is(err, errEnding), errors.Is(err, errNotSynced):
		a.queue.Forget(g)
		a.queue.AddAfter(g, endingRecheck)
	case err == nil, apierrors.IsNotFound(err), apierrors.IsConflict(err), apierrors.IsInvalid(err):
		// Written; or the reservation is gone, or replaced by another (the uid in the patch
		// no longer matches), which has its own generation to say held.
		a.queue.Forget(g)
	default:
		klog.FromContext(ctx).Error(err, "could not say a reservation is held; retrying", "reservation", g.name)
		a.queue.AddRateLimited(g)
	}
	return true
}

// write judges g and sets its Held condition. The patch names the uid the ledger read, so that
// it cannot land on another reservation stored since under the same name. The condition is the
// only one, so a merge patch of the list is whole.
func (a *acknowledger) write(ctx context.Context, g heldGeneration) error {
	if a.synced != nil && !a.synced() {
		return errNotSynced
	}
	if a.current != nil {
		switch gen, judged, ok := a.current(g.name); {
		case !ok || gen != g.generation:
			// A newer plan, queued under its own generation, or none: judge deals with the
			// ledger's plan, and a verdict on it written for this generation would say
			// nothing the gang scheduler reads, while replacing one it does (the condition
			// is the only one).
			return nil
		case judged != reservation.Unjudged:
			// Said already (written, and on its way back through the watch: an update that
			// came before it asked again). Once held, a plan's room is kept from other pods,
			// and its run may have started on the verdict: judged again, beside plans made
			// since from a lagging cache that do not fit, it would be found taken and hold
			// nothing under its running driver.
			return nil
		}
	}
	v, err := a.judge(g.name)
	if err != nil {
		return err
	}
	held := metav1.Condition{Type: schedv1alpha1.ConditionHeld, Status: metav1.ConditionTrue, ObservedGeneration: g.generation,
		LastTransitionTime: metav1.NewTime(a.now()), Reason: heldReason, Message: heldMessage}
	judged := reservation.JudgedHeld
	switch {
	case v.taken != "":
		held.Status, held.Reason, held.Message = metav1.ConditionFalse, reservation.ReasonRoomTaken, reservation.TakenMessage(v.taken)
		judged = reservation.JudgedTaken
		klog.FromContext(ctx).Info("a Spark reservation's planned room was taken; the gang scheduler plans its run again",
			"reservation", g.name, "generation", g.generation, "node", v.taken)
	case v.ending:
		return errEnding
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": g.uid},
		"status":   map[string]any{"conditions": []metav1.Condition{held}},
	})
	if err != nil {
		return err
	}
	_, err = a.client.Namespace(g.name.Namespace).Patch(ctx, g.name.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: "spark-scheduler"}, "status")
	if err != nil {
		return fmt.Errorf("writing the Held condition of %s: %w", g.name, err)
	}
	if a.record != nil {
		a.record(g.name, g.generation, judged)
	}
	return nil
}

// verdict is what takenOn finds of a reservation: room taken on a node, or pods ending on one
// that it waits for, or neither (it is held).
type verdict struct {
	taken  string // the first planned node its room was taken on
	ending bool   // the plan fits only once pods ending on a planned node are gone
}

// takenOn judges the reservation name as the ledger holds it, on each of its planned nodes: the
// pods on the node beside the room held there (its own and every other reservation's) must fit
// the node. The pods on a node are those its informer shows bound there, and those this
// scheduler placed there whose binding it does not show yet (placements). Pods ending (deleted,
// not gone yet) are waited for: their room is on its way back (the gang scheduler planned into
// it, having seen them go, or as their run's preemptor), and the plan is said held once they
// are gone. Nothing to judge (the ledger no longer holds it): held.
func (p *Reservations) takenOn(name types.NamespacedName) (verdict, error) {
	nodes := p.ledger.Nodes(name)
	if len(nodes) == 0 {
		return verdict{}, nil
	}
	all, err := p.pods.List(labels.Everything())
	if err != nil {
		return verdict{}, err
	}
	planned := sets.New(nodes...)
	on := map[string][]*v1.Pod{}
	unbound := sets.New[types.UID]()
	for _, pod := range all {
		if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
			continue
		}
		if pod.Spec.NodeName == "" {
			unbound.Insert(pod.UID)
		} else if planned.Has(pod.Spec.NodeName) {
			on[pod.Spec.NodeName] = append(on[pod.Spec.NodeName], pod)
		}
	}
	now := p.now()
	for _, pl := range p.placed.since(now.Add(-placedFor)) {
		// Placed, and its informer shows it still waiting to be bound: its binding is on its
		// way. One the informer no longer has is gone.
		if planned.Has(pl.node) && unbound.Has(pl.pod.UID) {
			on[pl.node] = append(on[pl.node], pl.pod)
		}
	}
	var v verdict
	for _, node := range nodes {
		n, err := p.nodes.Get(node)
		if apierrors.IsNotFound(err) {
			continue // gone: the gang scheduler plans the run again
		}
		if err != nil {
			return verdict{}, err
		}
		live, ending := v1.ResourceList{}, v1.ResourceList{}
		for _, pod := range on[node] {
			sum := live
			if pod.DeletionTimestamp != nil {
				sum = ending
			}
			for res, q := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
				addQuantity(sum, res, q)
			}
			addQuantity(sum, v1.ResourcePods, *resource.NewQuantity(1, resource.DecimalSI))
		}
		held := p.ledger.HeldOn(node, slices.Values(on[node]), nil, now)
		for res, h := range held.Requests {
			alloc, ok := n.Status.Allocatable[res]
			if !ok {
				continue
			}
			total := live[res].DeepCopy()
			total.Add(h)
			if total.Cmp(alloc) > 0 {
				return verdict{taken: node}, nil
			}
			total.Add(ending[res])
			if total.Cmp(alloc) > 0 {
				v.ending = true
			}
		}
	}
	return v, nil
}

func addQuantity(sum v1.ResourceList, res v1.ResourceName, q resource.Quantity) {
	cur := sum[res]
	cur.Add(q)
	sum[res] = cur
}

// placedFor is how long the plugin remembers a pod it placed, for takenOn: its informer shows
// the binding well within that.
const placedFor = 30 * time.Second

// placement is a pod this scheduler placed on node (Reserve) at.
type placement struct {
	pod  *v1.Pod
	node string
	at   time.Time
}

// placements are the pods this scheduler placed in the last placedFor, by UID.
type placements struct {
	mu     sync.Mutex
	byUID  map[types.UID]placement
	pruned time.Time // when the old ones were last dropped
}

// add records a placement. It runs in every scheduling cycle (Reserve): the placements older
// than placedFor are dropped once every placedFor, not on each call, so the set holds at most
// two placedFor's worth.
func (ps *placements) add(pod *v1.Pod, node string, at time.Time) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.byUID == nil {
		ps.byUID = map[types.UID]placement{}
	}
	if at.Sub(ps.pruned) > placedFor {
		for uid, pl := range ps.byUID {
			if at.Sub(pl.at) > placedFor {
				delete(ps.byUID, uid)
			}
		}
		ps.pruned = at
	}
	ps.byUID[pod.UID] = placement{pod: pod, node: node, at: at}
}

func (ps *placements) remove(uid types.UID) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	delete(ps.byUID, uid)
}

// since lists the placements made after t.
func (ps *placements) since(t time.Time) []placement {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var out []placement
	for _, pl := range ps.byUID {
		if pl.at.After(t) {
			out = append(out, pl)
		}
	}
	return out
}
