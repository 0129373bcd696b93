/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

// Enforcement: how reserved capacity is kept from pods the gang scheduler did not admit.
//
// Advisory: not at all. The gang scheduler counts its reservations when it admits, but
// kube-scheduler does not know them, and any other pod (a Deployment's, an application of
// another scheduler) can take the room planned for an admitted run's members.
//
// Placeholders (as YuniKorn's gang scheduling holds room): for each reserved member whose pod
// is not created yet, or is created and still gated, an ordinary pod of the same requests,
// pinned by a required node affinity to the member's planned node, owned by the reservation.
// kube-scheduler places it like any pod (its fit checks, quotas and admission apply) and then
// counts it as used capacity, so no other pod can take the room. A run's driver starts only
// once all its placeholders hold their nodes; a placeholder that cannot (its node taken before
// it got there) has its run planned again at once.
//
// The swap: a member's pod is created gated (GateExecutor; the driver too) and takes its
// placeholder's place in three writes: (1) its status.nominatedNodeName is set to the planned
// node, which kube-scheduler honours at once for a pod it knows, gated or not: it counts the
// pod's requests on that node against every pod of lower or equal priority; (2) the
// placeholder is deleted with no grace period, so it is gone at once; (3) the gate is removed
// (and the node affinity narrowed to the node, for an executor). Between (2) and (3) the room
// is held by the nomination, so kube-scheduler cannot give it to another pending pod of lower
// or equal priority; a pod of higher priority could take it, as it could preempt the member
// itself. Pod events reach kube-scheduler in the order they were written, so it knows the
// nomination before it sees the placeholder gone.
//
// Placeholders take the workload's priority: not a lower one (any pod of a higher priority
// preempts a lower one, so ordinary pods would evict them and take the room) nor a higher one
// (which would let Spark preempt what it could not as itself). They take it through a class of
// their own that never preempts (package placeholder's class.go).
//
// Placeholders are never counted twice: while their reservation keeps node capacity the
// reservation counts the member (snapshot skips its placeholders); once it stops (the run
// ended or was released, or the reservation timed out), they are deleted, and count as the
// pods they are until they are gone.
//
// A run's executors planned onto one node share one placeholder (nodeGroups): it holds the
// room of them all, and they take its place together, in one swap, once they all exist (Spark
// asks for its executors in batches moments apart). An executor of the group that is not there
// groupWait after the first one arrived does not hold the others back: the swap that lets them
// go gives each missing member a placeholder of its own first, created gated and nominated to
// the node beside the members, so the group's room stays held while its placeholder goes; the
// latecomer later takes its own placeholder's place, as above.
//
// Cost, per application of N initial executors on K nodes: K+1 placeholder creations and K+1
// deletions (each placeholder also bound, started and reported by kube-scheduler and the
// kubelet), and one nomination per member swapped in (up to N+1 status writes), on top of
// advisory's one ungating write per executor; a missing member costs a placeholder of its own.

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/scheduler/gang/placeholder"
	"github.com/sparkop/spark-operator/sparkpod"
)

// DefaultPlaceholderImage is the image placeholder pods run: it does nothing, at no cost.
const DefaultPlaceholderImage = "registry.k8s.io/pause:3.10"

// Labels of placeholder pods and their PriorityClasses: package placeholder's.
const (
	// LabelPlaceholder marks a placeholder pod; its value is its Reservation's name.
	LabelPlaceholder = placeholder.Label
	// LabelRun is the run (submission id) the placeholder holds room for.
	LabelRun = placeholder.LabelRun
	// LabelMember is the member of the reservation it holds room for: driver, executor-<id>.
	LabelMember = placeholder.LabelMember
	// LabelPlaceholderClass marks the PriorityClasses the operator created for placeholders.
	LabelPlaceholderClass = placeholder.LabelClass
)

var placeholderWritesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "spark_operator_gang_placeholder_writes_total",
	Help: "API writes the placeholders enforcement makes: placeholder pods created and deleted, members nominated to their node.",
}, []string{"verb"})

func init() { ctrlmetrics.Registry.MustRegister(placeholderWritesTotal) }

// GatePlaceholder holds back a placeholder created for a member of a node group that was not
// there when the others took the group's place, until the group's placeholder is gone.
const GatePlaceholder = "scheduling.sparkop.dev/placeholder"

