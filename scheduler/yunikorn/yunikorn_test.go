/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package yunikorn

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/sparkpod"
)

// TestPods: the pods of a run the gang scheduler's core admitted are YuniKorn's, in the
// options' queue if one is named, on the nodes planned for them, and carry no task groups.
func TestPods(t *testing.T) {
	r := gang.Reservation{SubmissionID: "run-1", Queue: "default", Driver: "n1", Executors: map[string]int32{"n1": 1, "n2": 2}}
	tests := []struct {
		name   string
		queue  *string
		labels map[string]string
	}{
		{name: "no queue: YuniKorn's placement rules choose", labels: map[string]string{gang.LabelQueue: "default"}},
		{name: "the options' queue", queue: ptr.To("root.spark"), labels: map[string]string{gang.LabelQueue: "default", LabelQueue: "root.spark"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pi"}}
			app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: tt.queue}
			app.Status.SubmissionID = "run-1"
			got, err := (&Scheduler{}).Pods(scheduler.ApplicationWorkload(app), r)
			if err != nil {
				t.Fatal(err)
			}
			want := sparkpod.RoleScheduling{
				Driver:   sparkpod.Scheduling{SchedulerName: SchedulerName, Labels: tt.labels, NodeNames: []string{"n1"}},
				Executor: sparkpod.Scheduling{SchedulerName: SchedulerName, Labels: tt.labels, NodeNames: []string{"n1", "n2"}},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("pods (-want +got):\n%s", diff)
			}
		})
	}
	if d, ok, err := (&Scheduler{}).Check(context.Background(), scheduler.Workload{}); !ok || err != nil || d.Admit || d.Reject || d.Reason != "" {
		t.Errorf("Check = %+v, %v, %v; want the core to decide", d, ok, err)
	}
}
