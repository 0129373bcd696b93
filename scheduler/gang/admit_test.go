/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
)

// TestAdmitJudgesEachSubmission: the last cycle's verdict answers only for the submission and
// spec it judged. A rejected application that is rerun (a new submission) or edited (a new
// generation) is not rejected again for what it was, and neither is a held one's reason reused:
// it is held with the reason the controller shows from recording the run (PendingReason), so
// that the hold writes nothing.
func TestAdmitJudgesEachSubmission(t *testing.T) {
	next := New(Config{}).PendingReason()
	if next == "" {
		t.Fatal("no pending reason")
	}
	key := scheduler.ApplicationKey(types.NamespacedName{Namespace: "ns", Name: "a"})
	judged := judgement{submission: "s1", generation: 1}
	tests := []struct {
		name       string
		rejected   bool // the last cycle rejected s1 at generation 1, else held it
		submission string
		generation int64
		want       scheduler.Decision
	}{
		{"rejected, asked again as judged", true, "s1", 1, scheduler.Decision{Reject: true, Reason: "too big"}},
		{"rejected, then rerun", true, "s2", 1, scheduler.Decision{Reason: next}},
		{"rejected, then edited before the controller asked", true, "s1", 2, scheduler.Decision{Reason: next}},
		{"held, asked again as judged", false, "s1", 1, scheduler.Decision{Reason: "over quota"}},
		{"held, then resubmitted", false, "s2", 1, scheduler.Decision{Reason: next}},
		{"held, then edited", false, "s1", 3, scheduler.Decision{Reason: next}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Config{})
			s.judged[key] = judged
			if tt.rejected {
				s.last.Rejected = map[core.Key]string{key: "too big"}
			} else {
				s.last.Waiting = map[core.Key]core.Reason{key: {Message: "over quota", Kind: core.ReasonKind{Is: core.KindOverQuota, Queue: "q"}}}
			}
			a := app("a", tt.submission, v1beta2.ApplicationStateNew, 1, nil)
			a.Generation = tt.generation
			got, err := s.Admit(context.Background(), scheduler.ApplicationWorkload(&a))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAdmitStartGate: an application holding a reservation for its run is admitted only once a
// cycle of this process has found that its driver may start (startgate.go).
func TestAdmitStartGate(t *testing.T) {
	key := scheduler.ApplicationKey(types.NamespacedName{Namespace: "ns", Name: "a"})
	res := &Reservation{SubmissionID: "s1", Queue: "default", Driver: "n1"}
	tests := []struct {
		name string
		held map[core.Key]string
		want scheduler.Decision
	}{
		{"no cycle yet", nil, scheduler.Decision{Reason: "admitted; waiting for the gang scheduler's first cycle"}},
		{"held by the last cycle", map[core.Key]string{key: roomReason("n1")}, scheduler.Decision{Reason: roomReason("n1")}},
		{"free to start", map[core.Key]string{}, scheduler.Decision{Admit: true, Pods: res.Pods(EnforcementAdvisory)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Config{})
			s.held = tt.held
			a := app("a", "s1", v1beta2.ApplicationStateNew, 1, res)
			got, err := s.Admit(context.Background(), scheduler.ApplicationWorkload(&a))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}
