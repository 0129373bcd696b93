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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/scheduler/gang/placeholder"
	"github.com/sparkop/spark-operator/scheduler/gang/release"
)

// swaps reports whether rel, a gated member about to be let go, takes a placeholder's place
// first (see the top of placeholders.go): with placeholders, onto its planned node, when its
// placeholder exists (hasPlaceholder: in the cluster cache) or was just created. Without a
// placeholder (none was wanted, or the reservation no longer keeps nodes) it is simply let go.
func (s *Scheduler) swaps(rel toUngate, hasPlaceholder bool) bool {
	if s.cfg.Enforcement != EnforcementPlaceholders || rel.placeholder.Name == "" || rel.node == "" {
		return false
	}
	return hasPlaceholder || s.placeholders.Has(placeholder.Created, rel.placeholder)
}

// makeRoom makes room for the members of group, to be let go onto one node, in their
// placeholders' places: each nominated to the node, then its placeholder deleted, and it
// returns once this process's watch shows their placeholders gone, with what failed for each
// member (aligned with group). The caller then removes the gates: none of the members of a
// swap is let go while a placeholder of another still stands and is counted with that
// member's nomination. Members sharing a placeholder (a node group's) are all nominated before
// it goes; should one nomination fail, it stays, and so do they all, to be tried again.
func (s *Scheduler) makeRoom(ctx context.Context, group []toUngate, calls chan struct{}) []error {
	errs := make([]error, len(group))
	call := func(f func() error) error {
		calls <- struct{}{}
		defer func() { <-calls }()
		return f()
	}
	sharing := map[types.NamespacedName][]int{}
	for i, rel := range group {
		sharing[rel.placeholder] = append(sharing[rel.placeholder], i)
	}
	var wg sync.WaitGroup
	for ph, members := range sharing {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var nominated sync.WaitGroup
			for _, i := range members {
				nominated.Add(1)
				go func() {
					defer nominated.Done()
					errs[i] = call(func() error { return s.nominate(ctx, group[i]) })
				}()
			}
			nominated.Wait()
			var failed error
			for _, i := range members {
				if errs[i] != nil {
					failed = errs[i]
				}
			}
			if failed == nil {
				if failed = call(func() error { return s.deletePlaceholder(ctx, ph) }); failed == nil {
					s.awaitGone(ctx, ph)
				}
			}
			if failed != nil {
				// Its members are tried again, in its place again.
				s.placeholders.Forget(placeholder.Swapped, ph)
				for _, i := range members {
					errs[i] = failed
				}
			}
		}()
	}
	wg.Wait()
	return errs
}

// nominate sets rel's status.nominatedNodeName to its node (a member gone needs no room).
func (s *Scheduler) nominate(ctx context.Context, rel toUngate) error {
	patch := []byte(fmt.Sprintf(`{"status":{"nominatedNodeName":%q}}`, rel.node))
	err := s.client.Status().Patch(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: rel.pod.Namespace, Name: rel.pod.Name}},
		client.RawPatch(types.MergePatchType, patch))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("nominating %s to node %s: %w", rel.pod, rel.node, err)
	}
	placeholderWritesTotal.WithLabelValues("nominate").Inc()
	s.placeholders.Note(placeholder.Swapped, rel.placeholder)
	return nil
}

// groupWait is how long the executors of a node group that arrived wait for the rest of the
// group before they take its placeholder's place without them. Spark creates a run's executors
// in batches a second apart (spark.kubernetes.allocation.batch.delay).
const groupWait = 2 * time.Second

