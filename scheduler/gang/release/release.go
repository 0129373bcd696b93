/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package release

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/scheduler/reservation"
	"github.com/sparkop/spark-operator/sparkpod"
)

// Gate holds an admitted application's executors back from the kube-scheduler until
// the gang scheduler has chosen each one's node. All executors share one pod template, which
// can only name the set of planned nodes; left to itself the kube-scheduler would spread them
// over that set regardless of how many the plan put on each node, and take capacity planned
// for other applications. The gang scheduler gives each gated executor one planned node (by
// narrowing its node affinity, which Kubernetes allows on gated pods) and removes the gate.
const Gate = "scheduling.sparkop.dev/gang"

// Gated reports whether p carries the gang gate.
func Gated(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == Gate })
}

// Pod removes the gang gate from cached, an executor as the cluster cache holds it, first
// confining it to node when one is given. One JSON patch does it, which applies only if the
// gates, affinity and annotations it changes are still those the cache showed; otherwise (the
// cache lagged) the pod is read from api, the API server, and updated. A pod gone is no error.
func Pod(ctx context.Context, c client.Writer, api client.Reader, cached *corev1.Pod, node string) error {
	key := client.ObjectKeyFromObject(cached)
	patch, err := ungatePatch(cached, node)
	if err == nil {
		err = c.Patch(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}},
			client.RawPatch(types.JSONPatchType, patch))
	}
	if err == nil || apierrors.IsNotFound(err) {
		return nil
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := api.Get(ctx, key, pod); err != nil {
			return err
		}
		if !Ungate(pod, node) {
			return nil
		}
		return c.Update(ctx, pod)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing executor %s to node %q: %w", key, node, err)
	}
	return nil
}

// Ungate removes the gang gate from pod, narrowing it to node when one is given and
// recording the node; false when pod has no gang gate.
func Ungate(pod *corev1.Pod, node string) bool {
	i := slices.IndexFunc(pod.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == Gate })
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
		pod.Annotations[reservation.AnnotationNode] = node
	}
	return true
}

// ungatePatch is the JSON patch that makes of cached what Ungate does, guarded by tests that
// the fields it replaces still hold what cached shows (null for a field cached lacks, which
// the API server's JSON patch takes to hold where the field is absent).
func ungatePatch(cached *corev1.Pod, node string) ([]byte, error) {
	if cached == nil {
		return nil, fmt.Errorf("no cached pod")
	}
	next := cached.DeepCopy()
	if !Ungate(next, node) {
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
