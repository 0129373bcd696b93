/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

func podIn(phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app-driver"}, Status: corev1.PodStatus{Phase: phase}}
}

func TestDriverState(t *testing.T) {
	tests := []struct {
		pod  *corev1.Pod
		want v1beta2.DriverState
	}{
		{nil, v1beta2.DriverStateUnknown},
		{podIn(""), v1beta2.DriverStatePending},
		{podIn(corev1.PodPending), v1beta2.DriverStatePending},
		{podIn(corev1.PodRunning), v1beta2.DriverStateRunning},
		{podIn(corev1.PodSucceeded), v1beta2.DriverStateCompleted},
		{podIn(corev1.PodFailed), v1beta2.DriverStateFailed},
		{podIn(corev1.PodUnknown), v1beta2.DriverStateUnknown},
		{podIn("Bogus"), v1beta2.DriverStateUnknown},
	}
	for _, tt := range tests {
		if got := driverState(tt.pod); got != tt.want {
			name := "nil"
			if tt.pod != nil {
				name = string(tt.pod.Status.Phase)
			}
			t.Errorf("driverState(%s) = %s, want %s", name, got, tt.want)
		}
	}
}

func TestDriverFailureMessage(t *testing.T) {
	terminated := func(name string, code int32, reason, msg string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, Message: msg}}}
	}
	tests := []struct {
		name     string
		statuses []corev1.ContainerStatus
		reason   string
		message  string
		want     string
	}{
		{name: "no container status", want: "driver pod app-driver failed"},
		{name: "evicted", reason: "Evicted", message: "low on memory",
			want: "driver pod app-driver failed (Evicted): low on memory"},
		{name: "driver container preferred over sidecar",
			statuses: []corev1.ContainerStatus{terminated("sidecar", 2, "", ""),
				terminated(v1beta2.SparkDriverContainerName, 1, "Error", "Exception in thread main\n")},
			want: "driver pod app-driver failed with exit code 1 (Error): Exception in thread main"},
		{name: "any container when no driver container",
			statuses: []corev1.ContainerStatus{terminated("main", 137, "OOMKilled", "")},
			want:     "driver pod app-driver failed with exit code 137 (OOMKilled)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := podIn(corev1.PodFailed)
			pod.Status.ContainerStatuses = tt.statuses
			pod.Status.Reason, pod.Status.Message = tt.reason, tt.message
			if diff := cmp.Diff(tt.want, driverFailureMessage(pod)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if got := driverFailureMessage(nil); got == "" {
		t.Error("nil pod gave an empty message")
	}
}

// TestLastLines: a failed driver's log tail is cut to its last lines and to a size, at a line's
// start where it can be and never inside a character.
func TestLastLines(t *testing.T) {
	var log []string
	for i := 1; i <= 30; i++ {
		log = append(log, fmt.Sprintf("line %d", i))
	}
	for _, tc := range []struct {
		name   string
		in     string
		n, max int
		want   string
	}{
		{"the last lines", strings.Join(log, "\n") + "\n", 3, 1024, "line 28\nline 29\nline 30"},
		{"blank lines skipped", "a\n\n  \nb\r\n\n", 5, 1024, "a\nb"},
		{"cut at a line's start", "first line\nsecond\nthird", 3, 12, "second\nthird"},
		{"one long line cut at a character", "ééééé", 1, 5, "éé"},
		{"empty", "\n \n", 3, 10, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lastLines(tc.in, tc.n, tc.max); got != tc.want {
				t.Errorf("lastLines(%q, %d, %d) = %q, want %q", tc.in, tc.n, tc.max, got, tc.want)
			}
		})
	}
}

func executor(id int, sub string, phase corev1.PodPhase) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "app-exec-" + strconv.Itoa(id),
			Labels: map[string]string{
				v1beta2.SparkRoleLabel:       v1beta2.SparkRoleExecutor,
				v1beta2.SparkExecutorIDLabel: strconv.Itoa(id),
				v1beta2.LabelSubmissionID:    sub,
			},
			CreationTimestamp: metav1.NewTime(time.Unix(int64(id), 0)),
		},
		Status: corev1.PodStatus{Phase: phase},
	}
}

