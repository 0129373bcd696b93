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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestNotPickedUp: a pending driver that no scheduler has looked at (no PodScheduled condition)
// is said to wait for its scheduler once the threshold has passed, not before.
func TestNotPickedUp(t *testing.T) {
	created := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	waiting := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pi-driver", CreationTimestamp: metav1.NewTime(created)},
		Spec: corev1.PodSpec{SchedulerName: "no-such-scheduler"}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	defaulted := waiting.DeepCopy()
	defaulted.Spec.SchedulerName = ""
	placed := waiting.DeepCopy()
	placed.Spec.NodeName = "node-1"
	lookedAt := waiting.DeepCopy()
	lookedAt.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"}}
	gated := waiting.DeepCopy()
	gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "scheduling.sparkop.dev/gang"}, {Name: "example.com/other"}}
	gated.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}}
	ungated := gated.DeepCopy() // gates removed; the condition not updated yet
	ungated.Spec.SchedulingGates = nil
	const threshold = 30 * time.Second
	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		after    time.Duration
		wantMsg  string
		wantWait time.Duration
	}{
		{"before the threshold", waiting, 10 * time.Second, "", 20 * time.Second},
		{"after the threshold", waiting, 31 * time.Second,
			`driver pod pi-driver waits for scheduler "no-such-scheduler": no scheduler has picked it up in 30s`, 0},
		{"default scheduler", defaulted, time.Minute,
			`driver pod pi-driver waits for scheduler "default-scheduler": no scheduler has picked it up in 30s`, 0},
		{"placed", placed, time.Minute, "", 0},
		{"looked at by its scheduler", lookedAt, time.Minute, "", 0},
		{"gated, before the threshold", gated, 10 * time.Second, "", 20 * time.Second},
		{"gated, after the threshold", gated, 31 * time.Second,
			"driver pod pi-driver waits for its scheduling gates to be removed (scheduling.sparkop.dev/gang, example.com/other): no scheduler may place it until they are, and none was in 30s", 0},
		{"gates just removed", ungated, time.Minute, "", 0},
		{"no pod", nil, time.Minute, "", 0},
	} {
		msg, wait := notPickedUp(tc.pod, created.Add(tc.after), threshold)
		if diff := cmp.Diff([]any{tc.wantMsg, tc.wantWait}, []any{msg, wait}); diff != "" {
			t.Errorf("%s: [message, wait] (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestBeyondEveryNode: a driver asking for more of a resource than the largest node has is said
// to, naming the resource; one that fits some node, or nodes unknown, says nothing.
func TestBeyondEveryNode(t *testing.T) {
	pod := func(cpu, mem string) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "spark-kubernetes-driver",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}}}}}
	}
	node := func(cpu, mem string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	}
	nodes := []corev1.ResourceList{node("16", "64Gi"), node("8", "128Gi")}
	withInit := pod("1", "1Gi")
	withInit.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("17")}}}}
	for _, tc := range []struct {
		name  string
		pod   *corev1.Pod
		nodes []corev1.ResourceList
		want  string
	}{
		{"fits", pod("16", "100Gi"), nodes, ""},
		{"too many cores", pod("20", "1Gi"), nodes, "the driver pod asks for more than any node has: cpu 20 (largest node: 16)"},
		{"both", pod("20", "200Gi"), nodes,
			"the driver pod asks for more than any node has: cpu 20 (largest node: 16), memory 200Gi (largest node: 128Gi)"},
		{"an init container", withInit, nodes, "the driver pod asks for more than any node has: cpu 17 (largest node: 16)"},
		{"no nodes known", pod("20", "1Gi"), nil, ""},
	} {
		if got := beyondEveryNode(tc.pod, tc.nodes); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

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
		{"gated: no verdict", &corev1.Pod{Spec: corev1.PodSpec{SchedulingGates: []corev1.PodSchedulingGate{{Name: "g"}}},
			Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
				Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated, Message: "Scheduling is blocked due to non-empty scheduling gates"}}}}, ""},
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

	t.Run("asks for more than any node", func(t *testing.T) {
		e := &env{c: c, ns: cluster.Namespace(t, c, "sparkapp-too-big"),
			sub: &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}, gate: &gate{}}}
		startManager(t, []string{e.ns}, e.sub, Options{})
		key := e.create(t, newApp(e.ns, "huge", func(a *v1beta2.SparkApplication) {
			a.Spec.Driver.Cores = ptr.To[int32](1000) // the local cluster's nodes have 16
		}))
		app := e.waitFor(t, key, 30*time.Second, "the scheduler's reason and the node comparison in the status",
			func(a *v1beta2.SparkApplication) bool {
				return reasonGiven(a) && strings.Contains(a.Status.AppState.ErrorMessage, "more than any node has: cpu 1k")
			})
		if app.Status.AppState.State != v1beta2.ApplicationStateSubmitted {
			t.Errorf("state %s, want SUBMITTED (no timeout set)", app.Status.AppState.State)
		}
	})
}

// TestDriverNotPickedUp: a driver naming a scheduler that does not run stays SUBMITTED, and its
// status says which scheduler it waits for and that none has picked it up.
func TestDriverNotPickedUp(t *testing.T) {
	c := cluster.Client(t)
	e := &env{c: c, ns: cluster.Namespace(t, c, "sparkapp-no-scheduler"),
		sub: &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}, gate: &gate{}}}
	startManager(t, []string{e.ns}, e.sub, Options{NotPickedUpAfter: 2 * time.Second})
	key := e.create(t, newApp(e.ns, "orphan", func(a *v1beta2.SparkApplication) {
		a.Spec.Driver.SchedulerName = ptr.To("no-such-scheduler")
	}))
	app := e.waitFor(t, key, 30*time.Second, "the waiting driver in the status", func(a *v1beta2.SparkApplication) bool {
		return a.Status.AppState.ErrorMessage != ""
	})
	msg := app.Status.AppState.ErrorMessage
	if app.Status.AppState.State != v1beta2.ApplicationStateSubmitted ||
		!strings.Contains(msg, `waits for scheduler "no-such-scheduler": no scheduler has picked it up`) {
		t.Errorf("state %s, errorMessage %q; want SUBMITTED, naming the scheduler no one runs", app.Status.AppState.State, msg)
	}
}
