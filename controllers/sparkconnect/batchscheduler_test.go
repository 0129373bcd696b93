/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkconnect

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/scheduler"
)

// holding is a batch scheduler that holds every session and records what it was asked.
type holding struct{ asked []scheduler.Workload }

func (h *holding) Name() string { return "holding" }
func (h *holding) Admit(_ context.Context, w scheduler.Workload) (scheduler.Decision, error) {
	h.asked = append(h.asked, w)
	return scheduler.Decision{Reason: "over quota"}, nil
}
func (h *holding) Release(context.Context, scheduler.Workload) error { return nil }

func TestDecideAsksTheDefaultScheduler(t *testing.T) {
	h := &holding{}
	tests := []struct {
		name, defaultScheduler string
		want                   scheduler.Decision
		wantReason             string // a substring, for rejections
		asked                  bool
	}{
		{name: "no default: admitted at once", want: scheduler.Decision{Admit: true}},
		{name: "the default scheduler decides", defaultScheduler: "holding", want: scheduler.Decision{Reason: "over quota"}, asked: true},
		{name: "a default that is not enabled rejects", defaultScheduler: "volcano", wantReason: `batch scheduler "volcano" is not enabled`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.asked = nil
			r := &Reconciler{Schedulers: scheduler.NewRegistry(h), DefaultBatchScheduler: tt.defaultScheduler}
			conn := newConnect(func(c *v1alpha1.SparkConnect) { c.Status.Server.SubmissionID = "sub-1" })
			a, err := r.decide(context.Background(), conn)
			if err != nil {
				t.Fatal(err)
			}
			got := a.Decision
			if tt.wantReason != "" {
				if !got.Reject || !strings.Contains(got.Reason, tt.wantReason) {
					t.Errorf("decision %+v, want a rejection saying %q", got, tt.wantReason)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
			if !tt.asked {
				return
			}
			w := h.asked[0]
			want := scheduler.WorkloadKey{Kind: scheduler.KindSession, NamespacedName: types.NamespacedName{Namespace: "ns", Name: "sc"}}
			if len(h.asked) != 1 || w.Key != want || w.Run != "sub-1" || w.Demand.Driver.Count != 1 || w.Demand.Executor.Count != 2 {
				t.Errorf("asked about %+v; want session ns/sc, submission sub-1, a server and 2 executors", h.asked)
			}
		})
	}
}

func TestWakeSource(t *testing.T) {
	key := func(name string) scheduler.WorkloadKey {
		return scheduler.WorkloadKey{Kind: scheduler.KindSession, NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}
	var w wakeSource
	w.Wake(key("early"))
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	if err := w.Start(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	w.Wake(key("late"), key("late"))
	var got []string
	for q.Len() > 0 {
		req, _ := q.Get()
		got = append(got, req.Name)
		q.Done(req)
	}
	if diff := cmp.Diff([]string{"early", "late"}, got); diff != "" {
		t.Errorf("queued (-want +got):\n%s", diff)
	}
}

func newConnect(mods ...func(*v1alpha1.SparkConnect)) *v1alpha1.SparkConnect {
	image := "spark:4"
	c := &v1alpha1.SparkConnect{
		ObjectMeta: metav1.ObjectMeta{Name: "sc", Namespace: "ns", UID: "uid-1"},
		Spec:       v1alpha1.SparkConnectSpec{SparkVersion: "4.0.4", Image: &image},
	}
	for _, m := range mods {
		m(c)
	}
	return c
}

// releasing is a scheduler that records the runs it is asked to release.
type releasing struct {
	holding
	name     string
	released []string
}

func (r *releasing) Name() string { return r.name }
func (r *releasing) Release(_ context.Context, w scheduler.Workload) error {
	r.released = append(r.released, w.Run)
	return nil
}

// TestReleaseGoesToTheAdmittingScheduler: a session's server is released by the scheduler that
// admitted it (status.server.batchScheduler), though the operator's default is another now; a
// server never admitted, by the default; one admitted by a scheduler no longer enabled is told
// in an event, and is no error.
func TestReleaseGoesToTheAdmittingScheduler(t *testing.T) {
	type want struct {
		Released map[string][]string
		Events   int
	}
	tests := []struct {
		name, admitted string
		want           want
	}{
		{name: "admitted by first, the default is second now", admitted: "first", want: want{Released: map[string][]string{"first": {"sub-1"}}}},
		{name: "never admitted: the default", want: want{Released: map[string][]string{"second": {"sub-1"}}}},
		{name: "admitted by one no longer enabled", admitted: "volcano", want: want{Released: map[string][]string{}, Events: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, second := &releasing{name: "first"}, &releasing{name: "second"}
			recorder := events.NewFakeRecorder(10)
			r := &Reconciler{Schedulers: scheduler.NewRegistry(first, second), DefaultBatchScheduler: "second", Recorder: recorder}
			conn := newConnect(func(c *v1alpha1.SparkConnect) {
				c.Status.Server.SubmissionID, c.Status.Server.BatchScheduler = "sub-1", tt.admitted
			})
			if err := r.release(context.Background(), conn); err != nil {
				t.Fatal(err)
			}
			got := want{Released: map[string][]string{}, Events: len(recorder.Events)}
			for _, s := range []*releasing{first, second} {
				if len(s.released) > 0 {
					got.Released[s.name] = s.released
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