func TestExecutorStates(t *testing.T) {
	type states = map[string]v1beta2.ExecutorState
	const (
		pending   = v1beta2.ExecutorStatePending
		running   = v1beta2.ExecutorStateRunning
		completed = v1beta2.ExecutorStateCompleted
		failed    = v1beta2.ExecutorStateFailed
		unknown   = v1beta2.ExecutorStateUnknown
	)
	driverPod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app-driver", Labels: map[string]string{
		v1beta2.SparkRoleLabel: v1beta2.SparkRoleDriver, v1beta2.LabelSubmissionID: "s1"}}}
	tests := []struct {
		name   string
		prev   states
		pods   []corev1.Pod
		driver v1beta2.DriverState
		max    int
		want   states
	}{
		{name: "nothing", driver: v1beta2.DriverStateRunning, max: 10, want: nil},
		{
			name: "phases map to states",
			pods: []corev1.Pod{executor(1, "s1", corev1.PodPending), executor(2, "s1", corev1.PodRunning),
				executor(3, "s1", corev1.PodSucceeded), executor(4, "s1", corev1.PodFailed),
				executor(5, "s1", corev1.PodUnknown)},
			driver: v1beta2.DriverStateRunning, max: 10,
			want: states{"app-exec-1": pending, "app-exec-2": running, "app-exec-3": completed,
				"app-exec-4": failed, "app-exec-5": unknown},
		},
		{
			name:   "other submissions and the driver are ignored",
			pods:   []corev1.Pod{executor(1, "old", corev1.PodFailed), driverPod, executor(2, "s1", corev1.PodRunning)},
			driver: v1beta2.DriverStateRunning, max: 10,
			want: states{"app-exec-2": running},
		},
		{
			name:   "vanished executors while the driver runs are unknown; finished ones keep their state",
			prev:   states{"app-exec-1": running, "app-exec-2": failed},
			driver: v1beta2.DriverStateRunning, max: 10,
			want: states{"app-exec-1": unknown, "app-exec-2": failed},
		},
		{
			name:   "vanished executors of a completed driver completed",
			prev:   states{"app-exec-1": running},
			driver: v1beta2.DriverStateCompleted, max: 10,
			want: states{"app-exec-1": completed},
		},
		{
			name:   "vanished executors of a failed driver failed",
			prev:   states{"app-exec-1": pending},
			driver: v1beta2.DriverStateFailed, max: 10,
			want: states{"app-exec-1": failed},
		},
		{
			name: "capped to the most recent",
			prev: states{"app-exec-1": failed, "app-exec-2": completed},
			pods: []corev1.Pod{executor(3, "s1", corev1.PodRunning), executor(10, "s1", corev1.PodRunning),
				executor(4, "s1", corev1.PodFailed)},
			driver: v1beta2.DriverStateRunning, max: 3,
			want: states{"app-exec-10": running, "app-exec-4": failed, "app-exec-3": running},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := executorStates(tt.prev, tt.pods, "s1", tt.driver, tt.max)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewlyFailedExecutors(t *testing.T) {
	prev := map[string]v1beta2.ExecutorState{"a": v1beta2.ExecutorStateFailed, "b": v1beta2.ExecutorStateRunning}
	now := map[string]v1beta2.ExecutorState{"a": v1beta2.ExecutorStateFailed, "b": v1beta2.ExecutorStateFailed,
		"c": v1beta2.ExecutorStateFailed, "d": v1beta2.ExecutorStateRunning}
	if diff := cmp.Diff([]string{"b", "c"}, newlyFailedExecutors(prev, now)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSpecHashIgnoresSuspendAndTTL(t *testing.T) {
	base := v1beta2.SparkApplicationSpec{MainApplicationFile: "local:///app.jar"}
	ttl, yes := int64(30), true
	tests := []struct {
		name   string
		change func(*v1beta2.SparkApplicationSpec)
		same   bool
	}{
		{"suspend", func(s *v1beta2.SparkApplicationSpec) { s.Suspend = &yes }, true},
		{"ttl", func(s *v1beta2.SparkApplicationSpec) { s.TimeToLiveSeconds = &ttl }, true},
		{"arguments", func(s *v1beta2.SparkApplicationSpec) { s.Arguments = []string{"x"} }, false},
	}
	for _, tt := range tests {
		changed := base.DeepCopy()
		tt.change(changed)
		if got := specHash(&base) == specHash(changed); got != tt.same {
			t.Errorf("%s: same hash = %v, want %v", tt.name, got, tt.same)
		}
	}
}

func TestRetryDecisions(t *testing.T) {
	one := int32(1)
	tests := []struct {
		name                    string
		policy                  v1beta2.RestartPolicy
		execAttempts, subAttmps int32
		wantFailure, wantSubmit bool
	}{
		{name: "never", policy: v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyNever}, execAttempts: 1, subAttmps: 1},
		{name: "default is never", execAttempts: 1, subAttmps: 1},
		{name: "on failure within retries", policy: v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyOnFailure,
			OnFailureRetries: &one, OnSubmissionFailureRetries: &one}, execAttempts: 1, subAttmps: 1,
			wantFailure: true, wantSubmit: true},
		{name: "on failure, retries used", policy: v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyOnFailure,
			OnFailureRetries: &one, OnSubmissionFailureRetries: &one}, execAttempts: 2, subAttmps: 2},
		{name: "on failure without retries", policy: v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyOnFailure},
			execAttempts: 1, subAttmps: 1},
		{name: "always, unbounded", policy: v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyAlways},
			execAttempts: 9, subAttmps: 9, wantFailure: true, wantSubmit: true},
		{name: "always, bounded", policy: v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyAlways,
			OnFailureRetries: &one, OnSubmissionFailureRetries: &one}, execAttempts: 2, subAttmps: 2},
	}
	for _, tt := range tests {
		app := &v1beta2.SparkApplication{Spec: v1beta2.SparkApplicationSpec{RestartPolicy: tt.policy},
			Status: v1beta2.SparkApplicationStatus{ExecutionAttempts: tt.execAttempts, SubmissionAttempts: tt.subAttmps}}
		if got := retryAfterFailure(app); got != tt.wantFailure {
			t.Errorf("%s: retryAfterFailure = %v, want %v", tt.name, got, tt.wantFailure)
		}
		if got := retryAfterSubmissionFailure(app); got != tt.wantSubmit {
			t.Errorf("%s: retryAfterSubmissionFailure = %v, want %v", tt.name, got, tt.wantSubmit)
		}
	}
}

