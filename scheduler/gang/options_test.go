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
		wantQueue, wantClass string
	}{
		{name: "none", wantQueue: schedv1alpha1.DefaultQueueName},
		{name: "driver's priority class", driverPriority: ptr.To("low"), wantQueue: schedv1alpha1.DefaultQueueName, wantClass: "low"},
		{
			name:           "queue and priorityClassName",
			options:        &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To("team-a"), PriorityClassName: ptr.To("high")},
			driverPriority: ptr.To("low"), wantQueue: "team-a", wantClass: "high",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := &v1beta2.SparkApplication{}
			app.Spec.BatchSchedulerOptions = tt.options
			app.Spec.Driver.PriorityClassName = tt.driverPriority
			got := []string{queueOf(app), priorityClassOf(app)}
			if d := cmp.Diff([]string{tt.wantQueue, tt.wantClass}, got); d != "" {
				t.Errorf("[queue, priority class] (-want +got):\n%s", d)
			}
		})
	}
}
