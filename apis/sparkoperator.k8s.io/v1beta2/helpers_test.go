/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package v1beta2

import (
	"math"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestApplicationStateIsTerminal(t *testing.T) {
	terminal := map[ApplicationStateType]bool{
		ApplicationStateCompleted: true,
		ApplicationStateFailed:    true,
	}
	all := []ApplicationStateType{
		ApplicationStateNew, ApplicationStateSubmitted, ApplicationStateRunning,
		ApplicationStateCompleted, ApplicationStateFailed, ApplicationStateFailedSubmission,
		ApplicationStatePendingRerun, ApplicationStateInvalidating, ApplicationStateSucceeding,
		ApplicationStateFailing, ApplicationStateUnknown, ApplicationStateSuspending,
		ApplicationStateSuspended, ApplicationStateResuming,
	}
	for _, s := range all {
		if got := s.IsTerminal(); got != terminal[s] {
			t.Errorf("%q.IsTerminal() = %v, want %v", s, got, terminal[s])
		}
		app := &SparkApplication{Status: SparkApplicationStatus{AppState: ApplicationState{State: s}}}
		if got := app.IsFinished(); got != terminal[s] {
			t.Errorf("IsFinished() in state %q = %v, want %v", s, got, terminal[s])
		}
	}
}

func TestPodStateIsTerminal(t *testing.T) {
	for _, tc := range []struct {
		driver   DriverState
		executor ExecutorState
		want     bool
	}{
		{DriverStatePending, ExecutorStatePending, false},
		{DriverStateRunning, ExecutorStateRunning, false},
		{DriverStateUnknown, ExecutorStateUnknown, false},
		{DriverStateCompleted, ExecutorStateCompleted, true},
		{DriverStateFailed, ExecutorStateFailed, true},
	} {
		if got := tc.driver.IsTerminal(); got != tc.want {
			t.Errorf("%q.IsTerminal() = %v, want %v", tc.driver, got, tc.want)
		}
		if got := tc.executor.IsTerminal(); got != tc.want {
			t.Errorf("%q.IsTerminal() = %v, want %v", tc.executor, got, tc.want)
		}
	}
}

func TestIsSuspended(t *testing.T) {
	for _, tc := range []struct {
		name    string
		suspend *bool
		want    bool
	}{
		{"unset", nil, false},
		{"false", ptrTo(false), false},
		{"true", ptrTo(true), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := &SparkApplication{Spec: SparkApplicationSpec{Suspend: tc.suspend}}
			if got := app.IsSuspended(); got != tc.want {
				t.Errorf("SparkApplication.IsSuspended() = %v, want %v", got, tc.want)
			}
			sched := &ScheduledSparkApplication{Spec: ScheduledSparkApplicationSpec{Suspend: tc.suspend}}
			if got := sched.IsSuspended(); got != tc.want {
				t.Errorf("ScheduledSparkApplication.IsSuspended() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDynamicAllocationEnabled(t *testing.T) {
	for _, tc := range []struct {
		name string
		da   *DynamicAllocation
		want bool
	}{
		{"unset", nil, false},
		{"disabled", &DynamicAllocation{}, false},
		{"enabled", &DynamicAllocation{Enabled: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := &SparkApplication{Spec: SparkApplicationSpec{DynamicAllocation: tc.da}}
			if got := app.DynamicAllocationEnabled(); got != tc.want {
				t.Errorf("DynamicAllocationEnabled() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestExpirationTime(t *testing.T) {
	end := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		state  ApplicationStateType
		ttl    *int64
		end    time.Time
		want   time.Time
		wantOK bool
	}{
		{"finished with ttl", ApplicationStateCompleted, ptrTo(int64(30)), end, end.Add(30 * time.Second), true},
		{"failed with zero ttl", ApplicationStateFailed, ptrTo(int64(0)), end, end, true},
		{"no ttl", ApplicationStateCompleted, nil, end, time.Time{}, false},
		{"still running", ApplicationStateRunning, ptrTo(int64(30)), end, time.Time{}, false},
		{"no termination time", ApplicationStateFailed, ptrTo(int64(30)), time.Time{}, time.Time{}, false},
		// The largest int64 once expired 6 s after termination: the multiplication wrapped.
		{"largest ttl", ApplicationStateCompleted, ptrTo(int64(math.MaxInt64)), end, end.Add(math.MaxInt64), true},
		{"largest ttl that fits", ApplicationStateCompleted, ptrTo(int64(math.MaxInt64 / int64(time.Second))), end,
			end.Add(time.Duration(math.MaxInt64/int64(time.Second)) * time.Second), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := &SparkApplication{
				Spec: SparkApplicationSpec{TimeToLiveSeconds: tc.ttl},
				Status: SparkApplicationStatus{
					AppState:        ApplicationState{State: tc.state},
					TerminationTime: metav1.NewTime(tc.end),
				},
			}
			got, ok := app.ExpirationTime()
			if ok != tc.wantOK || !got.Equal(tc.want) {
				t.Errorf("ExpirationTime() = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestSeconds(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want time.Duration
	}{
		{-1, 0},
		{0, 0},
		{5, 5 * time.Second},
		{math.MaxInt64 / int64(time.Second), time.Duration(math.MaxInt64/int64(time.Second)) * time.Second},
		{math.MaxInt64/int64(time.Second) + 1, math.MaxInt64},
		{math.MaxInt64, math.MaxInt64},
	} {
		if got := Seconds(tc.in); got != tc.want {
			t.Errorf("Seconds(%d) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestAddToScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	for _, kind := range []string{"SparkApplication", "SparkApplicationList", "ScheduledSparkApplication", "ScheduledSparkApplicationList"} {
		if !s.Recognizes(GroupVersion.WithKind(kind)) {
			t.Errorf("scheme does not recognize %s", kind)
		}
	}
	if got, want := Resource("sparkapplications").String(), "sparkapplications.sparkoperator.k8s.io"; got != want {
		t.Errorf("Resource() = %q, want %q", got, want)
	}
}