func TestTrimPodForCache(t *testing.T) {
	// What the pod asks for stays: it tells a driver no node can take (beyondEveryNode).
	requests := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", Labels: map[string]string{v1beta2.SparkRoleLabel: "driver"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "operator"}}},
		Spec: corev1.PodSpec{NodeName: "n1", SchedulerName: "volcano", Containers: []corev1.Container{{Name: v1beta2.SparkDriverContainerName,
			Image: "spark", Env: []corev1.EnvVar{{Name: "A", Value: "b"}}, Resources: requests}}, Volumes: []corev1.Volume{{Name: "v"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	got, err := TrimPodForCache(pod)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", Labels: map[string]string{v1beta2.SparkRoleLabel: "driver"}},
		Spec: corev1.PodSpec{NodeName: "n1", SchedulerName: "volcano",
			Containers: []corev1.Container{{Name: v1beta2.SparkDriverContainerName, Resources: requests}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trimmed pod (-want +got):\n%s", diff)
	}
	if len(pod.ManagedFields) != 1 || len(pod.Spec.Volumes) != 1 {
		t.Error("the transform changed its input")
	}
	if other, _ := TrimPodForCache("not a pod"); other != "not a pod" {
		t.Errorf("non-pods must pass through, got %v", other)
	}
}

// TestDriverLost: a deleted driver still not gone nor finished past its deletion deadline and
// the slack is lost; before then the wait is returned; a finished or undeleted one is not lost.
func TestDriverLost(t *testing.T) {
	deleted := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	terminating := func(phase corev1.PodPhase) *corev1.Pod {
		pod := podIn(phase)
		pod.Spec.NodeName = "node-1"
		pod.DeletionTimestamp = &metav1.Time{Time: deleted}
		return pod
	}
	const slack = 10 * time.Second
	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		after    time.Duration
		wantMsg  string
		wantWait time.Duration
	}{
		{"within the slack", terminating(corev1.PodRunning), 4 * time.Second, "", 6 * time.Second},
		{"before the deadline", terminating(corev1.PodRunning), -20 * time.Second, "", 30 * time.Second},
		{"past it", terminating(corev1.PodRunning), 75 * time.Second,
			"driver pod app-driver is lost: deleted at 2026-01-01T12:00:00Z, its node node-1 has not stopped it 1m15s later", 0},
		{"pending past it", terminating(corev1.PodPending), time.Minute,
			"driver pod app-driver is lost: deleted at 2026-01-01T12:00:00Z, its node node-1 has not stopped it 1m0s later", 0},
		{"finished", terminating(corev1.PodFailed), time.Hour, "", 0},
		{"not deleted", podIn(corev1.PodRunning), time.Hour, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, wait := driverLost(tc.pod, deleted.Add(tc.after), slack)
			if diff := cmp.Diff([]any{tc.wantMsg, tc.wantWait}, []any{msg, wait}); diff != "" {
				t.Errorf("[message, wait] (-want +got):\n%s", diff)
			}
		})
	}
}
