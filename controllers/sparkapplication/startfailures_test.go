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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

func waitingPod(name, role, submission string, node string, init, main []corev1.ContainerStateWaiting) corev1.Pod {
	pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		v1beta2.SparkRoleLabel: role, v1beta2.LabelSubmissionID: submission}},
		Spec: corev1.PodSpec{NodeName: node}}
	for i, w := range init {
		pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, corev1.ContainerStatus{
			Name: "init-" + string(rune('a'+i)), State: corev1.ContainerState{Waiting: w.DeepCopy()}})
	}
	for i, w := range main {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: "main-" + string(rune('a'+i)), State: corev1.ContainerState{Waiting: w.DeepCopy()}})
	}
	return pod
}

// TestCannotStart: which waiting containers make a placed pod one that cannot start, and how
// the status says so.
func TestCannotStart(t *testing.T) {
	pull := corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: ` Back-off pulling image "x:nope" `}
	creating := corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
	for _, tc := range []struct {
		name string
		pod  corev1.Pod
		want string
	}{
		{"pulling fails", waitingPod("d", "driver", "1", "n", nil, []corev1.ContainerStateWaiting{pull}),
			`driver pod d cannot start: container main-a ImagePullBackOff: Back-off pulling image "x:nope"`},
		{"still creating", waitingPod("d", "driver", "1", "n", nil, []corev1.ContainerStateWaiting{creating}), ""},
		{"not placed yet", waitingPod("d", "driver", "1", "", nil, []corev1.ContainerStateWaiting{pull}), ""},
		{"an init container first", waitingPod("d", "driver", "1", "n",
			[]corev1.ContainerStateWaiting{{Reason: "CreateContainerConfigError", Message: `secret "s" not found`}},
			[]corev1.ContainerStateWaiting{pull}),
			`driver pod d cannot start: container init-a CreateContainerConfigError: secret "s" not found`},
		{"a sidecar", waitingPod("d", "driver", "1", "n", nil, []corev1.ContainerStateWaiting{creating, {Reason: "InvalidImageName"}}),
			`driver pod d cannot start: container main-b InvalidImageName`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if f := cannotStart(&tc.pod); f != nil {
				got = f.describe("driver", tc.pod.Name)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	if f := cannotStart(ptr.To(waitingPod("d", "driver", "1", "n", nil, []corev1.ContainerStateWaiting{{Reason: "ErrImageNeverPull"}}))); f == nil || !f.permanent {
		t.Errorf("ErrImageNeverPull: %+v, want a permanent failure", f)
	}
	if f := cannotStart(ptr.To(waitingPod("d", "driver", "1", "n", nil, []corev1.ContainerStateWaiting{pull}))); f == nil || f.permanent {
		t.Errorf("ImagePullBackOff: %+v, want a failure that may mend", f)
	}
}

// TestExecutorsCannotStart: the message names the executor whose pod name sorts first, counts
// the others, and leaves out other submissions' pods and the driver.
func TestExecutorsCannotStart(t *testing.T) {
	pull := []corev1.ContainerStateWaiting{{Reason: "ErrImagePull", Message: "not found"}}
	ok := []corev1.ContainerStateWaiting{{Reason: "ContainerCreating"}}
	pods := []corev1.Pod{
		waitingPod("pi-exec-3", "executor", "1", "n", nil, pull),
		waitingPod("pi-exec-2", "executor", "1", "n", nil, pull),
		waitingPod("pi-exec-1", "executor", "1", "n", nil, ok),
		waitingPod("pi-exec-0", "executor", "0", "n", nil, pull), // an older submission's
		waitingPod("pi-driver", "driver", "1", "n", nil, pull),
	}
	want := "executor pod pi-exec-2 cannot start: container main-a ErrImagePull: not found (and 1 more executor pods)"
	if got := executorsCannotStart(pods, "1"); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := executorsCannotStart(pods[2:3], "1"); got != "" {
		t.Errorf("every executor can start: got %q", got)
	}
}

// noKubelet is a node name no kubelet (nor kwok) runs.
const noKubelet = "no-kubelet-node"

// bindAndWait binds a pod to a node no kubelet runs (so nothing but the test writes its status)
// and gives it the status a kubelet gives a pod whose containers wait for the given reasons.
func bindAndWait(t *testing.T, c client.Client, pod *corev1.Pod, phase corev1.PodPhase, waiting *corev1.ContainerStateWaiting) {
	t.Helper()
	ctx := context.Background()
	if pod.Spec.NodeName == "" {
		binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
			Target: corev1.ObjectReference{Kind: "Node", Name: noKubelet}}
		if err := c.SubResource("binding").Create(ctx, pod, binding); err != nil {
			t.Fatalf("binding %s: %v", pod.Name, err)
		}
	}
	cluster.Eventually(t, 10*time.Second, "status of "+pod.Name, func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return false, err
		}
		pod.Status.Phase = phase
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.Now()}}
		cs := corev1.ContainerStatus{Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image}
		if waiting != nil {
			cs.State.Waiting = waiting
		} else {
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.Now()}
			cs.Ready = true
		}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
		err := c.Status().Update(ctx, pod)
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// TestDriverCannotStart runs applications whose pods are placed but cannot start, through the
// real API server (the pods on a node no kubelet runs, their status written as a kubelet that
// cannot pull their image writes it): the application says why in its status, its Running
// condition and an event; it fails after the start timeout, or at once for a failure waiting
// cannot mend, with its driver deleted; executors that cannot start are shown while it runs.
func TestDriverCannotStart(t *testing.T) {
	c := cluster.Client(t)
	nowhere := func(a *v1beta2.SparkApplication) {
		a.Spec.Driver.NodeSelector = map[string]string{"sparkop.dev/no-such-node": "true"}
	}
	backOff := &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "spark:nope"`}
	setUp := func(t *testing.T, prefix string, opts Options) (*env, types.NamespacedName, *corev1.Pod) {
		e := &env{c: c, ns: cluster.Namespace(t, c, prefix),
			sub: &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}, gate: &gate{}}}
		startManager(t, []string{e.ns}, e.sub, opts)
		key := e.create(t, newApp(e.ns, "pi", nowhere))
		app := e.waitState(t, key, v1beta2.ApplicationStateSubmitted, 30*time.Second)
		return e, key, e.driver(t, app)
	}
	driverGone := func(t *testing.T, e *env, name string) {
		cluster.Eventually(t, 20*time.Second, "the driver deleted", func() (bool, error) {
			pod := &corev1.Pod{}
			err := c.Get(context.Background(), types.NamespacedName{Namespace: e.ns, Name: name}, pod)
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return !pod.DeletionTimestamp.IsZero(), err
		})
	}

	t.Run("waits and says why", func(t *testing.T) {
		e, key, driver := setUp(t, "sparkapp-cannot-start", Options{})
		bindAndWait(t, c, driver, corev1.PodPending, backOff)
		app := e.waitFor(t, key, 30*time.Second, "the kubelet's reason in the status", func(a *v1beta2.SparkApplication) bool {
			return strings.Contains(a.Status.AppState.ErrorMessage, "cannot start: container spark-kubernetes-driver ImagePullBackOff")
		})
		running := meta.FindStatusCondition(app.Status.Conditions, ConditionRunning)
		got := []any{app.Status.AppState.State, running != nil && running.Reason == "DriverCannotStart"}
		if diff := cmp.Diff([]any{v1beta2.ApplicationStateSubmitted, true}, got); diff != "" {
			t.Errorf("[state, Running condition DriverCannotStart] (-want +got):\n%s\nconditions: %+v", diff, app.Status.Conditions)
		}
		e.waitEvents(t, "pi", "DriverCannotStart")
	})

	t.Run("fails after the timeout", func(t *testing.T) {
		e, key, driver := setUp(t, "sparkapp-start-timeout", Options{DriverStartTimeout: 2 * time.Second})
		bindAndWait(t, c, driver, corev1.PodPending, backOff)
		app := e.waitState(t, key, v1beta2.ApplicationStateFailed, 40*time.Second)
		if msg := app.Status.AppState.ErrorMessage; !strings.Contains(msg, "ImagePullBackOff") || !strings.HasSuffix(msg, "(for more than 2s)") {
			t.Errorf("errorMessage = %q, want the kubelet's reason and the timeout", msg)
		}
		driverGone(t, e, driver.Name)
	})

	t.Run("fails at once when waiting cannot help", func(t *testing.T) {
		e, key, driver := setUp(t, "sparkapp-bad-image", Options{})
		bindAndWait(t, c, driver, corev1.PodPending, &corev1.ContainerStateWaiting{Reason: "InvalidImageName",
			Message: `Failed to apply default image tag "Spark:UPPER": invalid reference format`})
		app := e.waitState(t, key, v1beta2.ApplicationStateFailed, 30*time.Second)
		if msg := app.Status.AppState.ErrorMessage; !strings.Contains(msg, "InvalidImageName: Failed to apply default image tag") {
			t.Errorf("errorMessage = %q, want the kubelet's reason", msg)
		}
		e.waitEvents(t, "pi", "DriverCannotStart")
		driverGone(t, e, driver.Name)
	})

	t.Run("executors that cannot start", func(t *testing.T) {
		e, key, driver := setUp(t, "sparkapp-exec-cannot-start", Options{ExecutorStateBatch: -1})
		bindAndWait(t, c, driver, corev1.PodRunning, nil)
		e.waitState(t, key, v1beta2.ApplicationStateRunning, 30*time.Second)
		exec := executorPod(driver, 1, driver.Labels[v1beta2.LabelSubmissionID], nil)
		exec.Spec.NodeName = noKubelet // as the scheduler would, before kwok could run it
		if err := c.Create(context.Background(), exec); err != nil {
			t.Fatal(err)
		}
		bindAndWait(t, c, exec, corev1.PodPending, backOff)
		app := e.waitFor(t, key, 30*time.Second, "the executor's reason in the status", func(a *v1beta2.SparkApplication) bool {
			return strings.HasPrefix(a.Status.AppState.ErrorMessage, "executor pod pi-exec-1 cannot start: container spark-kubernetes-executor ImagePullBackOff")
		})
		if app.Status.AppState.State != v1beta2.ApplicationStateRunning {
			t.Errorf("state %s, want RUNNING", app.Status.AppState.State)
		}
		e.waitEvents(t, "pi", "ExecutorCannotStart")
		bindAndWait(t, c, exec, corev1.PodRunning, nil)
		e.waitFor(t, key, 30*time.Second, "the message cleared once the executor runs", func(a *v1beta2.SparkApplication) bool {
			return a.Status.AppState.State == v1beta2.ApplicationStateRunning && a.Status.AppState.ErrorMessage == ""
		})
	})
}
