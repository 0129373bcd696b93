/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkplay

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/executors"
)

// pod is a Spark pod of application app's run "app-run": a driver or executor, on node (empty:
// not bound), in phase.
func pod(app, role, name, node string, phase corev1.PodPhase, conditions ...corev1.PodCondition) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), Labels: map[string]string{
			v1beta2.LabelAppName: app, v1beta2.SparkRoleLabel: role, v1beta2.LabelSubmissionID: app + "-run"}},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: phase, Conditions: conditions},
	}
}

var unschedulableCondition = corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
	Reason: corev1.PodReasonUnschedulable, Message: "0/4 nodes are available"}

func TestObserve(t *testing.T) {
	running := pod("a", v1beta2.SparkRoleDriver, "a-driver", "n1", corev1.PodRunning)
	ended := pod("a", v1beta2.SparkRoleDriver, "a-driver", "n1", corev1.PodSucceeded)
	bound := pod("a", v1beta2.SparkRoleExecutor, "a-exec-1", "n2", corev1.PodRunning)
	waiting := pod("a", v1beta2.SparkRoleExecutor, "a-exec-1", "", corev1.PodPending)
	refused := pod("a", v1beta2.SparkRoleExecutor, "a-exec-1", "", corev1.PodPending, unschedulableCondition)
	other := pod("b", v1beta2.SparkRoleDriver, "b-driver", "n3", corev1.PodRunning)
	for _, tc := range []struct {
		name string
		opts Options
		// groupMade: all of a's executors were made.
		groupMade   bool
		rounds      [][]corev1.Pod
		wantPartial []string
		wantPeak    int
		wantBound   int
	}{
		{name: "an executor bound while its driver runs", rounds: [][]corev1.Pod{{running, waiting}, {running, bound}, {ended, bound}},
			wantPeak: 1, wantBound: 1},
		{name: "an executor without a node when its driver ends", rounds: [][]corev1.Pod{{running, waiting}, {ended, waiting}},
			wantPartial: []string{"a"}, wantPeak: 1},
		{name: "an executor first seen after its driver ended, never bound", rounds: [][]corev1.Pod{{ended, waiting}},
			wantPartial: []string{"a"}},
		{name: "an executor gone before it got a node", rounds: [][]corev1.Pod{{running, other, waiting}, {running, other}},
			wantPartial: []string{"a"}, wantPeak: 2},
		{name: "unschedulable while the driver runs, the whole group made", opts: Options{UnschedulableIsPartial: true}, groupMade: true,
			rounds: [][]corev1.Pod{{running, refused}}, wantPartial: []string{"a"}, wantPeak: 1},
		{name: "unschedulable while the group is still being made", opts: Options{UnschedulableIsPartial: true},
			rounds: [][]corev1.Pod{{running, refused}, {running, bound}}, wantPeak: 1, wantBound: 1},
		{name: "unschedulable, not counted for schedulers that mark a gathering group so", groupMade: true,
			rounds: [][]corev1.Pod{{running, refused}, {running, bound}}, wantPeak: 1, wantBound: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(nil, "ns", tc.opts)
			p.played[running.UID] = tc.groupMade
			for _, pods := range tc.rounds {
				p.Observe(pods)
			}
			partial := p.Partial()
			var got []string
			for app := range partial {
				got = append(got, app)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.wantPartial) {
				t.Errorf("ran in part: %v, want %v", partial, tc.wantPartial)
			}
			if p.PeakDrivers() != tc.wantPeak {
				t.Errorf("peak drivers %d, want %d", p.PeakDrivers(), tc.wantPeak)
			}
			if p.Bound("a") != tc.wantBound {
				t.Errorf("bound %d, want %d", p.Bound("a"), tc.wantBound)
			}
		})
	}
}

func TestInitialExecutors(t *testing.T) {
	three, two, five := int32(3), int32(2), int32(5)
	for _, tc := range []struct {
		name string
		spec v1beta2.SparkApplicationSpec
		want int
	}{
		{name: "instances", spec: v1beta2.SparkApplicationSpec{Executor: v1beta2.ExecutorSpec{Instances: &three}}, want: 3},
		{name: "none", want: 0},
		{name: "dynamic allocation, the largest of instances, initial and minimum",
			spec: v1beta2.SparkApplicationSpec{Executor: v1beta2.ExecutorSpec{Instances: &two},
				DynamicAllocation: &v1beta2.DynamicAllocation{Enabled: true, InitialExecutors: &three, MinExecutors: &five}}, want: 5},
		{name: "dynamic allocation off", spec: v1beta2.SparkApplicationSpec{Executor: v1beta2.ExecutorSpec{Instances: &two},
			DynamicAllocation: &v1beta2.DynamicAllocation{MinExecutors: &five}}, want: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := InitialExecutors(&v1beta2.SparkApplication{Spec: tc.spec}); got != tc.want {
				t.Errorf("InitialExecutors = %d, want %d", got, tc.want)
			}
		})
	}
}

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, v1beta2.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return scheme
}

