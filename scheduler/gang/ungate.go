/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/scheduler/gang/placeholder"
	"github.com/sparkop/spark-operator/sparkpod"
)

// Ungating: letting gated executors go, each confined to the node chosen for it.
//
// Gated executors are let go off the decision cycle. A cycle waits for the reservations it
// stores and the queue status it writes; a new executor must not wait for those, or its driver
// runs without it. So the ungating loop runs as soon as the cluster cache shows a gated
// executor that is not being ungated yet, gives it its planned slot (executorsToUngate), and
// sends the ungating patch without waiting for it; executors beyond the plan are still ungated
// by the cycle, which decides them (Outcome.Ungated). Both go through ungating, which keeps
// what is being ungated so that neither lets an executor go twice nor gives its slot away.
// (Not to be confused with Release, which frees a workload's reservation when its run ends.)

// ungateCalls bounds the API calls ungating executors in flight.
const ungateCalls = 32

// indexGated indexes the cluster cache's pods that carry the gang gate ("true").
const indexGated = "gang.gated"

// ungating holds the executors being let go, by pod: the node each was given ("" for none),
// from the moment it is chosen until the cluster cache shows it ungated.
type ungating struct {
	mu    sync.Mutex
	pods  map[types.NamespacedName]ungateState
	calls chan struct{}
}

type ungateState struct {
	node string
	done bool // the gate is removed; the cache may not show it yet
}

func newUngating() ungating {
	return ungating{pods: map[types.NamespacedName]ungateState{}, calls: make(chan struct{}, ungateCalls)}
}

// forget drops the ungatings that pods, as the cache holds them, show done: the pod ungated,
// or gone once its patch was sent.
func (r *ungating) forget(pods []corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.pods) == 0 {
		return
	}
	seen := make(map[types.NamespacedName]bool, len(r.pods))
	for i := range pods {
		key := client.ObjectKeyFromObject(&pods[i])
		if _, ok := r.pods[key]; !ok {
			continue
		}
		seen[key] = true
		if !hasGate(&pods[i]) {
			delete(r.pods, key)
		}
	}
	for key, st := range r.pods {
		if st.done && !seen[key] {
			delete(r.pods, key)
		}
	}
}

// overlayLocked shows the executors being ungated as ungated on the cached pods that still
// show them gated. The caller holds r.mu.
func (r *ungating) overlayLocked(pods []corev1.Pod) {
	for i := range pods {
		p := &pods[i]
		st, ok := r.pods[client.ObjectKeyFromObject(p)]
		if !ok || !hasGate(p) {
			continue
		}
		p.Spec.SchedulingGates = nil
		if st.node != "" {
			p.Annotations = map[string]string{AnnotationNode: st.node}
		}
	}
}

func (r *ungating) overlay(pods []corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.overlayLocked(pods)
}

// inFlight is how many ungatings have not completed: their API calls wait their turn or run.
func (r *ungating) inFlight() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, st := range r.pods {
		if !st.done {
			n++
		}
	}
	return n
}

// anyNew reports whether some of the gated pods is not being ungated.
func (r *ungating) anyNew(gated []corev1.Pod) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range gated {
		if _, ok := r.pods[client.ObjectKeyFromObject(&gated[i])]; !ok {
			return true
		}
	}
	return false
}

