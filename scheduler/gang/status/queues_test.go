/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package status

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkop/spark-operator/scheduler"

	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/sparkpod"
)

// TestQueueStatusesAfterPreemption: a cycle that preempts an application for another shows
// the queue with the preemptor admitted in place of its victim, never both.
func TestQueueStatusesAfterPreemption(t *testing.T) {
	key := func(name string) core.Key {
		return scheduler.ApplicationKey(types.NamespacedName{Namespace: "ns", Name: name})
	}
	demand := sparkpod.Demand{Driver: sparkpod.PodDemand{Role: sparkpod.RoleDriver, Count: 1,
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}
	admitted := &core.Admission{Queue: "q", Driver: "n"}
	snap := core.Snapshot{Queues: map[string]*core.Queue{"q": {Name: "q"}}, Workloads: []core.Workload{
		{Key: key("low-1"), Queue: "q", Demand: demand, Admission: admitted},
		{Key: key("low-2"), Queue: "q", Demand: demand, Admission: admitted},
		{Key: key("high"), Queue: "q", Demand: demand, Priority: 10},
	}}
	out := core.Outcome{
		Admitted:  []core.Admitted{{Key: key("high"), Admission: *admitted}},
		Preempted: []core.Preemption{{Key: key("low-2"), By: key("high")}},
		Usage:     map[string]corev1.ResourceList{"q": {corev1.ResourceCPU: resource.MustParse("4")}},
	}
	if got := Queues(snap, out)["q"].AdmittedApplications; got != 2 {
		t.Errorf("admitted applications %d, want 2 (low-1 and high; low-2 was preempted)", got)
	}
}
