/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package volcano

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/scheduler/gang"
)

// capped is the Volcano Queue name with spec.capability.
func capped(name string, capability map[string]any) client.Object {
	q := queue(name).(*unstructured.Unstructured)
	q.Object["spec"] = map[string]any{"weight": int64(1), "capability": capability}
	return q
}

// TestQueueLimits: a Volcano queue's capability is the limit the core counts, as Volcano
// enforces it; a queue without one, or one that cannot be read, limits nothing.
func TestQueueLimits(t *testing.T) {
	objs := []client.Object{
		capped("spark", map[string]any{"cpu": "6", "memory": "0", "pods": "10", "nvidia.com/gpu": int64(2)}),
		capped("default", map[string]any{"memory": "64Gi"}),
		queue("open"),
	}
	tests := []struct {
		name, queue string
		want        []gang.ForeignQueue
	}{
		{name: "capability: cpu and GPUs; zero memory and pods are not limited", queue: "spark",
			want: []gang.ForeignQueue{{Name: "spark", Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("6"), "nvidia.com/gpu": resource.MustParse("2")}}}},
		{name: "no queue named: Volcano's default queue",
			want: []gang.ForeignQueue{{Name: "default", Max: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Gi")}}}},
		{name: "no capability", queue: "open"},
		{name: "a queue that does not exist", queue: "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := newScheduler(newClient(true, objs...)).QueueLimits(context.Background(), tt.queue)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("limits (-want +got):\n%s", diff)
			}
		})
	}
}
