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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Gated executors are let go off the decision cycle. A cycle waits for the reservations it
// stores and the queue status it writes; a new executor must not wait for those, or its driver
// runs without it. So the release loop runs as soon as the cluster cache shows a gated
// executor that is not being released yet, gives it its planned slot (executorReleases), and
// sends the release without waiting for it; executors beyond the plan are still released by
// the cycle, which decides them (Outcome.Released). Both go through releases, which keeps
// what is being released so that neither lets an executor go twice nor gives its slot away.

// releaseCalls bounds the API calls releasing executors in flight.
const releaseCalls = 32

// indexGated indexes the cluster cache's pods that carry the gang gate ("true").
const indexGated = "gang.gated"

// releases are the executors being let go, by pod: the node each was given ("" for none),
// from the moment it is chosen until the cluster cache shows it ungated.
type releases struct {
	mu    sync.Mutex
	pods  map[types.NamespacedName]releaseState
	calls chan struct{}
}

type releaseState struct {
	node string
	done bool // the gate is removed; the cache may not show it yet
}

func newReleases() releases {
	return releases{pods: map[types.NamespacedName]releaseState{}, calls: make(chan struct{}, releaseCalls)}
}

// forget drops the releases that pods, as the cache holds them, show done: the pod ungated,
// or gone once its release was sent.
func (r *releases) forget(pods []corev1.Pod) {
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

// overlayLocked shows the executors being released as released on the cached pods that still
// show them gated. The caller holds r.mu.
func (r *releases) overlayLocked(pods []corev1.Pod) {
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

func (r *releases) overlay(pods []corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.overlayLocked(pods)
}

// inFlight is how many releases have not completed: their API calls wait their turn or run.
func (r *releases) inFlight() int {
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

// anyNew reports whether some of the gated pods is not being released.
func (r *releases) anyNew(gated []corev1.Pod) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range gated {
		if _, ok := r.pods[client.ObjectKeyFromObject(&gated[i])]; !ok {
			return true
		}
	}
	return false
}

// releaseExecutors lets go the gated executors of w that executorReleases chooses, with o
// saying which reservations still keep their planned nodes and beyondPlan the nodes a cycle
// released executors beyond their plans to (nil outside a cycle).
// Choosing is atomic with what is being released already, seen over w; the API calls run side
// by side and are not waited for. A call that fails is forgotten, and a cycle and the release
// loop asked for shortly, which choose again.
func (s *Scheduler) releaseExecutors(ctx context.Context, w world, o snapshotOptions, beyondPlan map[Key][]string) {
	r := &s.releases
	r.mu.Lock()
	r.overlayLocked(w.Pods)
	chosen := executorReleases(w, beyondPlan, o)
	for _, rel := range chosen {
		r.pods[rel.pod] = releaseState{node: rel.node}
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
	for _, rel := range chosen {
		if p := cached[rel.pod]; p != nil && !p.CreationTimestamp.IsZero() {
			releaseWaitSeconds.Observe(chosenAt.Sub(p.CreationTimestamp.Time).Seconds())
		}
		go func() {
			r.calls <- struct{}{}
			err := s.ungate(ctx, cached[rel.pod], rel.node)
			<-r.calls
			releaseCallSeconds.Observe(time.Since(chosenAt).Seconds())
			r.mu.Lock()
			if err != nil {
				delete(r.pods, rel.pod)
			} else {
				r.pods[rel.pod] = releaseState{node: rel.node, done: true}
			}
			r.mu.Unlock()
			if err != nil {
				log.FromContext(ctx).Error(err, "releasing a gated executor failed; retrying")
				time.AfterFunc(time.Second, func() { s.trigger(); s.triggerRelease() })
			}
		}()
	}
}

// releaseLoop runs the release loop until ctx ends: whenever a gated executor appears or
// changes, and after every cycle.
func (l *loop) releaseLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.s.releaseKick:
		}
		if err := l.s.releaseNew(ctx); err != nil {
			log.FromContext(ctx).Error(err, "releasing gated executors failed; retrying")
			time.AfterFunc(time.Second, l.s.triggerRelease)
		}
	}
}

// releaseNew lets go the gated executors that have a planned slot and are not being released
// yet; it reads nothing more unless there are some.
func (s *Scheduler) releaseNew(ctx context.Context) error {
	var gated corev1.PodList
	if err := s.cluster.List(ctx, &gated, client.MatchingFields{indexGated: "true"}); err != nil {
		return fmt.Errorf("listing gated executors: %w", err)
	}
	if !s.releases.anyNew(gated.Items) {
		return nil
	}
	w, err := s.read(ctx)
	if err != nil {
		return err
	}
	s.releases.forget(w.Pods)
	s.releaseExecutors(ctx, w, s.readingAt(s.cfg.Clock.Now()), nil)
	return nil
}

// triggerRelease asks the release loop to run; requests made while a run is pending are
// merged into it.
func (s *Scheduler) triggerRelease() {
	select {
	case s.releaseKick <- struct{}{}:
	default:
	}
}
