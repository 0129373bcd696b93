/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package scheduledsparkapplication

// Integration tests against the local control plane. The reconciler is called directly with
// a fake clock that the tests step, so no test waits for a schedule.

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/internal/cronschedule"
	"github.com/sparkop/spark-operator/test/cluster"
)

type harness struct {
	t        *testing.T
	c        client.Client
	ns       string
	clock    *clocktesting.FakeClock
	recorder *events.FakeRecorder
	r        *Reconciler
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	c := cluster.Client(t)
	h := &harness{
		t:        t,
		c:        c,
		ns:       cluster.Namespace(t, c, "scheduled"),
		clock:    clocktesting.NewFakeClock(time.Now()),
		recorder: events.NewFakeRecorder(100),
	}
	h.r = &Reconciler{Client: c, Scheme: cluster.Scheme, Clock: h.clock, Recorder: h.recorder}
	return h
}

func template() v1beta2.SparkApplicationSpec {
	return v1beta2.SparkApplicationSpec{
		Type:                v1beta2.SparkApplicationTypeScala,
		SparkVersion:        "4.0.4",
		MainApplicationFile: "local:///opt/spark/examples/jars/spark-examples.jar",
		MainClass:           ptr("org.apache.spark.examples.SparkPi"),
	}
}

func ptr[T any](v T) *T { return &v }

// create stores a ScheduledSparkApplication and points the fake clock at its creation, the
// time its first run is counted from.
func (h *harness) create(name string, mutate func(*v1beta2.ScheduledSparkApplicationSpec)) *v1beta2.ScheduledSparkApplication {
	h.t.Helper()
	ssa := &v1beta2.ScheduledSparkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.ns, Labels: map[string]string{"team": "data"}},
		Spec: v1beta2.ScheduledSparkApplicationSpec{
			Schedule: "@every 1h",
			TimeZone: "UTC",
			Template: template(),
		},
	}
	if mutate != nil {
		mutate(&ssa.Spec)
	}
	if err := h.c.Create(context.Background(), ssa); err != nil {
		h.t.Fatalf("creating %s: %v", name, err)
	}
	h.clock.SetTime(ssa.CreationTimestamp.Time)
	return ssa
}

func (h *harness) reconcile(name string) ctrl.Result {
	h.t.Helper()
	res, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: h.ns, Name: name}})
	if err != nil {
		h.t.Fatalf("Reconcile at %s: %v", h.clock.Now().UTC().Format(time.RFC3339), err)
	}
	return res
}

func (h *harness) get(name string) *v1beta2.ScheduledSparkApplication {
	h.t.Helper()
	ssa := &v1beta2.ScheduledSparkApplication{}
	if err := h.c.Get(context.Background(), types.NamespacedName{Namespace: h.ns, Name: name}, ssa); err != nil {
		h.t.Fatal(err)
	}
	return ssa
}

// runs returns the names of the existing runs of name that are not being deleted, sorted.
func (h *harness) runs(name string) []string {
	h.t.Helper()
	list := &v1beta2.SparkApplicationList{}
	if err := h.c.List(context.Background(), list, client.InNamespace(h.ns),
		client.MatchingLabels{v1beta2.LabelScheduledAppName: name}); err != nil {
		h.t.Fatal(err)
	}
	var names []string
	for _, app := range list.Items {
		if app.DeletionTimestamp.IsZero() {
			names = append(names, app.Name)
		}
	}
	sort.Strings(names)
	return names
}

// setState plays the part of the SparkApplication controller.
func (h *harness) setState(name string, state v1beta2.ApplicationStateType) {
	h.t.Helper()
	app := &v1beta2.SparkApplication{}
	if err := h.c.Get(context.Background(), types.NamespacedName{Namespace: h.ns, Name: name}, app); err != nil {
		h.t.Fatal(err)
	}
	app.Status.AppState.State = state
	if err := h.c.Status().Update(context.Background(), app); err != nil {
		h.t.Fatalf("setting state of %s: %v", name, err)
	}
}