// reconcilePlaceholders creates the placeholders w wants that do not exist and deletes those of
// its workloads it does not want (their member placed, their run over or planned again, their
// reservation timed out). Placeholders of workloads not in w (another operator's namespaces,
// or a workload deleted) are left to the garbage collector, which deletes them with their
// reservation.
func (s *Scheduler) reconcilePlaceholders(ctx context.Context, w world, o snapshotOptions) error {
	existing := existingPlaceholders(w)
	wanted := placeholdersOf(w, o, existing)
	s.placeholders.Sync(existing)
	room := podRoom(w)
	var missing []placeholder.Wanted
	for key, want := range wanted {
		if p := existing[key]; p != nil && p.Labels[LabelRun] == want.Owner.Run && p.DeletionTimestamp.IsZero() {
			continue
		}
		if existing[key] != nil || s.placeholders.Has(placeholder.Created, key) || s.placeholders.Has(placeholder.Swapped, key) {
			// An earlier run's, being deleted; created and not in the cache yet; or just
			// deleted for its member, which the cache may not show let go yet.
			continue
		}
		missing = append(missing, want)
	}
	sort.Slice(missing, func(i, j int) bool { return missing[i].Before(missing[j]) })
	var create []*corev1.Pod
	for _, want := range missing {
		// Only into room that is free by the pods there now, as kube-scheduler counts them:
		// where the pods of the applications a run preempted are ending, its placeholders wait
		// for them, so that kube-scheduler never preempts pods itself for a placeholder.
		need := want.Need()
		if !fits(room[want.Node], need) {
			continue
		}
		sparkpod.AddTimes(room[want.Node], need, -1)
		create = append(create, want.Pod(s.cfg.PlaceholderImage))
	}
	var remove []types.NamespacedName
	for key, p := range existing {
		if want, ok := wanted[key]; (ok && p.Labels[LabelRun] == want.Owner.Run) || !p.DeletionTimestamp.IsZero() ||
			s.placeholders.Has(placeholder.Deleted, key) || s.placeholders.Has(placeholder.Swapped, key) {
			continue
		}
		remove = append(remove, key)
	}
	return s.writePlaceholders(ctx, create, remove)
}

// podRoom is each node's allocatable minus what its pods request (terminating ones included,
// placeholders too, bound or on their way to their node), as kube-scheduler counts it.
func podRoom(w world) map[string]corev1.ResourceList {
	room := make(map[string]corev1.ResourceList, len(w.Nodes))
	for i := range w.Nodes {
		room[w.Nodes[i].Name] = w.Nodes[i].Status.Allocatable.DeepCopy()
	}
	for i := range w.Pods {
		p := &w.Pods[i]
		r, ok := room[placedOn(p)]
		if !ok || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		sparkpod.AddTimes(r, requestsOf(p), -1)
	}
	return room
}

// fits reports whether need fits room, by the resources room lists (a node that is not known
// has room: kube-scheduler judges it).
func fits(room, need corev1.ResourceList) bool {
	if room == nil {
		return true
	}
	for name, q := range need {
		if free, ok := room[name]; ok && free.Cmp(q) < 0 {
			return false
		}
	}
	return true
}

// sharedRoom is podRoom shared by the reservations a cycle stores side by side.
type sharedRoom struct {
	mu   sync.Mutex
	room map[string]corev1.ResourceList
}

// take takes need on node if it fits there.
func (r *sharedRoom) take(node string, need corev1.ResourceList) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !fits(r.room[node], need) {
		return false
	}
	if n := r.room[node]; n != nil {
		sparkpod.AddTimes(n, need, -1)
	}
	return true
}

// createPlaceholders creates the placeholders of a reservation just stored, nothing of whose run
// exists yet: every member's that fits room now, driver first (reconcilePlaceholders creates
// the others once there is room).
func (s *Scheduler) createPlaceholders(ctx context.Context, key core.Key, r Reservation, room *sharedRoom) error {
	if s.cfg.Enforcement != EnforcementPlaceholders || room == nil {
		return nil
	}
	wanted := []placeholder.Wanted{driverPlaceholder(key, r)}
	for _, g := range nodeGroups(r) {
		wanted = append(wanted, groupPlaceholder(key, r, g))
	}
	var pods []*corev1.Pod
	for _, want := range wanted {
		if room.take(want.Node, want.Need()) {
			pods = append(pods, want.Pod(s.cfg.PlaceholderImage))
		}
	}
	return s.writePlaceholders(ctx, pods, nil)
}

