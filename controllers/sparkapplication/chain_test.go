/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
)

// TestEndedRunMovesOnInOneReconcile: a driver that ended takes its application to what follows
// in one reconcile. A run nothing follows is written COMPLETED or FAILED at once (one status
// write); a rerun passes through SUCCEEDING or FAILING (two writes, no trip through the queue
// in between); a retry that must wait still waits. The run's batch scheduler releases it once,
// after what follows is stored.
func TestEndedRunMovesOnInOneReconcile(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{v1beta2.AddToScheme, corev1.AddToScheme, networkingv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		phase   corev1.PodPhase
		restart v1beta2.RestartPolicy
		written []v1beta2.ApplicationStateType // the states written, in order
	}{
		{"completed", corev1.PodSucceeded, v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyNever},
			[]v1beta2.ApplicationStateType{v1beta2.ApplicationStateCompleted}},
		{"completed, restart policy OnFailure", corev1.PodSucceeded, v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyOnFailure,
			OnFailureRetries: ptr.To[int32](1)}, []v1beta2.ApplicationStateType{v1beta2.ApplicationStateCompleted}},
		{"completed, restart policy Always", corev1.PodSucceeded, v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyAlways},
			[]v1beta2.ApplicationStateType{v1beta2.ApplicationStateSucceeding, v1beta2.ApplicationStatePendingRerun}},
		{"failed, no retry", corev1.PodFailed, v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyNever},
			[]v1beta2.ApplicationStateType{v1beta2.ApplicationStateFailed}},
		{"failed, retries used up", corev1.PodFailed, v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyOnFailure,
			OnFailureRetries: ptr.To[int32](0)}, []v1beta2.ApplicationStateType{v1beta2.ApplicationStateFailed}},
		{"failed, a retry at once", corev1.PodFailed, v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyOnFailure,
			OnFailureRetries: ptr.To[int32](1), OnFailureRetryInterval: ptr.To[int64](0)},
			[]v1beta2.ApplicationStateType{v1beta2.ApplicationStateFailing, v1beta2.ApplicationStatePendingRerun}},
		{"failed, a retry a minute later", corev1.PodFailed, v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyOnFailure,
			OnFailureRetries: ptr.To[int32](1), OnFailureRetryInterval: ptr.To[int64](60)},
			[]v1beta2.ApplicationStateType{v1beta2.ApplicationStateFailing}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "uid"},
				Spec: v1beta2.SparkApplicationSpec{RestartPolicy: tt.restart}}
			app.Status = v1beta2.SparkApplicationStatus{SubmissionID: "s1", ExecutionAttempts: 1,
				AppState:   v1beta2.ApplicationState{State: v1beta2.ApplicationStateRunning},
				DriverInfo: v1beta2.DriverInfo{PodName: "a-driver"}, LastSubmittedSpecHash: specHash(&app.Spec)}
			driver := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a-driver", Labels: map[string]string{
				v1beta2.LabelAppName: "a", v1beta2.SparkRoleLabel: v1beta2.SparkRoleDriver, v1beta2.LabelSubmissionID: "s1"}},
				Status: corev1.PodStatus{Phase: tt.phase}}
			app.Status.BatchScheduler = "recorder"
			var written []v1beta2.ApplicationStateType
			cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(app, driver).WithStatusSubresource(app).
				WithIndex(&corev1.Pod{}, indexPodsByApp, podApp).
				WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string,
					obj client.Object, opts ...client.SubResourceUpdateOption) error {
					if a, ok := obj.(*v1beta2.SparkApplication); ok && sub == "status" {
						written = append(written, a.Status.AppState.State)
					}
					return c.SubResource(sub).Update(ctx, obj, opts...)
				}}).Build()
			rec := &releaseRecorder{c: cl}
			ends := &endRecorder{}
			r := &Reconciler{Client: cl, APIReader: cl, Clock: clocktesting.NewFakeClock(time.Now()),
				Schedulers: scheduler.NewRegistry(rec), Metrics: ends}
			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(app)}); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			got := &v1beta2.SparkApplication{}
			if err := cl.Get(context.Background(), client.ObjectKeyFromObject(app), got); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(written, tt.written) {
				t.Errorf("states written in one reconcile: %v, want %v", written, tt.written)
			}
			want := tt.written[len(tt.written)-1]
			if got.Status.AppState.State != want {
				t.Errorf("after one reconcile: %s, want %s", got.Status.AppState.State, want)
			}
			if ended := []v1beta2.ApplicationStateType{tt.written[0]}; !slices.Equal(ends.finished, ended) {
				t.Errorf("the run's end counted as %v, want once, as %v", ends.finished, ended)
			}
			if want := []v1beta2.ApplicationStateType{want}; !slices.Equal(rec.storedAtRelease, want) {
				t.Errorf("released with the stored state %v, want %v", rec.storedAtRelease, want)
			}
		})
	}
}

// releaseRecorder is a batch scheduler that records, at each release, the application's state
// as stored.
type releaseRecorder struct {
	c               client.Client
	storedAtRelease []v1beta2.ApplicationStateType
}

func (r *releaseRecorder) Name() string { return "recorder" }

func (r *releaseRecorder) Admit(context.Context, scheduler.Workload) (scheduler.Decision, error) {
	return scheduler.Decision{Admit: true}, nil
}

func (r *releaseRecorder) Release(ctx context.Context, w scheduler.Workload) error {
	app := &v1beta2.SparkApplication{}
	if err := r.c.Get(ctx, w.Key.NamespacedName, app); err != nil {
		return err
	}
	r.storedAtRelease = append(r.storedAtRelease, app.Status.AppState.State)
	return nil
}

// endRecorder is a MetricsRecorder that records the states runs were counted as ended in.
type endRecorder struct {
	finished []v1beta2.ApplicationStateType
}

func (*endRecorder) Submitted(*v1beta2.SparkApplication, time.Duration) {}
func (*endRecorder) SubmissionFailed(*v1beta2.SparkApplication)         {}
func (*endRecorder) Started(*v1beta2.SparkApplication, time.Duration)   {}
func (e *endRecorder) Finished(_ *v1beta2.SparkApplication, state v1beta2.ApplicationStateType, _ time.Duration) {
	e.finished = append(e.finished, state)
}
func (*endRecorder) AppStateChanged(*v1beta2.SparkApplication, v1beta2.ApplicationStateType, v1beta2.ApplicationStateType) {
}
func (*endRecorder) ExecutorStates(*v1beta2.SparkApplication, int, int, int) {}
func (*endRecorder) Created(*v1beta2.SparkApplication)                       {}
func (*endRecorder) Forget(*v1beta2.SparkApplication)                        {}
