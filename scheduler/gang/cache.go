/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/internal/restconn"
	"github.com/sparkop/spark-operator/scheduler/gang/placeholder"
	"github.com/sparkop/spark-operator/scheduler/gang/release"
	"github.com/sparkop/spark-operator/sparkpod"
)

// stoppingCache is the cluster cache as the manager runs it: among the runnables that need no
// leader, which the manager stops before those that do (the cycle loop, the controllers that
// call Admit) and before the webhooks (PlacePod). A read that waits for an informer to sync
// would wait for ever once the cache has stopped: a stopped cache starts no informer it is
// asked for, and one stopped before its first list never syncs. So reads that no caller's
// context bounds take the scheduler's reads context, which ends when the cache stops.
// (Not one of the manager's own caches: every controller would wait at start for its list of
// all the cluster's pods, and start nothing where the operator may not list them.)
type stoppingCache struct {
	cache.Cache
	stopped context.CancelFunc
}

func (c stoppingCache) Start(ctx context.Context) error {
	defer c.stopped()
	return c.Cache.Start(ctx)
}

func (stoppingCache) NeedLeaderElection() bool { return false }

// newClusterCache returns the cache of what the whole cluster uses: pods of every namespace
// and workload (any of them takes node capacity, placeholders included), nodes,
// PriorityClasses, Queues and Reservations. It is
// separate from the manager's, which holds only the operator's own pods and may be limited to
// some namespaces. Pods are trimmed to what capacity accounting reads.
func newClusterCache(mgr manager.Manager) (cache.Cache, error) {
	hc, err := restconn.Own(mgr.GetConfig())
	if err != nil {
		return nil, err
	}
	return cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient:       hc,
		Scheme:           mgr.GetScheme(),
		Mapper:           mgr.GetRESTMapper(),
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}: {Transform: trimPod},
		},
	})
}

// trimPod keeps of a pod only its identity and creation time, the labels that tie it to a
// workload, its node, phase and what it requests (summed into one container): a few hundred
// bytes a pod however large the pod, so a cluster of many pods costs little memory.
func trimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	labels := map[string]string{}
	for _, k := range []string{v1beta2.LabelAppName, v1alpha1.LabelConnectName, v1beta2.LabelSubmissionID, v1beta2.SparkRoleLabel, v1beta2.SparkExecutorIDLabel,
		LabelPlaceholder, LabelRun, LabelMember} {
		if v, ok := p.Labels[k]; ok {
			labels[k] = v
		}
	}
	var annotations map[string]string
	if n, ok := p.Annotations[AnnotationNode]; ok {
		annotations = map[string]string{AnnotationNode: n}
	}
	var gates []corev1.PodSchedulingGate
	var affinity *corev1.Affinity
	if release.Gated(p) {
		// A gated executor keeps what releasing it changes, so that one patch, checked
		// against these, releases it (release.Pod); it is released within moments.
		gates, affinity, annotations = p.Spec.SchedulingGates, p.Spec.Affinity, p.Annotations
	}
	return &corev1.Pod{
		TypeMeta: p.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID,
			ResourceVersion: p.ResourceVersion, CreationTimestamp: p.CreationTimestamp, Labels: labels, Annotations: annotations, DeletionTimestamp: p.DeletionTimestamp},
		Spec: corev1.PodSpec{NodeName: p.Spec.NodeName, SchedulingGates: gates, Affinity: affinity, Containers: []corev1.Container{{
			Name: trimmedContainer, Resources: corev1.ResourceRequirements{Requests: podRequests(p)},
		}}},
		Status: corev1.PodStatus{Phase: p.Status.Phase, Conditions: placeholder.Conditions(p)},
	}, nil
}

// read lists the world from the caches: applications and sessions from the manager's, the rest
// from the cluster cache. isGang selects the applications this scheduler decides for; sessions
// are all its own or none (see sessions).
func (s *Scheduler) read(ctx context.Context) (world, error) {
	w := world{Seen: s.seen.before()}
	var nodes corev1.NodeList
	var pods corev1.PodList
	var pcs schedulingv1.PriorityClassList
	var queues schedv1alpha1.QueueList
	var apps v1beta2.SparkApplicationList
	var sessions v1alpha1.SparkConnectList
	var reservations schedv1alpha1.ReservationList
	lists := []struct {
		c    client.Reader
		list client.ObjectList
	}{{s.cluster, &nodes}, {s.cluster, &pods}, {s.cluster, &pcs}, {s.cluster, &queues}, {s.cluster, &reservations}, {s.apps, &apps}}
	if s.sessions() {
		lists = append(lists, struct {
			c    client.Reader
			list client.ObjectList
		}{s.apps, &sessions})
	}
	for _, l := range lists {
		// The world is read on every pod event, and copying every object the caches hold
		// was most of its cost: it shares them instead, and is only ever read (changes go on
		// copies: overlayStored, overlayMarked, ungating.Overlay).
		if err := l.c.List(ctx, l.list, client.UnsafeDisableDeepCopy); err != nil {
			return w, fmt.Errorf("listing %T: %w", l.list, err)
		}
	}
	w.Nodes, w.Pods, w.PriorityClasses, w.Queues = nodes.Items, pods.Items, pcs.Items, queues.Items
	var foreign foreignQueues
	for i := range apps.Items {
		if app := &apps.Items[i]; s.isGang(app) {
			o := applicationObject(app)
			o.demand = s.demands.of(app.UID, app.Generation, o.demand)
			o.ownPlacement = s.ownPlacement[s.schedulerOf(app)]
			s.foreignQueue(ctx, &foreign, s.schedulerOf(app), &o)
			w.Workloads = append(w.Workloads, o)
		}
	}
	for i := range sessions.Items {
		// Sessions are few, and their demand is worked out by the SparkConnect controller's
		// code on the object: a copy each keeps the cache's safe from it.
		o := sessionObject(sessions.Items[i].DeepCopy(), s.cfg.SessionDemand)
		o.ownPlacement = s.ownPlacement[s.cfg.DefaultVariant]
		s.foreignQueue(ctx, &foreign, s.cfg.DefaultVariant, &o)
		w.Workloads = append(w.Workloads, o)
	}
	w.ForeignQueues = foreign.queues
	attachReservations(w.Workloads, reservations.Items)
	s.demands.keepFor(w.Workloads)
	s.seen.remember(w)
	return w, nil
}