// writePlaceholders creates and deletes placeholders, side by side.
func (s *Scheduler) writePlaceholders(ctx context.Context, create []*corev1.Pod, remove []types.NamespacedName) error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	calls := make(chan struct{}, storeCalls)
	run := func(f func() error) {
		wg.Add(1)
		calls <- struct{}{}
		go func() {
			defer func() { <-calls; wg.Done() }()
			if err := f(); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	classes := map[string]string{}
	for _, p := range create {
		if s.cluster != nil {
			class, ok := classes[p.Spec.PriorityClassName]
			if !ok {
				class = s.placeholders.Classes.Of(ctx, s.cluster, s.client, p.Spec.PriorityClassName)
				classes[p.Spec.PriorityClassName] = class
			}
			p.Spec.PriorityClassName = class
		}
		run(func() error {
			err := s.client.Create(ctx, p)
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("creating placeholder %s/%s: %w", p.Namespace, p.Name, err)
			}
			placeholderWritesTotal.WithLabelValues("create").Inc()
			s.placeholders.Note(placeholder.Created, client.ObjectKeyFromObject(p))
			return nil
		})
	}
	for _, key := range remove {
		run(func() error { return s.deletePlaceholder(ctx, key) })
	}
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("placeholders: %w (and %d more)", errs[0], len(errs)-1)
	}
	return nil
}

// deletePlaceholder deletes a placeholder with no grace period: it is gone from the API server,
// and its room free, when the call returns.
func (s *Scheduler) deletePlaceholder(ctx context.Context, key types.NamespacedName) error {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	err := s.client.Delete(ctx, p, client.GracePeriodSeconds(0))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting placeholder %s: %w", key, err)
	}
	placeholderWritesTotal.WithLabelValues("delete").Inc()
	s.placeholders.Note(placeholder.Deleted, key)
	return nil
}

// liveHolding are the live reservations keeping node capacity, by Reservation, with their run:
// their placeholders count through them, not as pods.
func liveHolding(w world, o snapshotOptions) map[types.NamespacedName]string {
	out := map[types.NamespacedName]string{}
	for i := range w.Workloads {
		if r, ok := w.Workloads[i].liveReservation(); ok && r.keepsNodes(o) {
			out[types.NamespacedName{Namespace: w.Workloads[i].Key.Namespace, Name: ReservationName(w.Workloads[i].Key)}] = r.SubmissionID
		}
	}
	return out
}

// countedByReservation reports whether p is a placeholder its reservation counts (liveHolding).
func countedByReservation(p *corev1.Pod, holding map[types.NamespacedName]string) bool {
	if !placeholder.Is(p) {
		return false
	}
	run, ok := holding[types.NamespacedName{Namespace: p.Namespace, Name: p.Labels[LabelPlaceholder]}]
	return ok && run == p.Labels[LabelRun]
}

// placeholdersHold says, for each live reservation keeping nodes whose driver is not created,
// whether all its placeholders hold their nodes (bound there): "" when they do, else why not;
// taken lists those one of whose placeholders kube-scheduler found no room for.
//
// A placeholder kube-scheduler found no room for, on a node where pods are ending (those of the
// applications this run preempted, say), waits for them as a driver does (startgate.go): the
// room is on its way, not taken.
func placeholdersHold(w world, o snapshotOptions) (waiting map[core.Key]string, taken map[core.Key]string, recheck time.Duration) {
	waiting, taken = map[core.Key]string{}, map[core.Key]string{}
	existing := existingPlaceholders(w)
	wanted := placeholdersOf(w, o, existing)
	ending := map[string]bool{}
	for i := range w.Pods {
		if p := &w.Pods[i]; !p.DeletionTimestamp.IsZero() && placedOn(p) != "" {
			ending[placedOn(p)] = true
		}
	}
	for key, want := range wanted {
		p := existing[key]
		if p == nil || p.Labels[LabelRun] != want.Owner.Run || p.Spec.NodeName != want.Node {
			waiting[want.Key] = placeholderReason
		}
		if p == nil || p.Spec.NodeName != "" || ending[want.Node] {
			continue
		}
		if since, ok := placeholder.UnschedulableSince(p); ok {
			if left := placeholder.TakenAfter - o.Now.Sub(since); left > 0 {
				if recheck == 0 || left < recheck {
					recheck = left
				}
			} else {
				taken[want.Key] = want.Node
			}
		}
	}
	return waiting, taken, recheck
}

// placeholderReason is what a workload whose placeholders are not all on their nodes yet shows,
// should its status be written (it is not woken to show it: it lasts moments).
const placeholderReason = "admitted; starting once placeholders hold the room planned for it"

// takenReason is what a workload planned again because room planned for it was taken before it
// was held (by its placeholder, or by the pod scheduler with the plugin enforcement) shows.
func takenReason(node string) string {
	return fmt.Sprintf("planned again: the room planned on %s was taken by other pods before it was held", node)
}

// logPlaceholderError logs a placeholder write that failed; the next cycle tries again.
func logPlaceholderError(ctx context.Context, err error) {
	if err != nil {
		log.FromContext(ctx).Error(err, "placeholders could not all be written; retrying on the next cycle")
	}
}
