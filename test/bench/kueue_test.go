/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/sparkpod"
)

// TestAllocatable: Kueue's quota is the nodes' allocatable sum, resource by resource.
func TestAllocatable(t *testing.T) {
	node := func(cpu, memory string) corev1.Node {
		n := corev1.Node{}
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
		return n
	}
	tests := []struct {
		name  string
		nodes []corev1.Node
		want  map[corev1.ResourceName]string
	}{
		{"no nodes", nil, map[corev1.ResourceName]string{"cpu": "0", "memory": "0"}},
		{"ten kwok nodes", []corev1.Node{node("16", "64Gi"), node("16", "64Gi"), node("16", "64Gi"), node("16", "64Gi"), node("16", "64Gi"),
			node("16", "64Gi"), node("16", "64Gi"), node("16", "64Gi"), node("16", "64Gi"), node("16", "64Gi")},
			map[corev1.ResourceName]string{"cpu": "160", "memory": "640Gi"}},
		{"fractions and mixed units", []corev1.Node{node("1500m", "1Gi"), node("2", "512Mi")},
			map[corev1.ResourceName]string{"cpu": "3500m", "memory": "1536Mi"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := map[corev1.ResourceName]string{}
			for name, q := range allocatable(tc.nodes, corev1.ResourceCPU, corev1.ResourceMemory) {
				got[name] = q.String()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("allocatable (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGangAppScheduler: each scheduler's applications are the same load (the same pods), told
// to their scheduler its own way; Kueue's by its queue label, with the CPU it counts said in
// coreRequest, and no batch scheduler of the operator's.
func TestGangAppScheduler(t *testing.T) {
	type want struct {
		batchScheduler, gangQueue, kueueQueue string
		coreRequests                          [2]string // driver, executor
	}
	tests := []struct {
		sched string
		want  want
	}{
		{"", want{}},
		{"gang", want{gangQueue: "ns"}},
		{"kubernetes", want{batchScheduler: "kubernetes", gangQueue: "ns"}},
		{"volcano", want{batchScheduler: "volcano"}},
		{"kube-scheduler", want{batchScheduler: "kube-scheduler"}},
		{"kueue", want{kueueQueue: kueueLocalQueue, coreRequests: [2]string{"1", "2"}}},
		{"kueue-alone", want{kueueQueue: kueueLocalQueue, coreRequests: [2]string{"1", "2"}}},
	}
	// The pods the load asks for, whatever the scheduler: what no scheduler's run changes.
	base, err := sparkpod.DemandOf(gangApp("ns", 2, ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.sched, func(t *testing.T) {
			app := gangApp("ns", 2, tc.sched)
			got := want{
				batchScheduler: ptr.Deref(app.Spec.BatchScheduler, ""),
				kueueQueue:     app.Labels[scheduler.LabelKueueQueueName],
				coreRequests:   [2]string{ptr.Deref(app.Spec.Driver.CoreRequest, ""), ptr.Deref(app.Spec.Executor.CoreRequest, "")},
			}
			if o := app.Spec.BatchSchedulerOptions; o != nil {
				got.gangQueue = ptr.Deref(o.Queue, "")
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("gangApp(%q) (-want +got):\n%s", tc.sched, diff)
			}
			d, err := sparkpod.DemandOf(app)
			if err != nil {
				t.Fatal(err)
			}
			if !cmp.Equal(base.Total(), d.Total()) {
				t.Errorf("gangApp(%q) asks for %v, the load without a scheduler %v", tc.sched, d.Total(), base.Total())
			}
		})
	}
}