// ungateExecutors lets go the gated executors of w that executorsToUngate chooses, with o
// saying which reservations still keep their planned nodes and beyondPlan the nodes a cycle
// released executors beyond their plans to (nil outside a cycle).
// Choosing is atomic with what is being ungated already, seen over w; the API calls run side
// by side and are not waited for. A call that fails is forgotten, and a cycle and the ungating
// loop asked for shortly, which choose again.
func (s *Scheduler) ungateExecutors(ctx context.Context, w world, o snapshotOptions, beyondPlan map[core.Key][]string) {
	r := &s.ungating
	r.mu.Lock()
	r.overlayLocked(w.Pods)
	// Drivers are gated only with placeholders (Reservation.Pods), or were by an operator that
	// ran with them before a restart: let go, without a swap, whatever the enforcement now.
	chosen := append(executorsToUngate(w, beyondPlan, o), driversToUngate(w)...)
	placeholders := existingPlaceholders(w)
	chosen, missing := s.takeGroups(chosen, placeholders, s.cfg.Clock.Now())
	for _, rel := range chosen {
		r.pods[rel.pod] = ungateState{node: rel.node}
	}
	r.mu.Unlock()
	if len(chosen) == 0 {
		return
	}
	cached := make(map[types.NamespacedName]*corev1.Pod, len(chosen))
	for _, rel := range chosen {
		cached[rel.pod] = nil
	}
	for i := range w.Pods {
		if key := client.ObjectKeyFromObject(&w.Pods[i]); cached[key] == nil {
			if _, ok := cached[key]; ok {
				cached[key] = &w.Pods[i]
			}
		}
	}
	chosenAt := time.Now()
	// With placeholders, the members taking placeholders' places on one node swap together
	// (swapOnto): each is nominated there while its placeholder still stands, which
	// kube-scheduler counts twice until the placeholder goes, and would find a sibling let go
	// meanwhile short of room.
	swaps := map[string][]pendingSwap{}
	finish := func(rel toUngate, err error) {
		if err == nil {
			err = s.ungate(ctx, cached[rel.pod], rel.node)
		}
		ungateCallSeconds.Observe(time.Since(chosenAt).Seconds())
		r.mu.Lock()
		if err != nil {
			delete(r.pods, rel.pod)
		} else {
			r.pods[rel.pod] = ungateState{node: rel.node, done: true}
		}
		r.mu.Unlock()
		if err != nil {
			log.FromContext(ctx).Error(err, "releasing a gated executor failed; retrying")
			time.AfterFunc(time.Second, func() { s.trigger(); s.triggerUngate() })
		}
	}
	for _, rel := range chosen {
		if p := cached[rel.pod]; p != nil && !p.CreationTimestamp.IsZero() {
			ungateWaitSeconds.Observe(chosenAt.Sub(p.CreationTimestamp.Time).Seconds())
		}
		if _, has := placeholders[rel.placeholder]; s.swaps(rel, has) {
			// From now on the swap alone deletes the placeholder, after the nomination: a
			// cycle that sees the member given must not delete it first.
			s.placeholders.Note(placeholder.Swapped, rel.placeholder)
			swaps[rel.node] = append(swaps[rel.node], pendingSwap{rel: rel, finish: finish})
			continue
		}
		go func() {
			r.calls <- struct{}{}
			defer func() { <-r.calls }()
			finish(rel, nil)
		}()
	}
	for node, group := range swaps {
		go func() { s.swapOnto(ctx, node, s.withStandIns(ctx, group, missing[node])) }()
	}
}

// pendingSwap is a member waiting to take its placeholder's place, with what lets it go once
// the placeholder is gone (or says why it could not be).
type pendingSwap struct {
	rel    toUngate
	finish func(toUngate, error)
}

// swapOnto swaps group onto node: its members make room (makeRoom) and are let go. One swap
// at a time lets members go onto a node, and awaits them bound before the next: a member let
// go and not bound yet would be found short of room by the nominations of a later swap beside
// its standing placeholders. Members that arrive while a swap makes room join it (they make
// room beside it, and are let go with it); those that arrive while it lets its members go wait
// for the next swap, all together. So executors created one by one onto one node are let go
// in a few batches, not one swap after another.
func (s *Scheduler) swapOnto(ctx context.Context, node string, group []pendingSwap) {
	st, off, turn := s.placeholders.QueueSwaps(node, group)
	if turn == placeholder.SwapWait {
		return
	}
	s.placeholders.DoneMaking(st, off, s.makeRoom(ctx, rels(group), s.ungating.calls))
	if turn == placeholder.SwapJoin {
		return
	}
	for st != nil {
		members, errs := s.placeholders.LetGo(st)
		var wg sync.WaitGroup
		for i, p := range members {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.ungating.calls <- struct{}{}
				defer func() { <-s.ungating.calls }()
				p.finish(p.rel, errs[i])
			}()
		}
		wg.Wait()
		s.awaitBound(ctx, rels(members), errs)
		if st, group = s.placeholders.NextSwap(node, st); st != nil {
			s.placeholders.DoneMaking(st, 0, s.makeRoom(ctx, rels(group), s.ungating.calls))
		}
	}
}

// rels are the members of group.
func rels(group []pendingSwap) []toUngate {
	out := make([]toUngate, len(group))
	for i := range group {
		out[i] = group[i].rel
	}
	return out
}

