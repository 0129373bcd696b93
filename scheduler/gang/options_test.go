/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// TestBatchSchedulerOptions: spec.batchSchedulerOptions' queue and priorityClassName decide
// an application's queue and the PriorityClass its priority comes from (test/fields lists this
// test as their evidence).
func TestBatchSchedulerOptions(t *testing.T) {
	tests := []struct {
		name                 string
		options              *v1beta2.BatchSchedulerConfiguration
		driverPriority       *string
		globalDefault        bool // a global default PriorityClass exists, "default"
		wantQueue, wantClass string
	}{
		{name: "none", wantQueue: schedv1alpha1.DefaultQueueName},
		{name: "none, a global default", globalDefault: true, wantQueue: schedv1alpha1.DefaultQueueName, wantClass: "default"},
		{name: "driver's priority class over the global default", driverPriority: ptr.To("low"), globalDefault: true,
			wantQueue: schedv1alpha1.DefaultQueueName, wantClass: "low"},
		{name: "driver's priority class", driverPriority: ptr.To("low"), wantQueue: schedv1alpha1.DefaultQueueName, wantClass: "low"},
		{
			name:           "queue and priorityClassName",
			options:        &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To("team-a"), PriorityClassName: ptr.To("high")},
			driverPriority: ptr.To("low"), wantQueue: "team-a", wantClass: "high",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := app("a", "s1", v1beta2.ApplicationStateNew, 1, nil)
			a.Spec.BatchSchedulerOptions = tt.options
			a.Spec.Driver.PriorityClassName = tt.driverPriority
			w := world{Workloads: []object{applicationObject(&a)}, PriorityClasses: []schedulingv1.PriorityClass{
				{ObjectMeta: metav1.ObjectMeta{Name: "low"}, Value: 1}, {ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 2}}}
			if tt.globalDefault {
				w.PriorityClasses = append(w.PriorityClasses, schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Value: 5, GlobalDefault: true})
			}
			snap, err := snapshot(w, snapshotOptions{})
			if err != nil || len(snap.Workloads) != 1 {
				t.Fatalf("snapshot: %v, %d workloads", err, len(snap.Workloads))
			}
			priorities := map[string]int32{"": 0, "low": 1, "high": 2, "default": 5}
			got := []any{snap.Workloads[0].Queue, snap.Workloads[0].Priority}
			if d := cmp.Diff([]any{tt.wantQueue, priorities[tt.wantClass]}, got); d != "" {
				t.Errorf("[queue, priority] (-want +got):\n%s", d)
			}
		})
	}
}
