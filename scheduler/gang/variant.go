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
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang/release"
	"github.com/sparkop/spark-operator/sparkpod"
)

// Variants: one decision core, more than one spec.batchScheduler name.
//
// Admission (queues, quotas, fit, reservations, preemption, the start gate) is the same
// whatever places an admitted run's pods, and it must be one: two loops deciding on the same
// capacity would each promise it. So the Scheduler serves, beside gang, variants that differ
// only in how an admitted run is placed: each is a Placement, served under its own name
// (Serve). The cycle treats their applications as its own; a variant's Admit is gang's, with
// the pod settings (and the run's objects) of its Placement.

// Placement is how a variant of the gang scheduler places a run the core admitted.
type Placement interface {
	// Name is the value of spec.batchScheduler that selects the variant.
	Name() string
	// Pods are the pod settings of w's run admitted with r. Reservation.Pods are gang's:
	// the driver on its planned node, the executors gated until the core gives each its
	// planned node. A variant whose executors are not gated leaves their placement to
	// kube-scheduler, within what the admission planned: its executors count against the
	// reservation's slots until they are on a node, and the webhook confines each executor to
	// its planned node as it is created (PlacePod).
	Pods(w scheduler.Workload, r Reservation) (sparkpod.RoleScheduling, error)
}

// Serve makes the scheduler decide for the applications naming p too, and returns the
// scheduler.Interface to register under p's name. Call it before the scheduler is set up.
// It implements scheduler.ObjectsForRun when p does, so that a variant's objects are created
// before the run's pods.
func (s *Scheduler) Serve(p Placement) scheduler.Interface {
	s.served[p.Name()] = true
	if _, likeGang := p.(placedLikeGang); !likeGang {
		s.ownPlacement[p.Name()] = true
	}
	if _, ok := p.(ForeignPlacement); ok {
		s.foreignQueues[p.Name()] = true
		if l, ok := p.(ForeignQueueLimits); ok {
			s.queueLimits[p.Name()] = l
		}
	}
	v := &variant{core: s, placement: p}
	if o, ok := p.(PlacementObjects); ok {
		return &variantWithObjects{variant: v, objects: o}
	}
	return v
}

// placedLikeGang is implemented by Placements whose pods are gang's (Reservation.Pods: gated,
// released by the core onto their planned nodes), so that the core's enforcement (placeholders)
// holds their room too. A Placement that leaves its pods to another scheduler does not implement
// it: placeholders on its planned nodes would keep its own pods out.
type placedLikeGang interface{ placedLikeGang() }

// reservation is w's reservation for its current run, as Admit reads it.
func (s *Scheduler) reservation(w scheduler.Workload) (Reservation, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.reservationLocked(w)
	return r, ok && r.SubmissionID == w.Run
}

// Planned lists the nodes r plans executors on, sorted.
func (r Reservation) Planned() []string {
	return slices.Sorted(maps.Keys(r.Executors))
}

// PodsPlacedElsewhere are the pod settings of a run whose pods another scheduler places, within
// what the admission planned: gang's as advisory enforcement has them (the driver on its
// planned node, the queue label), the executors not gated but confined to the nodes planned for
// them (and each, by the webhook, to its own slot as it is created: variant.PlacePod), with the
// other scheduler's own settings (own: its scheduler name, labels and annotations) added.
func (r Reservation) PodsPlacedElsewhere(own sparkpod.RoleScheduling) sparkpod.RoleScheduling {
	pods := r.Pods(EnforcementAdvisory)
	pods.Executor.SchedulingGates = nil
	pods.Executor.NodeNames = r.Planned()
	for _, p := range []struct{ to, from *sparkpod.Scheduling }{{&pods.Driver, &own.Driver}, {&pods.Executor, &own.Executor}} {
		if p.from.SchedulerName != "" {
			p.to.SchedulerName = p.from.SchedulerName
		}
		if p.from.PriorityClassName != "" {
			p.to.PriorityClassName = p.from.PriorityClassName
		}
		p.to.Labels = mergeMaps(p.to.Labels, p.from.Labels)
		p.to.Annotations = mergeMaps(p.to.Annotations, p.from.Annotations)
		p.to.SchedulingGroup = p.from.SchedulingGroup
	}
	return pods
}