// foreignQueue puts o, when its queue is another scheduler's (ForeignPlacement), in the core's
// queue standing for that one (queueOf), or the core's default queue where that limits nothing.
// The reservation of a run admitted before keeps the queue it was admitted in.
func (s *Scheduler) foreignQueue(ctx context.Context, f *foreignQueues, batchScheduler string, o *object) {
	if s.foreignQueues[batchScheduler] {
		o.Queue = s.queueOf(ctx, f, batchScheduler, o.Queue)
	}
}

// attachReservations gives each workload its reservation: the Reservation object of its name
// that it owns, over the one a release before the Reservation API left on it (withLegacy). The objects are the cache's, shared: read, never changed.
func attachReservations(workloads []object, stored []schedv1alpha1.Reservation) {
	byName := make(map[types.NamespacedName]*schedv1alpha1.Reservation, len(stored))
	for i := range stored {
		byName[client.ObjectKeyFromObject(&stored[i])] = &stored[i]
	}
	for i := range workloads {
		o := &workloads[i]
		if obj := byName[types.NamespacedName{Namespace: o.Key.Namespace, Name: ReservationName(o.Key)}]; obj != nil {
			if r, ok := reservationFrom(obj, o.Object); ok {
				o.res, o.legacy = &r, false
			}
		}
	}
}

// watch triggers a cycle on every change that may free or take capacity or change the order:
// any pod, node, PriorityClass, Queue or Reservation change, and any change of a gang application or session.
func (s *Scheduler) watch(ctx context.Context, mgr manager.Manager) error {
	onChange := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.trigger() },
		UpdateFunc: func(_, _ any) { s.trigger() },
		DeleteFunc: func(any) { s.trigger() },
	}
	// A gated executor that appears (or changes) is released at once, off the cycle.
	gated := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok && release.Gated(p) {
			s.triggerUngate()
		}
	}
	pods, err := s.cluster.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return fmt.Errorf("watching pods: %w", err)
	}
	if _, err := pods.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    gated,
		UpdateFunc: func(_, obj any) { gated(obj) },
	}); err != nil {
		return err
	}
	for _, obj := range []client.Object{&corev1.Pod{}, &corev1.Node{}, &schedulingv1.PriorityClass{}, &schedv1alpha1.Queue{}, &schedv1alpha1.Reservation{}} {
		inf, err := s.cluster.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("watching %T: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(onChange); err != nil {
			return err
		}
	}
	inf, err := mgr.GetCache().GetInformer(ctx, &v1beta2.SparkApplication{})
	if err != nil {
		return fmt.Errorf("watching SparkApplications: %w", err)
	}
	_, err = inf.AddEventHandler(toolscache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			app, ok := obj.(*v1beta2.SparkApplication)
			return ok && s.isGang(app)
		},
		Handler: onChange,
	})
	if err != nil || !s.sessions() {
		return err
	}
	inf, err = mgr.GetCache().GetInformer(ctx, &v1alpha1.SparkConnect{})
	if err != nil {
		return fmt.Errorf("watching SparkConnects: %w", err)
	}
	_, err = inf.AddEventHandler(onChange)
	return err
}

// demandMemo remembers each application's demand by the generation of its spec, which alone it
// depends on: working it out (defaults, then Spark's sizing rules) on every cycle for every
// application was most of a cycle's cost with 1,000 waiting. Read by both loops, so locked.
type demandMemo struct {
	mu    sync.Mutex
	byUID map[types.UID]memoDemand
}

type memoDemand struct {
	generation int64
	demand     sparkpod.Demand
	err        error
}

// of returns compute remembered for the object uid at generation. The demand it returns is
// shared: read it, never change it.
func (m *demandMemo) of(uid types.UID, generation int64, compute func() (sparkpod.Demand, error)) func() (sparkpod.Demand, error) {
	return func() (sparkpod.Demand, error) {
		m.mu.Lock()
		d, ok := m.byUID[uid]
		m.mu.Unlock()
		if ok && d.generation == generation {
			return d.demand, d.err
		}
		demand, err := compute()
		m.mu.Lock()
		if m.byUID == nil {
			m.byUID = map[types.UID]memoDemand{}
		}
		m.byUID[uid] = memoDemand{generation: generation, demand: demand, err: err}
		m.mu.Unlock()
		return demand, err
	}
}

// keepFor forgets the demands of all but the workloads a cycle counts (object.inCycle): a
// finished application stays in the cluster, and the cache, for its TTL, often much longer
// than it ran, and its demand would be a few kilobytes for nothing. One that runs again is
// worked out again.
func (m *demandMemo) keepFor(workloads []object) {
	current := make(map[types.UID]bool, len(workloads))
	for i := range workloads {
		if o := &workloads[i]; o.inCycle() {
			current[o.Object.GetUID()] = true
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for uid := range m.byUID {
		if !current[uid] {
			delete(m.byUID, uid)
		}
	}
}
