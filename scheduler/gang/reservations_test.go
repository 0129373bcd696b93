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
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	gt "github.com/sparkop/spark-operator/scheduler/gang/gangtest"
)

// TestReservationStatusWrites: a reservation's status is written at once when it is first
// and when it is complete; other changes at most once per reservationStatusEvery, the change
// held back written by a cycle asked for when the time is up; members gone once out of date
// for membersGoneShownWithin; a status written already is not written again while the cache
// shows the older one (a new run's reservation under the same name is another); a write that
// failed is tried again by the next cycle.
func TestReservationStatusWrites(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := &Reservation{SubmissionID: "s1", Driver: "n1", Executors: map[string]int32{"n1": 1, "n2": 1}, UID: "uid-res", Admitted: start}
	driver := gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning)
	exec1 := gt.Numbered(gt.Pod("a", "s1", "executor", "n1", "1", corev1.PodRunning), 1)
	exec2 := gt.Numbered(gt.Pod("a", "s1", "executor", "n2", "1", corev1.PodRunning), 2)
	steps := []struct {
		name      string
		after     time.Duration // since start
		pods      []corev1.Pod
		cacheLags bool      // the cluster cache shows the status before the last write
		uid       types.UID // the reservation's, when not res's: a new run's under the same name
		fail      bool      // the API server refuses the write
		wantBound string
		wantWrite bool
		wantAsk   time.Duration // a cycle asked for this much later, to write what was held back
	}{
		{name: "admitted: the nodes at once", wantBound: "0/3", wantWrite: true},
		{name: "the driver bound a moment later: held back", after: time.Second, pods: []corev1.Pod{driver}, wantBound: "0/3", wantAsk: 4 * time.Second},
		{name: "the time up: written as it stands", after: 5 * time.Second, pods: []corev1.Pod{driver, exec1}, wantBound: "2/3", wantWrite: true},
		{name: "complete a moment later: at once", after: 5500 * time.Millisecond, pods: []corev1.Pod{driver, exec1, exec2}, wantBound: "3/3", wantWrite: true},
		{name: "the cache not showing that write yet: not written again", after: 5600 * time.Millisecond, pods: []corev1.Pod{driver, exec1, exec2}, cacheLags: true, wantBound: "3/3"},
		{name: "a new run's reservation under the same name, as the last written: written", after: 5700 * time.Millisecond, pods: []corev1.Pod{driver, exec1, exec2}, uid: "uid-res-2", wantBound: "3/3", wantWrite: true},
		{name: "an executor gone: held back", after: 20 * time.Second, pods: []corev1.Pod{driver, exec1}, wantBound: "3/3", wantAsk: 30 * time.Second},
		{name: "still gone: held back for the rest", after: 40 * time.Second, pods: []corev1.Pod{driver, exec1}, wantBound: "3/3", wantAsk: 10 * time.Second},
		{name: "gone for 30 s: written, refused by the API server", after: 50 * time.Second, pods: []corev1.Pod{driver, exec1}, fail: true, wantBound: "3/3"},
		{name: "tried again by the next cycle", after: 50100 * time.Millisecond, pods: []corev1.Pod{driver, exec1}, wantBound: "2/3", wantWrite: true},
		{name: "another gone, and the first back: no more only gone, written", after: 70 * time.Second, pods: []corev1.Pod{driver, exec2}, wantBound: "2/3", wantWrite: true},
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
	var asked []time.Duration
	var followUps []func()
	s.statusWrites.followUp.afterFunc = func(d time.Duration, f func()) {
		asked = append(asked, d)
		followUps = append(followUps, f)
	}

	var previous schedv1alpha1.ReservationStatus
	for _, step := range steps {
		clock.SetTime(start.Add(step.after))
		fail = step.fail
		asked = nil
		// What the cluster cache shows: the reservation with its status as last written.
		current := &schedv1alpha1.Reservation{}
		if err := api.Get(context.Background(), client.ObjectKeyFromObject(stored), current); err != nil {
			t.Fatal(err)
		}
		r := *res
		r.Status = current.Status
		if step.cacheLags {
			r.Status = previous
		}
		if step.uid != "" {
			r.UID, r.Status = step.uid, schedv1alpha1.ReservationStatus{} // a new object
		}
		previous = current.Status
		before := writes
		s.writeReservationStatus(context.Background(), placeholderWorld(v1beta2.ApplicationStateRunning, &r, step.pods))

		if err := api.Get(context.Background(), client.ObjectKeyFromObject(stored), current); err != nil {
			t.Fatal(err)
		}
		if wrote := writes > before; wrote != step.wantWrite || current.Status.Bound != step.wantBound {
			t.Errorf("%s: wrote %v, status bound %q; want wrote %v, bound %q", step.name, wrote, current.Status.Bound, step.wantWrite, step.wantBound)
		}
		var want []time.Duration
		if step.wantAsk > 0 {
			want = []time.Duration{step.wantAsk}
		}
		if !slices.Equal(asked, want) {
			t.Errorf("%s: cycles asked for after %v, want %v", step.name, asked, want)
		}
		// The cycles asked for come before the next step.
		for _, f := range followUps {
			f()
		}
		followUps = nil
		select {
		case <-s.kick:
			if step.wantAsk == 0 {
				t.Errorf("%s: a cycle was asked for", step.name)
			}
		default:
			if step.wantAsk > 0 {
				t.Errorf("%s: no cycle was asked for", step.name)
			}
		}
	}
}