// takeGroups decides, of the executors chosen to be let go, those whose room their node
// group's placeholder holds (they have none of their own: toUngate.shared): they take its place
// together, once all of the group is among them, or groupWait after the first of them was seen
// waiting (seen, not created: the cluster cache may show pods late), the group's missing
// members then given placeholders of their own, gated (missing, by node: made in the same
// swap, see the top of placeholders.go). Until then they wait, left out of the executors returned,
// and the ungating loop runs again when the wait is over. It runs within the ungating's
// Choose, under its lock, so no two passes take one group.
func (s *Scheduler) takeGroups(chosen []toUngate, placeholders map[types.NamespacedName]*corev1.Pod, now time.Time) ([]toUngate, map[string][]standIn) {
	if s.cfg.Enforcement != EnforcementPlaceholders {
		return chosen, nil
	}
	arrivals := map[*sharedSlots][]int{} // group → its members among chosen
	for i, rel := range chosen {
		if rel.shared == nil || placeholders[rel.placeholder] != nil || s.placeholders.Has(placeholder.Created, rel.placeholder) {
			continue
		}
		g := placeholders[rel.shared.placeholder]
		if g == nil || g.Labels[LabelRun] != rel.shared.res.SubmissionID || !g.DeletionTimestamp.IsZero() ||
			s.placeholders.Has(placeholder.Swapped, rel.shared.placeholder) {
			continue
		}
		arrivals[rel.shared] = append(arrivals[rel.shared], i)
	}
	if len(arrivals) == 0 {
		return chosen, nil
	}
	waiting := map[int]bool{}
	var missing map[string][]standIn
	var recheck time.Duration
	for shared, members := range arrivals {
		here := map[int]bool{}
		for _, i := range members {
			here[chosen[i].id] = true
		}
		first := s.placeholders.ArrivedAt(shared.placeholder, now)
		var absent []int
		for id := shared.group.Lo; id <= shared.group.Hi; id++ {
			if !here[id] {
				absent = append(absent, id)
			}
		}
		if left := groupWait - now.Sub(first); len(absent) > 0 && left > 0 {
			for _, i := range members {
				waiting[i] = true
			}
			if recheck == 0 || left < recheck {
				recheck = left
			}
			continue
		}
		s.placeholders.Note(placeholder.Swapped, shared.placeholder)
		for _, i := range members {
			chosen[i].placeholder = shared.placeholder
		}
		for _, id := range absent {
			p := executorPlaceholder(shared.key, shared.res, id, shared.group.Node).Pod(s.cfg.PlaceholderImage)
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: GatePlaceholder}}
			// So that a pass choosing the latecomer before the cache shows its placeholder
			// takes that placeholder's place, not the group's.
			s.placeholders.Note(placeholder.Created, client.ObjectKeyFromObject(p))
			if missing == nil {
				missing = map[string][]standIn{}
			}
			missing[shared.group.Node] = append(missing[shared.group.Node], standIn{pod: p, group: shared.placeholder})
		}
	}
	if recheck > 0 {
		time.AfterFunc(recheck, s.triggerUngate)
	}
	out := chosen[:0:0]
	for i, rel := range chosen {
		if !waiting[i] {
			out = append(out, rel)
		}
	}
	return out, missing
}

// standIn is the placeholder of a node group's member missing from its swap, and the group's.
type standIn struct {
	pod   *corev1.Pod
	group types.NamespacedName
}

// withStandIns makes the placeholders of the members of node groups missing from a swap onto
// one node (takeGroups), gated, and returns group with them added: each is nominated to the
// node beside the members, and let go once the group's placeholder is gone
// (releaseStandIn). A group one of whose placeholders could not be made is not swapped: its
// members fail, to be tried again.
func (s *Scheduler) withStandIns(ctx context.Context, group []pendingSwap, missing []standIn) []pendingSwap {
	if len(missing) == 0 {
		return group
	}
	failed := map[types.NamespacedName]error{} // group placeholder → why
	for _, m := range missing {
		if err := s.writePlaceholders(ctx, []*corev1.Pod{m.pod}, nil); err != nil {
			s.placeholders.Forget(placeholder.Created, client.ObjectKeyFromObject(m.pod))
			failed[m.group] = err
			continue
		}
		standInsTotal.Inc()
		key := client.ObjectKeyFromObject(m.pod)
		group = append(group, pendingSwap{rel: toUngate{pod: key, node: m.pod.Annotations[AnnotationNode], placeholder: m.group},
			finish: func(_ toUngate, err error) { s.releaseStandIn(ctx, key, err) }})
	}
	if len(failed) == 0 {
		return group
	}
	out := group[:0:0]
	for _, m := range group {
		if err, ok := failed[m.rel.placeholder]; ok {
			m.finish(m.rel, err)
			continue
		}
		out = append(out, m)
	}
	for g := range failed {
		s.placeholders.Forget(placeholder.Swapped, g)
	}
	return out
}