// ungateLoop runs the ungating loop until ctx ends: whenever a gated executor appears or
// changes, and after every cycle.
func (l *loop) ungateLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.s.ungateKick:
		}
		if err := l.s.ungateNew(ctx); err != nil {
			log.FromContext(ctx).Error(err, "releasing gated executors failed; retrying")
			time.AfterFunc(time.Second, l.s.triggerUngate)
		}
	}
}

// ungateNew lets go the gated executors that have a planned slot and are not being released
// yet; it reads nothing more unless there are some.
func (s *Scheduler) ungateNew(ctx context.Context) error {
	var gated corev1.PodList
	if err := s.cluster.List(ctx, &gated, client.MatchingFields{indexGated: "true"}); err != nil {
		return fmt.Errorf("listing gated executors: %w", err)
	}
	if !s.ungating.anyNew(gated.Items) {
		return nil
	}
	w, err := s.read(ctx)
	if err != nil {
		return err
	}
	s.ungating.forget(w.Pods)
	s.ungateExecutors(ctx, w, s.readingAt(s.cfg.Clock.Now()), nil)
	return nil
}

// triggerUngate asks the ungating loop to run; requests made while a run is pending are
// merged into it.
func (s *Scheduler) triggerUngate() {
	select {
	case s.ungateKick <- struct{}{}:
	default:
	}
}

// ungate removes the gang gate from cached, an executor as the cluster cache holds it, first
// confining it to node when one is given. One JSON patch does it, which applies only if the
// gates, affinity and annotations it changes are still those the cache showed; otherwise (the
// cache lagged) the pod is read from the API server and updated.
func (s *Scheduler) ungate(ctx context.Context, cached *corev1.Pod, node string) error {
	key := client.ObjectKeyFromObject(cached)
	patch, err := ungatePatch(cached, node)
	if err == nil {
		err = s.client.Patch(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}},
			client.RawPatch(types.JSONPatchType, patch))
	}
	if err == nil || apierrors.IsNotFound(err) {
		return nil
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := s.api.Get(ctx, key, pod); err != nil {
			return err
		}
		if !ungated(pod, node) {
			return nil
		}
		return s.client.Update(ctx, pod)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing executor %s to node %q: %w", key, node, err)
	}
	return nil
}

// ungated removes the gang gate from pod, narrowing it to node when one is given and
// recording the node; false when pod has no gang gate.
func ungated(pod *corev1.Pod, node string) bool {
	i := slices.IndexFunc(pod.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == GateExecutor })
	if i < 0 {
		return false
	}
	pod.Spec.SchedulingGates = slices.Delete(pod.Spec.SchedulingGates, i, i+1)
	if node != "" {
		// One node: every required term gains a requirement, the only change Kubernetes allows
		// to a gated pod's affinity.
		sparkpod.RequireNodes(&pod.Spec, node)
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[AnnotationNode] = node
	}
	return true
}

// ungatePatch is the JSON patch that makes of cached what ungated does, guarded by tests that
// the fields it replaces still hold what cached shows (null for a field cached lacks, which
// the API server's JSON patch takes to hold where the field is absent).
func ungatePatch(cached *corev1.Pod, node string) ([]byte, error) {
	if cached == nil {
		return nil, fmt.Errorf("no cached pod")
	}
	next := cached.DeepCopy()
	if !ungated(next, node) {
		return nil, fmt.Errorf("pod %s/%s has no gang gate", cached.Namespace, cached.Name)
	}
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value,omitempty"`
	}
	ops := []op{{Op: "test", Path: "/spec/schedulingGates", Value: cached.Spec.SchedulingGates}}
	if len(next.Spec.SchedulingGates) == 0 {
		ops = append(ops, op{Op: "remove", Path: "/spec/schedulingGates"})
	} else {
		ops = append(ops, op{Op: "replace", Path: "/spec/schedulingGates", Value: next.Spec.SchedulingGates})
	}
	if node != "" {
		ops = append(ops,
			op{Op: "test", Path: "/spec/affinity", Value: cached.Spec.Affinity},
			op{Op: "add", Path: "/spec/affinity", Value: next.Spec.Affinity},
			op{Op: "test", Path: "/metadata/annotations", Value: cached.Annotations},
			op{Op: "add", Path: "/metadata/annotations", Value: next.Annotations})
	}
	return json.Marshal(ops)
}
