/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package release

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/scheduler/reservation"
)

// Tracker holds the pods being released, by pod: the node each was given ("" for none),
// from the moment it is chosen (Choose) until the cluster cache shows it released (Forget).
// Its zero value is ready to use; it is safe for concurrent use.
type Tracker struct {
	mu   sync.Mutex
	pods map[types.NamespacedName]state
}

type state struct {
	node string
	done bool // the gate is removed; the cache may not show it yet
}

// Forget drops the releases that pods, as the cache holds them, show done: the pod released,
// or gone once its patch was sent.
func (r *Tracker) Forget(pods []corev1.Pod) {
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
		if !Gated(&pods[i]) {
			delete(r.pods, key)
		}
	}
	for key, st := range r.pods {
		if st.done && !seen[key] {
			delete(r.pods, key)
		}
	}
}

// overlayLocked shows the pods being released as released on the cached pods that still
// show them gated. The caller holds r.mu.
func (r *Tracker) overlayLocked(pods []corev1.Pod) {
	for i := range pods {
		p := &pods[i]
		st, ok := r.pods[client.ObjectKeyFromObject(p)]
		if !ok || !Gated(p) {
			continue
		}
		p.Spec.SchedulingGates = nil
		if st.node != "" {
			p.Annotations = map[string]string{reservation.AnnotationNode: st.node}
		}
	}
}

// Overlay shows the pods being released as released on the cached pods that still show
// them gated.
func (r *Tracker) Overlay(pods []corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.overlayLocked(pods)
}

// InFlight is how many releases have not completed: their API calls wait their turn or run.
func (r *Tracker) InFlight() int {
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

// AnyNew reports whether some of the gated pods is not being released.
func (r *Tracker) AnyNew(gated []corev1.Pod) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range gated {
		if _, ok := r.pods[client.ObjectKeyFromObject(&gated[i])]; !ok {
			return true
		}
	}
	return false
}

// Choose runs choose atomically with the releases in flight: pods, as the cache holds them,
// first show those being released as released (Overlay), and choose records each pod it
// chooses by start, with the node the pod is given ("" for none). No two calls choose one pod.
func (r *Tracker) Choose(pods []corev1.Pod, choose func(start func(pod types.NamespacedName, node string))) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.overlayLocked(pods)
	r.init()
	choose(func(pod types.NamespacedName, node string) { r.pods[pod] = state{node: node} })
}

// Done records the end of the release of pod onto node: done (the cache may not show it
// yet), or, when it failed (err), forgotten, so that it is chosen again.
func (r *Tracker) Done(pod types.NamespacedName, node string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		delete(r.pods, pod)
	} else {
		r.init()
		r.pods[pod] = state{node: node, done: true}
	}
}

// init makes r.pods, once. The caller holds r.mu.
func (r *Tracker) init() {
	if r.pods == nil {
		r.pods = map[types.NamespacedName]state{}
	}
}