// releaseStandIn lets a missing member's placeholder go onto its node once the group's
// placeholder is gone. Should that fail, it stays gated, its room held by its nomination
// until its member takes its place. Made for a swap that failed (swapErr), it is deleted: the
// group's placeholder still stands, and its members try again.
func (s *Scheduler) releaseStandIn(ctx context.Context, key types.NamespacedName, swapErr error) {
	if swapErr != nil {
		logPlaceholderError(ctx, s.deletePlaceholder(ctx, key))
		return
	}
	err := s.client.Patch(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}},
		client.RawPatch(types.JSONPatchType, []byte(`[{"op":"remove","path":"/spec/schedulingGates"}]`)))
	if err != nil && !apierrors.IsNotFound(err) {
		logPlaceholderError(ctx, fmt.Errorf("releasing placeholder %s: %w", key, err))
	}
}

// awaitBound waits (at most swapSettle) until the cluster cache shows the members of group that
// were let go (no error) bound to a node.
func (s *Scheduler) awaitBound(ctx context.Context, group []toUngate, errs []error) {
	if s.cluster == nil {
		return
	}
	deadline := time.Now().Add(swapSettle)
	for i := 0; i < len(group) && time.Now().Before(deadline); {
		if errs[i] != nil {
			i++
			continue
		}
		p := &corev1.Pod{}
		err := s.cluster.Get(ctx, group[i].pod, p)
		if apierrors.IsNotFound(err) || p.Spec.NodeName != "" || ctx.Err() != nil {
			i++
			continue
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// swapSettle bounds how long a swap waits for the cluster cache to show the placeholder gone.
const swapSettle = 2 * time.Second

// awaitGone waits (at most swapSettle) until the cluster cache shows pod gone. kube-scheduler
// hears of pods through a watch like the cache's, and takes a deletion into its node
// accounting apart from its queue: a member let go before it counts the deletion is found
// short of room (its nomination then dropped) and tried again after a backoff. Letting it go
// once this process's own watch has delivered the deletion makes that rare.
func (s *Scheduler) awaitGone(ctx context.Context, pod types.NamespacedName) {
	if s.cluster == nil {
		return
	}
	deadline := time.Now().Add(swapSettle)
	for time.Now().Before(deadline) {
		err := s.cluster.Get(ctx, pod, &corev1.Pod{})
		if apierrors.IsNotFound(err) || ctx.Err() != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// driversToUngate lets go the gated drivers (a session's server too) of w, as executorsToUngate
// does executors: a driver of a live reservation's run onto its planned node, in its
// placeholder's place; any other unconfined (its template already names the node it was
// planned on, if any).
func driversToUngate(w world) []toUngate {
	reservations := map[core.Key]Reservation{}
	for i := range w.Workloads {
		if r, ok := w.Workloads[i].liveReservation(); ok {
			reservations[w.Workloads[i].Key] = r
		}
	}
	var out []toUngate
	for i := range w.Pods {
		p := &w.Pods[i]
		m, ok := memberOf(p)
		if !ok || m.role != v1beta2.SparkRoleDriver || !release.Gated(p) || !p.DeletionTimestamp.IsZero() {
			continue
		}
		key := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
		r, ok := reservations[m.app]
		if !ok || r.SubmissionID != m.submission {
			out = append(out, toUngate{pod: key})
			continue
		}
		out = append(out, toUngate{pod: key, node: r.Driver,
			placeholder: types.NamespacedName{Namespace: p.Namespace, Name: placeholder.Name(ReservationName(m.app), schedv1alpha1.MemberRoleDriver)}})
	}
	return out
}
