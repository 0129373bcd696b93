/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package core_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/scheduler/gang/core"
	gt "github.com/sparkop/spark-operator/scheduler/gang/gangtest"
)

// TestDynamicAllocation: executors beyond an admitted gang's plan are released only onto
// capacity neither used nor reserved (after the cycle's admissions), on nodes their placement
// rules allow, and only within their queue's quota (and every ancestor's, borrowing as
// admission does); once started they count against the quota, and preempting their
// application frees them too.
func TestDynamicAllocation(t *testing.T) {
	// a: driver 1 cpu on n1, 2 executors of 2 cpu on n1: 5 cpu, 3Gi (n1's Used shows them).
	running := func() *gt.WorkloadWrapper {
		return gt.MakeWorkload("a").Executors(2, "2", "1Gi").Admitted("n1", map[string]int32{"n1": 2})
	}
	usedByA := gt.MakeNode("n1").Used("5", "3Gi").UsedResource(corev1.ResourcePods, "3")
	run(t, []scenario{{
		name:      "released best-fit onto any node with free capacity, beyond the planned ones",
		nodes:     []*gt.NodeWrapper{usedByA, gt.MakeNode("n2").Used("15", "1Gi")},
		workloads: []*gt.WorkloadWrapper{running().Asking(3, 0)},
		want:      summary{Ungated: map[string][]string{"a": {"n1", "n1", "n1"}}},
	}, {
		name:      "capacity kept for a gang admitted in the same cycle is never taken",
		nodes:     []*gt.NodeWrapper{gt.MakeNode("n1").Capacity("16", "64Gi").Used("5", "3Gi")},
		workloads: []*gt.WorkloadWrapper{running().Asking(3, 0), gt.MakeWorkload("b").Executors(4, "2", "1Gi")},
		want: summary{Admitted: []string{"b: n1 [n1×4]"},
			Ungated: map[string][]string{"a": {"n1"}}},
	}, {
		name:      "an executor's placement rules hold: no release onto a node it may not use",
		nodes:     []*gt.NodeWrapper{gt.MakeNode("n1").Label("pool", "a").Used("15", "3Gi"), gt.MakeNode("n2")},
		workloads: []*gt.WorkloadWrapper{running().NodeSelector("pool", "a").Asking(1, 0)},
	}, {
		name:      "within the queue's quota only",
		nodes:     []*gt.NodeWrapper{usedByA},
		queues:    []*gt.QueueWrapper{gt.MakeQueue("default").Quota(corev1.ResourceCPU, "7")},
		workloads: []*gt.WorkloadWrapper{running().Asking(3, 0)},
		want:      summary{Ungated: map[string][]string{"a": {"n1"}}},
	}, {
		name:      "replacements within the gang's count need no more quota",
		nodes:     []*gt.NodeWrapper{usedByA},
		queues:    []*gt.QueueWrapper{gt.MakeQueue("default").Quota(corev1.ResourceCPU, "5")},
		workloads: []*gt.WorkloadWrapper{running().Asking(3, 2)},
		want:      summary{Ungated: map[string][]string{"a": {"n1", "n1"}}},
	}, {
		name:  "a child borrows its parent's unused quota within its borrowing limit",
		nodes: []*gt.NodeWrapper{usedByA},
		queues: []*gt.QueueWrapper{gt.MakeQueue("org").Quota(corev1.ResourceCPU, "20"),
			gt.MakeQueue("team").Parent("org").Quota(corev1.ResourceCPU, "5").BorrowingLimit(corev1.ResourceCPU, "2")},
		workloads: []*gt.WorkloadWrapper{running().Queue("team").Admitted("n1", map[string]int32{"n1": 2}).Asking(3, 0)},
		want:      summary{Ungated: map[string][]string{"a": {"n1"}}},
	}, {
		name:  "a child that never borrows stays within its own quota",
		nodes: []*gt.NodeWrapper{usedByA},
		queues: []*gt.QueueWrapper{gt.MakeQueue("org").Quota(corev1.ResourceCPU, "20"),
			gt.MakeQueue("team").Parent("org").Quota(corev1.ResourceCPU, "5").NoBorrowing()},
		workloads: []*gt.WorkloadWrapper{running().Queue("team").Admitted("n1", map[string]int32{"n1": 2}).Asking(3, 0)},
	}, {
		name:  "the parent's quota binds, whatever the child's",
		nodes: []*gt.NodeWrapper{gt.MakeNode("n1").Used("7", "4Gi")},
		queues: []*gt.QueueWrapper{gt.MakeQueue("org").Quota(corev1.ResourceCPU, "8"),
			gt.MakeQueue("team").Parent("org"), gt.MakeQueue("other").Parent("org")},
		workloads: []*gt.WorkloadWrapper{running().Queue("team").Admitted("n1", map[string]int32{"n1": 2}).Asking(1, 0),
			gt.MakeWorkload("b").Queue("other").Driver("2", "1Gi").Admitted("n1", nil)},
	}, {
		name:   "extra executors running count against the quota: the next gang waits",
		nodes:  []*gt.NodeWrapper{gt.MakeNode("n1").Used("9", "5Gi")},
		queues: []*gt.QueueWrapper{gt.MakeQueue("default").Quota(corev1.ResourceCPU, "10")},
		workloads: []*gt.WorkloadWrapper{running().Extra(map[string]int32{"n1": 2}),
			gt.MakeWorkload("b").Driver("2", "1Gi")},
		want: summary{Waiting: map[string]string{"b": "over quota in queue default: needs 2 cpu, 1 cpu free (quota 10 cpu, 9 cpu in use)"},
			Order: map[string][]string{"default": {"b"}}},
	}, {
		name:   "preempting an application frees its extra executors' quota and nodes too",
		nodes:  []*gt.NodeWrapper{gt.MakeNode("n1").Capacity("10", "64Gi").Used("9", "5Gi")},
		queues: []*gt.QueueWrapper{gt.MakeQueue("default").Quota(corev1.ResourceCPU, "10")},
		workloads: []*gt.WorkloadWrapper{running().Extra(map[string]int32{"n1": 2}),
			gt.MakeWorkload("b").Priority(10).Executors(3, "2", "1Gi")},
		opts: core.Options{Preemption: true},
		want: summary{Admitted: []string{"b: n1 [n1×3]"},
			Preempted: []string{"a by b: preempted by ns/b (priority 10) in queue default: its priority 0 is lower"}},
	}})
}
