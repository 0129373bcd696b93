/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
)

// TestReleaseGoesToTheAdmittingScheduler: release asks the scheduler recorded as the run's
// admitter, not the one the spec names now; one never admitted, the spec's; one admitted by a
// scheduler no longer enabled is told in an event, once, and is no error.
func TestReleaseGoesToTheAdmittingScheduler(t *testing.T) {
	type want struct {
		Released map[string][]string // scheduler → runs
		Events   int
	}
	tests := []struct {
		name           string
		spec, admitted string
		state          v1beta2.ApplicationStateType
		entered        bool
		want           want
	}{
		{name: "admitted by first, spec names second now", spec: "second", admitted: "first", state: v1beta2.ApplicationStateInvalidating,
			entered: true, want: want{Released: map[string][]string{"first": {"run-1"}}}},
		{name: "never admitted: the spec's", spec: "second", state: v1beta2.ApplicationStateSuspended,
			entered: true, want: want{Released: map[string][]string{"second": {"run-1"}}}},
		{name: "a live run is not released", spec: "second", admitted: "first", state: v1beta2.ApplicationStateRunning,
			entered: true, want: want{Released: map[string][]string{}}},
		{name: "admitted by one no longer enabled: an event", spec: "second", admitted: "volcano", state: v1beta2.ApplicationStateCompleted,
			entered: true, want: want{Released: map[string][]string{}, Events: 1}},
		{name: "and no event again on later reconciles", spec: "second", admitted: "volcano", state: v1beta2.ApplicationStateCompleted,
			want: want{Released: map[string][]string{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, second := newPluginScheduler("first"), newPluginScheduler("second")
			recorder := events.NewFakeRecorder(10)
			r := &Reconciler{Schedulers: scheduler.NewRegistry(first, second), Recorder: recorder}
			app := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app"}}
			app.Spec.BatchScheduler = ptr.To(tt.spec)
			app.Status = v1beta2.SparkApplicationStatus{SubmissionID: "run-1", BatchScheduler: tt.admitted,
				AppState: v1beta2.ApplicationState{State: tt.state}}
			if err := r.release(context.Background(), app, tt.entered); err != nil {
				t.Fatal(err)
			}
			got := want{Released: map[string][]string{}, Events: len(recorder.Events)}
			for _, s := range []*pluginScheduler{first, second} {
				if runs := s.releasedRuns(); len(runs) > 0 {
					got.Released[s.name] = runs
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