// mergeMaps is a copy of a with b's entries set over it; nil when both are empty.
func mergeMaps(a, b map[string]string) map[string]string {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

// ForeignPlacement is implemented by a Placement that puts the core's whole-gang admission in
// front of another batch scheduler (Volcano, YuniKorn, coscheduling), whose own mechanism
// cannot hold a Spark gang whose executors do not exist yet: the core admits a run only when
// its whole gang fits the nodes, node by node, keeps that room until its pods are bound, and
// the other scheduler places the pods there (PodsPlacedElsewhere).
//
// Its applications' batchSchedulerOptions.queue names the other scheduler's queue, which that
// scheduler keeps: the core admits them in its default queue (the nodes' fit; no quota unless
// the default queue has one), or, where the Placement tells that queue's limits
// (ForeignQueueLimits), in a queue of the core standing for it, with those limits as quota;
// they are not queued by the core as Kueue would see it
// (scheduler.Queueing), and the Placement validates them (scheduler.ApplicationValidator)
// instead of the core. Check is the integration's own verdict, asked before the core's.
type ForeignPlacement interface {
	Placement
	scheduler.ApplicationValidator
	// Check holds or rejects w for a reason of the integration's own (its CRDs missing, its
	// queue missing), as a Decision with ok false; ok true leaves the decision to the core.
	Check(ctx context.Context, w scheduler.Workload) (d scheduler.Decision, ok bool, err error)
}

// variant is the core serving one Placement's name.
type variant struct {
	core      *Scheduler
	placement Placement
}

var (
	_ scheduler.Interface            = (*variant)(nil)
	_ scheduler.WithManager          = (*variant)(nil)
	_ scheduler.Waking               = (*variant)(nil)
	_ scheduler.Queueing             = (*variant)(nil)
	_ scheduler.Pending              = (*variant)(nil)
	_ scheduler.ApplicationValidator = (*variant)(nil)
	_ scheduler.PodPlacer            = (*variant)(nil)
	_ scheduler.ObjectsForRun        = (*variantWithObjects)(nil)
)

func (v *variant) Name() string { return v.placement.Name() }

// Admit is the core's decision, with the variant's pod settings on an admission.
func (v *variant) Admit(ctx context.Context, w scheduler.Workload) (scheduler.Decision, error) {
	if f, ok := v.placement.(ForeignPlacement); ok {
		if d, ok, err := f.Check(ctx, w); err != nil || !ok {
			return d, err
		}
	}
	d, err := v.core.Admit(ctx, w)
	if err != nil || !d.Admit {
		return d, err
	}
	r, ok := v.core.reservation(w)
	if !ok {
		return scheduler.Decision{}, fmt.Errorf("%s: admitted without a reservation", w.Key)
	}
	pods, err := v.placement.Pods(w, r)
	if err != nil {
		return scheduler.Decision{}, fmt.Errorf("batch scheduler %s: pod settings of %s: %w", v.Name(), w.Key, err)
	}
	d.Pods = pods
	return d, nil
}

// Release frees the core's reservation, and what the Placement holds if it holds anything
// (PlacementRelease).
func (v *variant) Release(ctx context.Context, w scheduler.Workload) error {
	if p, ok := v.placement.(PlacementRelease); ok {
		if err := p.Release(ctx, w); err != nil {
			return err
		}
	}
	return v.core.Release(ctx, w)
}

// PlacementRelease is implemented by a Placement that holds something of its own for a run
// (another scheduler's PodGroup): Release frees it as the run ends (scheduler.Interface.Release).
type PlacementRelease interface {
	Release(ctx context.Context, w scheduler.Workload) error
}

// SetupWithManager sets the core up, once, whichever of its names the registry asks first.
func (v *variant) SetupWithManager(mgr manager.Manager, wake scheduler.Waker) error {
	return v.core.SetupWithManager(mgr, wake)
}

func (v *variant) WakesHeldWorkloads() bool { return true }

// QueuesWorkloads: a variant's applications wait in the core's queues, unless their queue is
// another scheduler's (ForeignPlacement): the core then only checks the nodes' fit.
func (v *variant) QueuesWorkloads() bool {
	_, foreign := v.placement.(ForeignPlacement)
	return !foreign
}

func (v *variant) PendingReason() string { return v.core.PendingReason() }

func (v *variant) ValidateApplication(ctx context.Context, app *v1beta2.SparkApplication) field.ErrorList {
	if f, ok := v.placement.(ForeignPlacement); ok {
		return f.ValidateApplication(ctx, app)
	}
	return v.core.ValidateApplication(ctx, app)
}

// PlacePod places a pod being created of an application naming the variant: first as its
// Placement places pods, if it does (scheduler.PodPlacer: filling in what the submitter set,
// say); then, for an executor, by confining it to its planned node, as the core gives a gated
// executor its node (PlacePod), without a gate: the executor is left to kube-scheduler, on
// that node only. An executor the plan has no slot for keeps the template's placement.
func (v *variant) PlacePod(pod *corev1.Pod, owner client.Object) bool {
	app, ok := owner.(*v1beta2.SparkApplication)
	if !ok || v.core.schedulerOf(app) != v.Name() {
		return false
	}
	placed := false
	if p, ok := v.placement.(PlacementPods); ok {
		if res, ok := v.core.reservationForPod(owner); ok {
			placed = p.PlacePod(pod, owner, res)
		}
	}
	return v.placeOnSlot(pod, owner) || placed
}

// placeOnSlot confines an ungated executor to its planned slot's node.
func (v *variant) placeOnSlot(pod *corev1.Pod, owner client.Object) bool {
	if release.Gated(pod) || pod.Annotations[AnnotationNode] != "" {
		return false
	}
	res, ok := v.core.reservationForPod(owner)
	if !ok {
		return false
	}
	node, ok := plannedSlotOf(pod, owner, res, snapshotOptions{ReservationTimeout: v.core.cfg.ReservationTimeout, Now: v.core.cfg.Clock.Now()})
	if !ok {
		return false
	}
	sparkpod.RequireNodes(&pod.Spec, node)
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[AnnotationNode] = node
	placedAtCreationTotal.Inc()
	return true
}

// PlacementObjects is implemented by a Placement whose runs need objects of their own before
// their pods exist (a Workload, PodGroups): the variant is then a scheduler.ObjectsForRun,
// giving it the run's reservation.
type PlacementObjects interface {
	RunObjects(ctx context.Context, w scheduler.Workload, r Reservation) ([]client.Object, error)
}

// PlacementPods is implemented by a Placement that fills in, as a pod of an admitted run is
// created, what its submitter may have left out (the variant's scheduler.PodPlacer), given the
// run's reservation as the webhook reads it.
type PlacementPods interface {
	PlacePod(pod *corev1.Pod, owner client.Object, r Reservation) bool
}

type variantWithObjects struct {
	*variant
	objects PlacementObjects
}

func (v *variantWithObjects) RunObjects(ctx context.Context, w scheduler.Workload, _ scheduler.Decision) ([]client.Object, error) {
	r, ok := v.core.reservation(w)
	if !ok {
		return nil, fmt.Errorf("%s has no reservation for run %s", w.Key, w.Run)
	}
	return v.objects.RunObjects(ctx, w, r)
}
