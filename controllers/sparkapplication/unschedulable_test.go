/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

func TestUnschedulable(t *testing.T) {
	placed := &corev1.Pod{Spec: corev1.PodSpec{NodeName: "node-1"}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	waiting := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending}}
	refused := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pi-driver"}, Status: corev1.PodStatus{
		Phase: corev1.PodPending,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: "Unschedulable", Message: "0/4 nodes are available: 4 Insufficient memory. "}},
	}}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"no pod", nil, ""},
		{"placed", placed, ""},
		{"not looked at yet", waiting, ""},
		{"refused", refused, "driver pod pi-driver cannot be scheduled (Unschedulable): 0/4 nodes are available: 4 Insufficient memory."},
	} {
		got := ""
		if c := unschedulable(tc.pod); c != nil {
			got = unschedulableMessage(tc.pod, c)
		}
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestUnschedulableDriver runs applications whose driver no node can take, through the real
// scheduler: without a timeout the application stays SUBMITTED and says why, in its status,
// its Running condition and an event; with one it fails with that reason and its driver is
// deleted, so it cannot start after the application was declared failed.
func TestUnschedulableDriver(t *testing.T) {
	c := cluster.Client(t)
	nowhere := func(a *v1beta2.SparkApplication) {
		a.Spec.Driver.NodeSelector = map[string]string{"sparkop.dev/no-such-node": "true"}
	}
	wants := "cannot be scheduled (Unschedulable): 0/"
	reasonGiven := func(a *v1beta2.SparkApplication) bool {
		return strings.Contains(a.Status.AppState.ErrorMessage, wants)
	}

	t.Run("waits and says why", func(t *testing.T) {
		e := &env{c: c, ns: cluster.Namespace(t, c, "sparkapp-unplaced"),
			sub: &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}, gate: &gate{}}}
		startManager(t, []string{e.ns}, e.sub, Options{})
		key := e.create(t, newApp(e.ns, "nowhere", nowhere))
		app := e.waitFor(t, key, 30*time.Second, "the scheduler's reason in the status", reasonGiven)
		running := meta.FindStatusCondition(app.Status.Conditions, ConditionRunning)
		got := []any{app.Status.AppState.State, running != nil && running.Reason == "DriverUnschedulable" &&
			running.Message == app.Status.AppState.ErrorMessage}
		if diff := cmp.Diff([]any{v1beta2.ApplicationStateSubmitted, true}, got); diff != "" {
			t.Errorf("[state, Running condition carries the reason] (-want +got):\n%s\nconditions: %+v", diff, app.Status.Conditions)
		}
		e.waitEvents(t, "nowhere", "DriverUnschedulable")
	})

	t.Run("fails after the timeout", func(t *testing.T) {
		e := &env{c: c, ns: cluster.Namespace(t, c, "sparkapp-unplaced-timeout"),
			sub: &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}, gate: &gate{}}}
		startManager(t, []string{e.ns}, e.sub, Options{UnschedulableTimeout: 2 * time.Second})
		key := e.create(t, newApp(e.ns, "nowhere", nowhere))
		app := e.waitState(t, key, v1beta2.ApplicationStateFailed, 40*time.Second)
		if !reasonGiven(app) || !strings.HasSuffix(app.Status.AppState.ErrorMessage, "for more than 2s") {
			t.Errorf("errorMessage = %q, want the scheduler's reason and the timeout", app.Status.AppState.ErrorMessage)
		}
		e.waitEvents(t, "nowhere", "DriverUnschedulable")
		cluster.Eventually(t, 20*time.Second, "the driver deleted", func() (bool, error) {
			pod := &corev1.Pod{}
			err := c.Get(context.Background(), types.NamespacedName{Namespace: e.ns, Name: app.DriverPodName()}, pod)
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return !pod.DeletionTimestamp.IsZero(), err
		})
	})
}
