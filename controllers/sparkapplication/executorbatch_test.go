/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// TestHoldExecutorWrite: executor states and where the UI is wait for one write together;
// where the UI is, before the driver runs, waits for the write of the next state; anything
// else is written at once.
func TestHoldExecutorWrite(t *testing.T) {
	ui := func(st *v1beta2.SparkApplicationStatus) {
		st.DriverInfo.WebUIServiceName, st.DriverInfo.WebUIPort, st.DriverInfo.WebUIAddress = "a-ui-svc", 4040, "10.96.0.9:4040"
	}
	executors := func(st *v1beta2.SparkApplicationStatus) {
		st.ExecutorState = map[string]v1beta2.ExecutorState{"a-exec-1": v1beta2.ExecutorStateRunning}
	}
	tests := []struct {
		name   string
		state  v1beta2.ApplicationStateType
		change func(*step)
		want   time.Duration
	}{
		{"nothing changes", v1beta2.ApplicationStateRunning, func(*step) {}, 0},
		{"executors of a running application", v1beta2.ApplicationStateRunning, func(s *step) { executors(&s.app.Status) }, 2 * time.Second},
		{"the UI of a running application", v1beta2.ApplicationStateRunning, func(s *step) { ui(&s.app.Status) }, 2 * time.Second},
		{"the UI before the driver runs", v1beta2.ApplicationStateSubmitted, func(s *step) { ui(&s.app.Status) }, untilStateChange},
		{"the UI and executors before the driver runs", v1beta2.ApplicationStateSubmitted, func(s *step) {
			ui(&s.app.Status)
			executors(&s.app.Status)
		}, 2 * time.Second},
		{"a change of state", v1beta2.ApplicationStateSubmitted, func(s *step) {
			ui(&s.app.Status)
			s.app.Status.AppState.State = v1beta2.ApplicationStateRunning
		}, 0},
		{"executors with an event to tell", v1beta2.ApplicationStateRunning, func(s *step) {
			executors(&s.app.Status)
			s.warning(ReasonExecutorFailed, "Monitor", "executor a-exec-1 failed")
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Reconciler{}
			r.setDefaults()
			app := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "a"}}
			app.Status.AppState.State = tt.state
			s := &step{r: r, app: app.DeepCopy(), now: time.Now()}
			tt.change(s)
			if got := r.holdExecutorWrite(app, s); got != tt.want {
				t.Errorf("hold %v, want %v", got, tt.want)
			}
		})
	}
}
