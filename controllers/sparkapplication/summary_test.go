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

	"github.com/google/go-cmp/cmp"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// TestSummary checks status.summary, what kubectl get shows, as the writers of the status
// leave it: the state machine (syncConditions) and the pool's hold (setQueued).
func TestSummary(t *testing.T) {
	now := time.Now()
	state := func(s v1beta2.ApplicationStateType, msg string) v1beta2.SparkApplicationStatus {
		return v1beta2.SparkApplicationStatus{AppState: v1beta2.ApplicationState{State: s, ErrorMessage: msg}}
	}
	queued := func(st v1beta2.SparkApplicationStatus) v1beta2.SparkApplicationStatus {
		syncConditions(&st, now)
		setQueued(&st, "4 CPU more than queue q has free", now)
		return st
	}
	tests := []struct {
		name   string
		status v1beta2.SparkApplicationStatus
		sync   bool
		want   v1beta2.StatusSummary
	}{
		{name: "new", status: state(v1beta2.ApplicationStateNew, ""), sync: true, want: v1beta2.StatusSummary{State: "NEW"}},
		{name: "queued", status: queued(state(v1beta2.ApplicationStateNew, "")),
			want: v1beta2.StatusSummary{State: "QUEUED", Waiting: "4 CPU more than queue q has free"}},
		{name: "queued rerun, after another reconcile", status: queued(state(v1beta2.ApplicationStatePendingRerun, "")), sync: true,
			want: v1beta2.StatusSummary{State: "QUEUED", Waiting: "4 CPU more than queue q has free"}},
		{name: "submitted, its driver placed by no node", status: state(v1beta2.ApplicationStateSubmitted, "0/3 nodes are available: 3 Insufficient cpu."), sync: true,
			want: v1beta2.StatusSummary{State: "SUBMITTED", Waiting: "0/3 nodes are available: 3 Insufficient cpu."}},
		{name: "admitted: queued no more", status: func() v1beta2.SparkApplicationStatus {
			st := queued(state(v1beta2.ApplicationStateNew, ""))
			st.AppState.State = v1beta2.ApplicationStateSubmitted
			return st
		}(), sync: true, want: v1beta2.StatusSummary{State: "SUBMITTED"}},
		{name: "failed: the error is no reason to wait", status: state(v1beta2.ApplicationStateFailed, "exit code 3"), sync: true,
			want: v1beta2.StatusSummary{State: "FAILED"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.status
			if tc.sync {
				syncConditions(&st, now)
			}
			if d := cmp.Diff(tc.want, st.Summary); d != "" {
				t.Errorf("summary (-want +got):\n%s", d)
			}
		})
	}
}
