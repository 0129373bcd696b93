/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// TestReservationStatusWrites: a reservation's status is written at most once per
// reservationStatusEvery while its members bind, the change held back written by a cycle
// asked for when the time is up; the complete status is written at once, and a write that
// failed is tried again by the next cycle.
func TestReservationStatusWrites(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := &Reservation{SubmissionID: "s1", Driver: "n1", Executors: map[string]int32{"n1": 1, "n2": 1}, UID: "uid-res", Admitted: start}
	driver := pod("a", "s1", "driver", "n1", "1", corev1.PodRunning)
	exec1 := numbered(pod("a", "s1", "executor", "n1", "1", corev1.PodRunning), 1)
	exec2 := numbered(pod("a", "s1", "executor", "n2", "1", corev1.PodRunning), 2)
	steps := []struct {
		name      string
		after     time.Duration // since start
		pods      []corev1.Pod
		fail      bool // the API server refuses the write
		wantBound string
		wantWrite bool
		wantAsked bool // a cycle asked for, to write what was held back
	}{
		{name: "admitted: the nodes at once", pods: nil, wantBound: "0/3", wantWrite: true},
		{name: "the driver bound a moment later: held back", after: time.Second, pods: []corev1.Pod{driver}, wantBound: "0/3", wantAsked: true},
		{name: "the time up: written", after: 2 * time.Second, pods: []corev1.Pod{driver, exec1}, wantBound: "2/3", wantWrite: true},
		{name: "complete a moment later: at once", after: 2500 * time.Millisecond, pods: []corev1.Pod{driver, exec1, exec2}, wantBound: "3/3", wantWrite: true},
		{name: "a member gone later, refused by the API server", after: 5 * time.Second, pods: []corev1.Pod{driver, exec1}, fail: true, wantBound: "3/3"},
		{name: "tried again by the next cycle", after: 5100 * time.Millisecond, pods: []corev1.Pod{driver, exec1}, wantBound: "2/3", wantWrite: true},
	}

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := schedv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	key := placeholderWorld(v1beta2.ApplicationStateRunning, res, nil).Workloads[0].Key
	stored := &schedv1alpha1.Reservation{}
	stored.Namespace, stored.Name = key.Namespace, ReservationName(key)
	var writes int
	fail := false
	api := fake.NewClientBuilder().WithScheme(scheme).WithObjects(stored).WithStatusSubresource(stored).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if fail {
				return errors.New("refused")
			}
			writes++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}).Build()
	clock := clocktesting.NewFakeClock(start)
	s := &Scheduler{client: api, kick: make(chan struct{}, 1), cfg: Config{Clock: clock}}

	for _, step := range steps {
		clock.SetTime(start.Add(step.after))
		fail = step.fail
		// What the cluster cache shows: the reservation with its status as last written.
		current := &schedv1alpha1.Reservation{}
		if err := api.Get(context.Background(), client.ObjectKeyFromObject(stored), current); err != nil {
			t.Fatal(err)
		}
		r := *res
		r.Status = current.Status
		before := writes
		s.writeReservationStatus(context.Background(), placeholderWorld(v1beta2.ApplicationStateRunning, &r, step.pods))

		if err := api.Get(context.Background(), client.ObjectKeyFromObject(stored), current); err != nil {
			t.Fatal(err)
		}
		if wrote := writes > before; wrote != step.wantWrite || current.Status.Bound != step.wantBound {
			t.Errorf("%s: wrote %v, status bound %q; want wrote %v, bound %q", step.name, wrote, current.Status.Bound, step.wantWrite, step.wantBound)
		}
		if asked := s.statusWrites.followUp.Load(); asked != step.wantAsked {
			t.Errorf("%s: a follow-up cycle asked for: %v, want %v", step.name, asked, step.wantAsked)
		}
		if step.wantAsked {
			select {
			case <-s.kick:
			case <-time.After(5 * time.Second):
				t.Fatalf("%s: no cycle was asked for", step.name)
			}
			for s.statusWrites.followUp.Load() {
				time.Sleep(time.Millisecond)
			}
		}
	}
}
