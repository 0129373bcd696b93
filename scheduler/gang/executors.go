/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// GateExecutor holds an admitted application's executors back from the kube-scheduler until
// the gang scheduler has chosen each one's node. All executors share one pod template, which
// can only name the set of planned nodes; left to itself the kube-scheduler would spread them
// over that set regardless of how many the plan put on each node, and take capacity planned
// for other applications. The gang scheduler gives each gated executor one planned node (by
// narrowing its node affinity, which Kubernetes allows on gated pods) and removes the gate.
const GateExecutor = "scheduling.sparkop.dev/gang"

// releaseWorkers bounds the executors released at once.
const releaseWorkers = 16

// AnnotationNode records the node the gang scheduler gave a gated executor.
const AnnotationNode = "scheduling.sparkop.dev/node"

// executorPods are one submission's executor pods, as the gang scheduler reads them.
type executorPods struct {
	gated []string         // waiting for the gang scheduler to give them a node, by name
	given map[string]int32 // node → pods given that node (any phase, not being deleted)
	live  map[string]int32 // node → executors alive there: released or bound, not ended
}

// executorsOf groups the executor pods of applications and sessions by submission.
func executorsOf(pods []corev1.Pod) map[boundMember]*executorPods {
	out := map[boundMember]*executorPods{}
	for i := range pods {
		p := &pods[i]
		m, ok := memberOf(p)
		if !ok || m.role != v1beta2.SparkRoleExecutor {
			continue
		}
		ep := out[m]
		if ep == nil {
			ep = &executorPods{given: map[string]int32{}, live: map[string]int32{}}
			out[m] = ep
		}
		if hasGate(p) {
			if p.DeletionTimestamp.IsZero() {
				ep.gated = append(ep.gated, p.Name)
			}
			continue
		}
		if n := p.Annotations[AnnotationNode]; n != "" && p.DeletionTimestamp.IsZero() {
			ep.given[n]++
		}
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			ep.live[placedOn(p)]++
		}
	}
	for _, ep := range out {
		sort.Strings(ep.gated)
	}
	return out
}

// placedOn is the node a pod takes capacity on: the one it is bound to, else the one the gang
// scheduler released it to ("" if neither, or if it is still gated).
func placedOn(p *corev1.Pod) string {
	if p.Spec.NodeName != "" || hasGate(p) {
		return p.Spec.NodeName
	}
	return p.Annotations[AnnotationNode]
}

// planSlots gives ep's gated executors, in order, the planned nodes with a slot left (a node
// planned for k executors has a slot while fewer than k pods were given it). Gated executors
// beyond the returned nodes are beyond the plan.
func planSlots(res Reservation, ep *executorPods) []string {
	var nodes []string
	for _, n := range slices.Sorted(maps.Keys(res.Executors)) {
		for k := ep.given[n]; k < res.Executors[n] && len(nodes) < len(ep.gated); k++ {
			nodes = append(nodes, n)
		}
	}
	return nodes
}

// dynamicOf says what ep's executors do beyond res's plan, for the decision core: executors
// alive beyond the plan's count (per node; those on no known node under ""), how many more
// may start without more quota, and how many gated executors the plan has no slot for.
func dynamicOf(res Reservation, ep *executorPods) Dynamic {
	if ep == nil {
		return Dynamic{}
	}
	var planned, alive int32
	for _, k := range res.Executors {
		planned += k
	}
	for _, k := range ep.live {
		alive += k
	}
	slots := int32(len(planSlots(res, ep)))
	d := Dynamic{Asking: int32(len(ep.gated)) - slots, Spare: max(planned-alive-slots, 0)}
	extra := alive - planned
	for _, n := range slices.Sorted(maps.Keys(ep.live)) {
		if over := min(ep.live[n]-res.Executors[n], extra); n != "" && over > 0 {
			if d.Extra == nil {
				d.Extra = map[string]int32{}
			}
			d.Extra[n] = over
			extra -= over
		}
	}
	if extra > 0 {
		if d.Extra == nil {
			d.Extra = map[string]int32{}
		}
		d.Extra[""] += extra
	}
	return d
}

// release is one gated executor to let go, confined to node (none: "").
type release struct {
	pod  types.NamespacedName
	node string
}

// executorReleases decides which gated executors to let go, and where: an admitted
// workload's executors take its planned nodes' slots first, then the nodes the cycle released
// executors beyond the plan to (Outcome.Released); the rest stay gated. An executor whose
// workload holds no reservation for its submission any more is let go unconfined.
func executorReleases(workloads []object, pods []corev1.Pod, released map[Key][]string) []release {
	reservations := map[Key]Reservation{}
	for i := range workloads {
		if r, ok := workloads[i].liveReservation(); ok {
			reservations[workloads[i].Key] = r
		}
	}
	var out []release
	for m, ep := range executorsOf(pods) {
		if len(ep.gated) == 0 {
			continue
		}
		var nodes []string
		res, ok := reservations[m.app]
		if ok && res.SubmissionID == m.submission {
			nodes = append(planSlots(res, ep), released[m.app]...)
		}
		for i, name := range ep.gated {
			node := ""
			if ok && res.SubmissionID == m.submission {
				if i >= len(nodes) {
					break
				}
				node = nodes[i]
			}
			out = append(out, release{types.NamespacedName{Namespace: m.app.Namespace, Name: name}, node})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return lessKey(Key{NamespacedName: out[i].pod}, Key{NamespacedName: out[j].pod})
	})
	return out
}

// releaseExecutors lets go the gated executors executorReleases chooses. The API calls run
// side by side, so a burst of executors is released in a few round trips rather than one per
// executor. It returns those released.
func (s *Scheduler) releaseExecutors(ctx context.Context, w world, out Outcome) ([]release, error) {
	releases := executorReleases(w.Workloads, w.Pods, out.Released)
	errs := make([]error, len(releases))
	var wg sync.WaitGroup
	sem := make(chan struct{}, releaseWorkers)
	for i, r := range releases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = s.ungate(ctx, r.pod, r.node)
		}()
	}
	wg.Wait()
	done := releases[:0:0]
	for i, r := range releases {
		if errs[i] == nil {
			done = append(done, r)
		}
	}
	return done, errors.Join(errs...)
}

// ungate removes the gang gate from a pod, first confining it to node when one is given.
func (s *Scheduler) ungate(ctx context.Context, key types.NamespacedName, node string) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := s.api.Get(ctx, key, pod); err != nil {
			return err
		}
		i := slices.IndexFunc(pod.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == GateExecutor })
		if i < 0 {
			return nil
		}
		pod.Spec.SchedulingGates = slices.Delete(pod.Spec.SchedulingGates, i, i+1)
		if node != "" {
			narrowToNode(&pod.Spec, node)
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[AnnotationNode] = node
		}
		return s.client.Update(ctx, pod)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing executor %s to node %q: %w", key, node, err)
	}
	return nil
}

// narrowToNode adds "name is node" to every required node selector term: Kubernetes lets a
// gated pod's required node affinity gain requirements, never lose them.
func narrowToNode(spec *corev1.PodSpec, node string) {
	req := corev1.NodeSelectorRequirement{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil || len(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) == 0 {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{req}}}}
		return
	}
	terms := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for i := range terms {
		terms[i].MatchFields = append(terms[i].MatchFields, req)
	}
}

func hasGate(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == GateExecutor })
}
