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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
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
			pods: []corev1.Pod{pod("a", "s1", "driver", "n1", "1", corev1.PodRunning)}},
		{name: "running, its driver ended", state: v1beta2.ApplicationStateRunning, res: stored("s1"),
			pods: []corev1.Pod{pod("a", "s1", "driver", "n1", "1", corev1.PodSucceeded)}, stale: true},
		{name: "a driver of an earlier run ended", state: v1beta2.ApplicationStateRunning, res: stored("s1"),
			pods: []corev1.Pod{pod("a", "s0", "driver", "n1", "1", corev1.PodSucceeded)}},
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
			var want map[Key]types.UID
			if tc.stale {
				want = map[Key]types.UID{{Kind: scheduler.KindApplication, NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}: tc.res.UID}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("stale (-want +got):\n%s", diff)
			}
		})
	}
}