// events drains the recorded events, keeping type and reason only.
func (h *harness) events() []string {
	var got []string
	for {
		select {
		case e := <-h.recorder.Events:
			f := strings.Fields(e)
			got = append(got, f[0]+" "+f[1])
		default:
			return got
		}
	}
}

func TestFirstRun(t *testing.T) {
	h := newHarness(t)
	ssa := h.create("nightly", func(s *v1beta2.ScheduledSparkApplicationSpec) { s.Schedule = "*/10 * * * *" })
	sched, err := cronschedule.ParseSchedule("*/10 * * * *", "UTC")
	if err != nil {
		t.Fatal(err)
	}
	first := sched.Next(ssa.CreationTimestamp.Time)
	runName := RunName("nightly", first)

	res := h.reconcile("nightly")
	if diff := cmp.Diff(first.Sub(h.clock.Now()), res.RequeueAfter); diff != "" {
		t.Errorf("RequeueAfter before the first run (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string(nil), h.runs("nightly")); diff != "" {
		t.Errorf("runs before the first run is due (-want +got):\n%s", diff)
	}

	h.clock.SetTime(first.Add(-time.Second))
	h.reconcile("nightly")
	if diff := cmp.Diff([]string(nil), h.runs("nightly")); diff != "" {
		t.Errorf("runs a second before the first run (-want +got):\n%s", diff)
	}

	h.clock.SetTime(first)
	res = h.reconcile("nightly")
	h.reconcile("nightly") // a second pass must not start the run again
	if diff := cmp.Diff(10*time.Minute, res.RequeueAfter); diff != "" {
		t.Errorf("RequeueAfter after the first run (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{runName}, h.runs("nightly")); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}

	app := &v1beta2.SparkApplication{}
	if err := h.c.Get(context.Background(), types.NamespacedName{Namespace: h.ns, Name: runName}, app); err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{"team": "data", v1beta2.LabelScheduledAppName: "nightly"}
	if diff := cmp.Diff(wantLabels, app.Labels); diff != "" {
		t.Errorf("run labels (-want +got):\n%s", diff)
	}
	wantOwners := []metav1.OwnerReference{{
		APIVersion:         v1beta2.GroupVersion.String(),
		Kind:               "ScheduledSparkApplication",
		Name:               "nightly",
		UID:                ssa.UID,
		Controller:         ptr(true),
		BlockOwnerDeletion: ptr(true),
	}}
	if diff := cmp.Diff(wantOwners, app.OwnerReferences); diff != "" {
		t.Errorf("run owner references (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(template(), app.Spec); diff != "" {
		t.Errorf("run spec (-want +got):\n%s", diff)
	}

	got := h.get("nightly").Status
	want := v1beta2.ScheduledSparkApplicationStatus{
		ScheduleState: v1beta2.ScheduleStateScheduled,
		LastRun:       metav1.NewTime(first),
		NextRun:       metav1.NewTime(first.Add(10 * time.Minute)),
		LastRunName:   runName,
	}
	if diff := cmp.Diff(want, got, cmpTimes); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Normal RunCreated"}, h.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// cmpTimes compares instants, whatever their location.
var cmpTimes = cmp.Comparer(func(a, b metav1.Time) bool { return a.Time.Equal(b.Time) })

func TestConcurrencyForbid(t *testing.T) {
	h := newHarness(t)
	ssa := h.create("forbid", func(s *v1beta2.ScheduledSparkApplicationSpec) { s.ConcurrencyPolicy = v1beta2.ConcurrencyForbid })
	first := ssa.CreationTimestamp.Add(time.Hour)
	second := first.Add(time.Hour)

	h.clock.SetTime(first)
	h.reconcile("forbid")
	h.setState(RunName("forbid", first), v1beta2.ApplicationStateRunning)

	h.clock.SetTime(second.Add(time.Minute))
	h.reconcile("forbid")
	if diff := cmp.Diff([]string{RunName("forbid", first)}, h.runs("forbid")); diff != "" {
		t.Errorf("runs while the first is RUNNING (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Normal RunCreated", "Normal RunSkipped"}, h.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	h.setState(RunName("forbid", first), v1beta2.ApplicationStateCompleted)
	h.reconcile("forbid")
	want := []string{RunName("forbid", first), RunName("forbid", second)}
	if diff := cmp.Diff(want, h.runs("forbid")); diff != "" {
		t.Errorf("runs after the first COMPLETED (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(RunName("forbid", second), h.get("forbid").Status.LastRunName); diff != "" {
		t.Errorf("lastRunName (-want +got):\n%s", diff)
	}
}

func TestConcurrencyReplace(t *testing.T) {
	h := newHarness(t)
	ssa := h.create("replace", func(s *v1beta2.ScheduledSparkApplicationSpec) { s.ConcurrencyPolicy = v1beta2.ConcurrencyReplace })
	first := ssa.CreationTimestamp.Add(time.Hour)
	second := first.Add(time.Hour)

	h.clock.SetTime(first)
	h.reconcile("replace")
	h.setState(RunName("replace", first), v1beta2.ApplicationStateRunning)

	h.clock.SetTime(second)
	h.reconcile("replace")
	if diff := cmp.Diff([]string{RunName("replace", second)}, h.runs("replace")); diff != "" {
		t.Errorf("runs after the replacement (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Normal RunCreated", "Normal RunReplaced", "Normal RunCreated"}, h.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestConcurrencyAllow(t *testing.T) {
	h := newHarness(t)
	ssa := h.create("allow", nil)
	first := ssa.CreationTimestamp.Add(time.Hour)
	second := first.Add(time.Hour)

	h.clock.SetTime(first)
	h.reconcile("allow")
	h.setState(RunName("allow", first), v1beta2.ApplicationStateRunning)
	h.clock.SetTime(second)
	h.reconcile("allow")
	want := []string{RunName("allow", first), RunName("allow", second)}
	if diff := cmp.Diff(want, h.runs("allow")); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}

func TestHistoryLimits(t *testing.T) {
	h := newHarness(t)
	ssa := h.create("history", func(s *v1beta2.ScheduledSparkApplicationSpec) {
		s.SuccessfulRunHistoryLimit = ptr(int32(2))
		s.FailedRunHistoryLimit = ptr(int32(1))
	})
	outcomes := []v1beta2.ApplicationStateType{
		v1beta2.ApplicationStateCompleted,
		v1beta2.ApplicationStateFailed,
		v1beta2.ApplicationStateCompleted,
		v1beta2.ApplicationStateFailed,
		v1beta2.ApplicationStateCompleted,
		v1beta2.ApplicationStateRunning,
	}
	var names []string
	for i, state := range outcomes {
		at := ssa.CreationTimestamp.Add(time.Duration(i+1) * time.Hour)
		h.clock.SetTime(at)
		h.reconcile("history")
		names = append(names, RunName("history", at))
		h.setState(names[i], state)
	}
	h.reconcile("history")

	want := []string{names[2], names[3], names[4], names[5]}
	sort.Strings(want)
	if diff := cmp.Diff(want, h.runs("history")); diff != "" {
		t.Errorf("runs kept (-want +got):\n%s", diff)
	}
	st := h.get("history").Status
	got := [2][]string{st.PastSuccessfulRunNames, st.PastFailedRunNames}
	wantPast := [2][]string{{names[4], names[2]}, {names[3]}}
	if diff := cmp.Diff(wantPast, got); diff != "" {
		t.Errorf("status past (successful, failed) run names (-want +got):\n%s", diff)
	}
}

func TestSuspend(t *testing.T) {
	h := newHarness(t)
	ssa := h.create("suspended", func(s *v1beta2.ScheduledSparkApplicationSpec) { s.Suspend = ptr(true) })
	created := ssa.CreationTimestamp.Time

	// Two runs fall due while suspended.
	h.clock.SetTime(created.Add(2*time.Hour + 30*time.Minute))
	h.reconcile("suspended")
	if diff := cmp.Diff([]string(nil), h.runs("suspended")); diff != "" {
		t.Errorf("runs while suspended (-want +got):\n%s", diff)
	}
	st := h.get("suspended").Status
	if diff := cmp.Diff(metav1.NewTime(created.Add(3*time.Hour)), st.NextRun, cmpTimes); diff != "" {
		t.Errorf("nextRun while suspended (-want +got):\n%s", diff)
	}

	ssa = h.get("suspended")
	ssa.Spec.Suspend = ptr(false)
	if err := h.c.Update(context.Background(), ssa); err != nil {
		t.Fatal(err)
	}
	h.reconcile("suspended")
	// Only the most recent missed run starts, not one per missed time.
	if diff := cmp.Diff([]string{RunName("suspended", created.Add(2*time.Hour))}, h.runs("suspended")); diff != "" {
		t.Errorf("runs after resuming (-want +got):\n%s", diff)
	}
}

func TestFailedValidation(t *testing.T) {
	tests := []struct {
		name       string
		schedule   string
		timeZone   string
		wantReason string // substring
	}{
		{name: "bad-schedule", schedule: "every day at noon", wantReason: `invalid schedule "every day at noon"`},
		{name: "bad-time-zone", schedule: "@hourly", timeZone: "Mars/Olympus", wantReason: `invalid time zone "Mars/Olympus"`},
		{name: "bad-cron-tz", schedule: "CRON_TZ=Mars/Olympus @hourly", timeZone: "", wantReason: "bad location Mars/Olympus"},
		{name: "never-fires", schedule: "0 0 30 2 *", timeZone: "UTC", wantReason: "never fires"},
	}
	h := newHarness(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.t = t
			ssa := h.create(tt.name, func(s *v1beta2.ScheduledSparkApplicationSpec) {
				s.Schedule, s.TimeZone = tt.schedule, tt.timeZone
			})
			h.clock.SetTime(ssa.CreationTimestamp.Add(48 * time.Hour))
			res := h.reconcile(tt.name)
			h.reconcile(tt.name) // the warning is not repeated

			st := h.get(tt.name).Status
			if diff := cmp.Diff(v1beta2.ScheduleStateFailedValidation, st.ScheduleState); diff != "" {
				t.Errorf("scheduleState (-want +got):\n%s", diff)
			}
			if !strings.Contains(st.Reason, tt.wantReason) {
				t.Errorf("reason = %q, want it to contain %q", st.Reason, tt.wantReason)
			}
			if diff := cmp.Diff(ctrl.Result{}, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string(nil), h.runs(tt.name)); diff != "" {
				t.Errorf("runs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"Warning FailedValidation"}, h.events()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}

			// Fixing the spec schedules it again.
			ssa = h.get(tt.name)
			ssa.Spec.Schedule, ssa.Spec.TimeZone = "@hourly", "UTC"
			if err := h.c.Update(context.Background(), ssa); err != nil {
				t.Fatal(err)
			}
			h.reconcile(tt.name)
			st = h.get(tt.name).Status
			got := [2]string{string(st.ScheduleState), st.Reason}
			if diff := cmp.Diff([2]string{string(v1beta2.ScheduleStateScheduled), ""}, got); diff != "" {
				t.Errorf("(scheduleState, reason) after the fix (-want +got):\n%s", diff)
			}
			h.events()
		})
	}
}

func TestDeletedScheduledApplication(t *testing.T) {
	h := newHarness(t)
	ssa := h.create("gone", nil)
	if err := h.c.Delete(context.Background(), ssa); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ctrl.Result{}, h.reconcile("gone")); diff != "" {
		t.Errorf("result for a deleted object (-want +got):\n%s", diff)
	}
}

// The manager is built but not started: starting it would run the controller on real time.
func TestSetupWithManager(t *testing.T) {
	mgr, err := ctrl.NewManager(cluster.Config(t), ctrl.Options{
		Scheme:  cluster.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatalf("SetupWithManager: %v", err)
	}
	if r.Client == nil || r.Scheme == nil || r.Clock == nil || r.Recorder == nil {
		t.Errorf("SetupWithManager left a dependency unset: %+v", r)
	}
}
