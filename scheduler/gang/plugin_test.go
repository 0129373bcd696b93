/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	gt "github.com/sparkop/spark-operator/scheduler/gang/gangtest"
)

// TestStaleReservations: a Reservation object holds nothing once its run is over for the gang
// scheduler, which then deletes it with the plugin enforcement.
func TestStaleReservations(t *testing.T) {
	stored := func(run string) *Reservation {
		return &Reservation{SubmissionID: run, Queue: "q", Driver: "n1", UID: types.UID("uid-" + run)}
	}
	cases := []struct {
		name  string
		state v1beta2.ApplicationStateType
		res   *Reservation
		pods  []corev1.Pod
		stale bool
	}{
		{name: "running, its driver too", state: v1beta2.ApplicationStateRunning, res: stored("s1"),
			pods: []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning)}},
		{name: "running, its driver ended", state: v1beta2.ApplicationStateRunning, res: stored("s1"),
			pods: []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodSucceeded)}, stale: true},
		{name: "a driver of an earlier run ended", state: v1beta2.ApplicationStateRunning, res: stored("s1"),
			pods: []corev1.Pod{gt.Pod("a", "s0", "driver", "n1", "1", corev1.PodSucceeded)}},
		{name: "completed", state: v1beta2.ApplicationStateCompleted, res: stored("s1"), stale: true},
		{name: "suspended", state: v1beta2.ApplicationStateSuspended, res: stored("s1"), stale: true},
		{name: "the reservation of another run", state: v1beta2.ApplicationStateSubmitted, res: stored("s0"), stale: true},
		{name: "no reservation", state: v1beta2.ApplicationStateRunning},
		{name: "a legacy annotation, not an object", state: v1beta2.ApplicationStateCompleted, res: &Reservation{SubmissionID: "s1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := app("a", "s1", tc.state, 2, nil)
			o := applicationObject(&a)
			o.res = tc.res
			got := staleReservations(world{Workloads: []object{o}, Pods: tc.pods})
			var want map[core.Key]types.UID
			if tc.stale {
				want = map[core.Key]types.UID{{Kind: scheduler.KindApplication, NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}: tc.res.UID}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("stale (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHoldForPlugin: with the plugin enforcement, a run admitted but not started waits until
// the cache shows its Reservation, and is planned again when a node planned for it is
// over-committed by pods that are not ending (they took the room before it was held); pods that
// are ending do not count (the driver waits for them as always).
func TestHoldForPlugin(t *testing.T) {
	key := core.Key{Kind: scheduler.KindApplication, NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}
	foreign := func(cpu string, ending bool) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "web"},
			Spec: corev1.PodSpec{NodeName: "n2", Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		if ending {
			p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		return p
	}
	cases := []struct {
		name        string
		notHeld     bool          // the pod scheduler does not say it holds the room
		takenOn     string        // the pod scheduler says room was taken on this node
		admittedAgo time.Duration // 0: just now
		pods        []corev1.Pod
		wantPlacing bool
		wantUnheld  bool
		wantTaken   string
	}{
		{name: "its room free and held: it may start"},
		// A reservation just stored, not in the cache yet, reads the same (loop.store).
		{name: "its room not said held yet, or its Reservation not in the cache yet: it waits", notHeld: true, wantPlacing: true},
		{name: "its room not said held a second before the wait is over: it still waits", notHeld: true, admittedAgo: heldWait - time.Second, wantPlacing: true},
		{name: "its room not said held within the wait: it starts without, told", notHeld: true, admittedAgo: heldWait, wantUnheld: true},
		{name: "a pod took room planned for an executor: planned again", pods: []corev1.Pod{foreign("5", false)}, wantTaken: "n2"},
		{name: "the pod scheduler found its room taken: planned again", notHeld: true, takenOn: "n2", wantTaken: "n2"},
		{name: "a pod took room of a run that waited in vain: planned again", notHeld: true, admittedAgo: time.Minute,
			pods: []corev1.Pod{foreign("5", false)}, wantUnheld: true, wantTaken: "n2"},
		{name: "a pod that fits beside the plan: it may start", pods: []corev1.Pod{foreign("4", false)}},
		{name: "an ending pod over the plan: not taken, on its way out", pods: []corev1.Pod{foreign("5", true)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Now()
			res := &Reservation{SubmissionID: "s1", Queue: "q", Driver: "n1", Executors: map[string]int32{"n2": 2},
				Admitted: now.Add(-tc.admittedAgo), UID: "uid-s1", Enforcement: EnforcementPlugin, Held: !tc.notHeld, TakenOn: tc.takenOn}
			a := app("a", "s1", v1beta2.ApplicationStateNew, 2, nil)
			o := applicationObject(&a)
			o.res = res
			// n1: the driver (1 CPU); n2: two executors of 2 CPUs, of 8.
			w := world{Nodes: []corev1.Node{gt.ClusterNode("n1"), gt.ClusterNode("n2")}, Workloads: []object{o}, Pods: tc.pods}
			w.Nodes[1].Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}
			snap, err := snapshot(w, snapshotOptions{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			g := newStartGate(w, snap, now, 0, 0, nil)
			recheck, unheld := g.holdForPlugin(w, snap, now)
			if _, placing := g.placing[key]; placing != tc.wantPlacing {
				t.Errorf("placing = %v, want %v", placing, tc.wantPlacing)
			}
			if tc.wantPlacing && (recheck <= 0 || recheck > heldWait) {
				t.Errorf("recheck in %v, want within %v", recheck, heldWait)
			}
			if got := slices.Contains(unheld, key); got != tc.wantUnheld {
				t.Errorf("started without its room held = %v, want %v", got, tc.wantUnheld)
			}
			if got := g.taken[key]; got != tc.wantTaken {
				t.Errorf("taken = %q, want %q", got, tc.wantTaken)
			}
		})
	}
}

func TestWarnUnheldOncePerRun(t *testing.T) {
	rec := events.NewFakeRecorder(10)
	l := &loop{s: &Scheduler{recorder: rec}}
	a := app("a", "s1", v1beta2.ApplicationStateNew, 2, nil)
	o := applicationObject(&a)
	objects := map[core.Key]*object{o.Key: &o}
	l.warnUnheld(objects, []core.Key{o.Key})
	l.warnUnheld(objects, []core.Key{o.Key})
	if got := len(rec.Events); got != 1 {
		t.Fatalf("%d events for one run, want 1", got)
	}
	if e := <-rec.Events; !strings.Contains(e, "ReservationNotHeld") || !strings.Contains(e, "spark-scheduler") {
		t.Errorf("event %q", e)
	}
	// Its next run is told again.
	o.Run = "s2"
	l.warnUnheld(objects, []core.Key{o.Key})
	if got := len(rec.Events); got != 1 {
		t.Errorf("%d events for the next run, want 1", got)
	}
}
