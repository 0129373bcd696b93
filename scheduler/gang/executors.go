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
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// releaseExecutors gives every gated executor a node: one of its application's planned nodes
// with a slot left; beyond the plan (executors added by dynamic allocation) a planned node
// with capacity neither used nor reserved, else it stays gated until capacity frees. An
// executor whose application holds no reservation any more is let go unnarrowed.
func (s *Scheduler) releaseExecutors(ctx context.Context, w world, snap Snapshot) error {
	pending := map[boundMember][]string{}
	assigned := map[boundMember]map[string]int32{}
	for i := range w.Pods {
		p := &w.Pods[i]
		if p.Labels[v1beta2.SparkRoleLabel] != v1beta2.SparkRoleExecutor || !p.DeletionTimestamp.IsZero() {
			continue
		}
		m := boundMember{types.NamespacedName{Namespace: p.Namespace, Name: p.Labels[v1beta2.LabelAppName]},
			p.Labels[v1beta2.LabelSubmissionID], v1beta2.SparkRoleExecutor}
		if hasGate(p) {
			pending[m] = append(pending[m], p.Name)
			continue
		}
		if n := p.Annotations[AnnotationNode]; n != "" {
			if assigned[m] == nil {
				assigned[m] = map[string]int32{}
			}
			assigned[m][n]++
		}
	}
	if len(pending) == 0 {
		return nil
	}
	reservations := map[types.NamespacedName]Reservation{}
	for i := range w.Apps {
		if r, ok := liveReservation(&w.Apps[i]); ok {
			reservations[client.ObjectKeyFromObject(&w.Apps[i])] = r
		}
	}
	free := map[string]corev1.ResourceList{}
	for _, n := range snap.Nodes {
		f := corev1.ResourceList{}
		for name, q := range n.Allocatable {
			q = q.DeepCopy()
			u := n.Used[name]
			q.Sub(u)
			f[name] = q
		}
		free[n.Name] = f
	}
	demands := map[types.NamespacedName]corev1.ResourceList{}
	for _, wl := range snap.Workloads {
		demands[wl.Key] = memberRequests(wl.Demand.Executor)
	}

	// Nodes are chosen here, in order; the API calls then run side by side, so a burst of
	// executors is released in a few round trips rather than one per executor.
	type release struct {
		key  types.NamespacedName
		node string
	}
	var releases []release
	for m, pods := range pending {
		sort.Strings(pods)
		res, ok := reservations[m.app]
		if !ok || res.SubmissionID != m.submission {
			for _, name := range pods {
				releases = append(releases, release{types.NamespacedName{Namespace: m.app.Namespace, Name: name}, ""})
			}
			continue
		}
		nodes := slices.Sorted(maps.Keys(res.Executors))
		for _, name := range pods {
			node := ""
			for _, n := range nodes {
				if assigned[m][n] < res.Executors[n] {
					node = n
					break
				}
			}
			if node == "" {
				// Beyond the plan: only where nothing is used or reserved.
				need := demands[m.app]
				for _, n := range nodes {
					if fits(free[n], need) {
						node = n
						add(free[n], need, -1)
						break
					}
				}
			}
			if node == "" {
				continue
			}
			if assigned[m] == nil {
				assigned[m] = map[string]int32{}
			}
			assigned[m][node]++
			releases = append(releases, release{types.NamespacedName{Namespace: m.app.Namespace, Name: name}, node})
		}
	}
	errs := make([]error, len(releases))
	var wg sync.WaitGroup
	sem := make(chan struct{}, releaseWorkers)
	for i, r := range releases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = s.ungate(ctx, r.key, r.node)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
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

// fits reports whether need fits in free.
func fits(free, need corev1.ResourceList) bool {
	for name, q := range need {
		f, ok := free[name]
		if !ok || f.Cmp(q) < 0 {
			return false
		}
	}
	return true
}