// TestEndDrivers: with EndDrivers, a driver is ended (kwok's exit code 0 after 0 seconds) once
// every executor made for it has been on a node (and, EndDriversAfterExecutors, has ended
// there), and not before. Each case's steps change the second executor, then play once.
func TestEndDrivers(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	bind := func(e *corev1.Pod) { e.Spec.NodeName, e.Status.Phase = "n3", corev1.PodRunning }
	startedAgo := func(d time.Duration) func(*corev1.Pod) {
		return func(e *corev1.Pod) {
			bind(e)
			e.Status.StartTime = &metav1.Time{Time: now.Add(-d)}
		}
	}
	succeed := func(e *corev1.Pod) { e.Status.Phase = corev1.PodSucceeded }
	for _, tc := range []struct {
		name  string
		opts  Options
		steps []func(*corev1.Pod)
		// ended is whether the driver is ended after each step.
		ended []bool
	}{
		{name: "once bound", opts: Options{EndDrivers: true}, steps: []func(*corev1.Pod){nil, bind}, ended: []bool{false, true}},
		{name: "once bound, one already ended", opts: Options{EndDrivers: true}, steps: []func(*corev1.Pod){bind, succeed},
			ended: []bool{true, true}},
		{name: "after the executors ended", opts: Options{EndDrivers: true, EndDriversAfterExecutors: true},
			steps: []func(*corev1.Pod){nil, bind, succeed}, ended: []bool{false, false, true}},
		// The first executor ended already; the second runs its 30 s.
		{name: "after the executors ran their time", opts: Options{EndDrivers: true, EndDriversAfterExecutors: true},
			steps: []func(*corev1.Pod){startedAgo(10 * time.Second), startedAgo(30 * time.Second)}, ended: []bool{false, true}},
		{name: "never without EndDrivers", steps: []func(*corev1.Pod){bind, succeed}, ended: []bool{false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			driver := pod("a", v1beta2.SparkRoleDriver, "a-driver", "n1", corev1.PodRunning)
			one := pod("a", v1beta2.SparkRoleExecutor, "a-exec-1", "n2", corev1.PodSucceeded)
			two := pod("a", v1beta2.SparkRoleExecutor, "a-exec-2", "", corev1.PodPending)
			c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(&driver, &one, &two).Build()
			p := New(c, "", tc.opts)
			p.played[driver.UID], p.made[driver.UID], p.hold["a-run"] = true, 2, 30*time.Second
			p.now = func() time.Time { return now }
			for i, step := range tc.steps {
				if step != nil {
					if err := c.Get(context.Background(), client.ObjectKeyFromObject(&two), &two); err != nil {
						t.Fatal(err)
					}
					step(&two)
					status := two.Status
					if err := c.Update(context.Background(), &two); err != nil {
						t.Fatal(err)
					}
					two.Status = status
					if err := c.Status().Update(context.Background(), &two); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := p.Step(context.Background()); err != nil {
					t.Fatal(err)
				}
				got := &corev1.Pod{}
				if err := c.Get(context.Background(), client.ObjectKeyFromObject(&driver), got); err != nil {
					t.Fatal(err)
				}
				if ended := got.Annotations[executors.AnnotationExitCode] == "0" && got.Annotations[executors.AnnotationRunSeconds] == "0"; ended != tc.ended[i] {
					t.Fatalf("after step %d: driver ended %v, want %v", i, ended, tc.ended[i])
				}
			}
		})
	}
}

// TestPeakCreated: a driver not bound yet counts as a run started, not as one running.
func TestPeakCreated(t *testing.T) {
	p := New(nil, "ns", Options{})
	p.Observe([]corev1.Pod{
		pod("a", v1beta2.SparkRoleDriver, "a-driver", "n1", corev1.PodRunning),
		pod("b", v1beta2.SparkRoleDriver, "b-driver", "", corev1.PodPending),
		pod("c", v1beta2.SparkRoleDriver, "c-driver", "n1", corev1.PodSucceeded),
	})
	if p.PeakDrivers() != 1 || p.PeakCreated() != 2 {
		t.Errorf("peak drivers %d, created %d; want 1, 2", p.PeakDrivers(), p.PeakCreated())
	}
}
