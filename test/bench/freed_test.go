/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// at is t0 plus s seconds.
func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func TestFreedToDriver(t *testing.T) {
	// waiting is an application never admitted: one waited throughout.
	waiting := runSpan{}
	ms := func(ms ...float64) []time.Duration {
		var out []time.Duration
		for _, m := range ms {
			out = append(out, time.Duration(m*float64(time.Millisecond)))
		}
		return out
	}
	cases := []struct {
		name string
		runs []runSpan
		want freedWaits
	}{{
		name: "the next run admitted onto a freed node: from the end to its driver",
		runs: []runSpan{
			{admitted: at(0), driver: at(1), freed: at(30), nodes: []string{"n1", "n2"}},
			{admitted: at(30.1), driver: at(30.4), nodes: []string{"n2"}},
			waiting,
		},
		want: freedWaits{toDriver: ms(400), toAdmitted: ms(100)},
	}, {
		name: "a run admitted before the end does not take its room, though its driver comes after",
		runs: []runSpan{
			{admitted: at(0), driver: at(1), freed: at(30), nodes: []string{"n1"}},
			{admitted: at(29), driver: at(30.2), nodes: []string{"n1"}},
			{admitted: at(31), driver: at(32), nodes: []string{"n1"}},
			waiting,
		},
		want: freedWaits{toDriver: ms(2000), toAdmitted: ms(1000)},
	}, {
		name: "a run admitted onto other nodes does not take it",
		runs: []runSpan{
			{admitted: at(0), driver: at(1), freed: at(30), nodes: []string{"n1"}},
			{admitted: at(30.1), driver: at(30.2), nodes: []string{"n2"}},
			{admitted: at(35), driver: at(36), nodes: []string{"n3", "n1"}},
			waiting,
		},
		want: freedWaits{toDriver: ms(6000), toAdmitted: ms(5000)},
	}, {
		name: "the first admitted takes it, whichever node, even if another's driver came first",
		runs: []runSpan{
			{admitted: at(0), driver: at(1), freed: at(30), nodes: []string{"n1", "n2"}},
			{admitted: at(31), driver: at(34), nodes: []string{"n2"}},
			{admitted: at(32), driver: at(33), nodes: []string{"n1"}},
			waiting,
		},
		want: freedWaits{toDriver: ms(4000), toAdmitted: ms(1000)},
	}, {
		name: "two ends can be taken by the same run",
		runs: []runSpan{
			{admitted: at(0), driver: at(1), freed: at(30), nodes: []string{"n1"}},
			{admitted: at(0), driver: at(1), freed: at(31), nodes: []string{"n1"}},
			{admitted: at(32), driver: at(33), nodes: []string{"n1"}},
			waiting,
		},
		want: freedWaits{toDriver: ms(2000, 3000), toAdmitted: ms(1000, 2000)},
	}, {
		name: "an end with no run after it on its nodes is unmatched",
		runs: []runSpan{
			{admitted: at(0), driver: at(1), freed: at(30), nodes: []string{"n1"}},
			{admitted: at(31), driver: at(32), nodes: []string{"n2"}},
			waiting,
		},
		want: freedWaits{unmatched: 1},
	}, {
		name: "an end after the last admission, nothing waiting, is not counted",
		runs: []runSpan{
			{admitted: at(0), driver: at(1), freed: at(30), nodes: []string{"n1"}},
			{admitted: at(10), driver: at(11), freed: at(40), nodes: []string{"n1"}},
		},
		want: freedWaits{},
	}, {
		name: "a run admitted whose driver never appeared takes nothing",
		runs: []runSpan{
			{admitted: at(0), driver: at(1), freed: at(30), nodes: []string{"n1"}},
			{admitted: at(31), nodes: []string{"n1"}},
			{admitted: at(33), driver: at(34), nodes: []string{"n1"}},
		},
		want: freedWaits{toDriver: ms(4000), toAdmitted: ms(3000)},
	}, {
		name: "a driver seen before its admission counts as no wait",
		runs: []runSpan{
			{admitted: at(0), driver: at(1), freed: at(30), nodes: []string{"n1"}},
			{admitted: at(30.5), driver: at(29.9), nodes: []string{"n1"}},
			waiting,
		},
		want: freedWaits{toDriver: ms(0), toAdmitted: ms(500)},
	}, {
		name: "no runs",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := freedToDriver(tc.runs)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(freedWaits{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("freedToDriver (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	ten := make([]time.Duration, 10)
	for i := range ten {
		ten[i] = time.Duration(i+1) * time.Millisecond // 1 … 10 ms
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond // 1 … 100 ms
	}
	cases := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"none", nil, 50, 0},
		{"one", []time.Duration{7}, 99, 7},
		{"p50 of ten is the fifth", ten, 50, 5 * time.Millisecond},
		{"p99 of ten is the largest", ten, 99, 10 * time.Millisecond},
		{"p99 of a hundred is the 99th", hundred, 99, 99 * time.Millisecond},
		{"p100 is the largest", hundred, 100, 100 * time.Millisecond},
		{"p0 is the smallest", hundred, 0, time.Millisecond},
	}
	for _, tc := range cases {
		if got := percentile(tc.sorted, tc.p); got != tc.want {
			t.Errorf("%s: percentile(%v) = %v, want %v", tc.name, tc.p, got, tc.want)
		}
	}
}

// TestRunSpans: what the watches record is what freedToDriver matches: the driver's
// appearance and end, the nodes of all the run's pods, the admission.
func TestRunSpans(t *testing.T) {
	pod := func(app, role, node string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1beta2.LabelAppName: app, v1beta2.SparkRoleLabel: role}},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
	}
	reservation := func(app string) *schedv1alpha1.Reservation {
		return &schedv1alpha1.Reservation{Spec: schedv1alpha1.ReservationSpec{Workload: schedv1alpha1.WorkloadReference{Kind: "SparkApplication", Name: app}}}
	}
	s := newRunSpans()
	pods, res := s.podHandler(), s.reservationHandler()
	res.OnAdd(reservation("a"), false)
	pods.OnAdd(pod("a", v1beta2.SparkRoleDriver, "", corev1.PodPending), false)
	pods.OnUpdate(nil, pod("a", v1beta2.SparkRoleDriver, "n1", corev1.PodRunning))
	pods.OnAdd(pod("a", v1beta2.SparkRoleExecutor, "n2", corev1.PodRunning), false)
	pods.OnDelete(pod("a", v1beta2.SparkRoleExecutor, "n2", corev1.PodRunning))
	pods.OnUpdate(nil, pod("a", v1beta2.SparkRoleDriver, "n1", corev1.PodSucceeded))
	pods.OnAdd(pod("b", v1beta2.SparkRoleDriver, "", corev1.PodPending), false)
	pods.OnDelete(pod("b", v1beta2.SparkRoleDriver, "", corev1.PodPending))
	pods.OnAdd(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1beta2.LabelAppName: "c"}}}, false) // not Spark's

	type seen struct {
		Admitted, Driver, Freed bool
		Nodes                   []string
	}
	got := map[string]seen{}
	for _, sp := range s.spans(3) {
		got[sp.app] = seen{!sp.admitted.IsZero(), !sp.driver.IsZero(), !sp.freed.IsZero(), sp.nodes}
	}
	want := map[string]seen{
		"a": {Admitted: true, Driver: true, Freed: true, Nodes: []string{"n1", "n2"}},
		"b": {Driver: true, Freed: true},
		"":  {}, // the third application, never seen: it waited throughout
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
}

func TestScaleQueues(t *testing.T) {
	type queue struct {
		Name     string
		Priority int32
		CPU, Mem string
	}
	cases := []struct {
		name        string
		n           int
		cpu, memory string
		want        []queue
	}{{
		name: "a share of three times the cluster, priorities in four levels",
		n:    5, cpu: "1600", memory: "6400Gi",
		want: []queue{
			{"p-q00", 0, "960", "3840Gi"}, {"p-q01", 10, "960", "3840Gi"}, {"p-q02", 20, "960", "3840Gi"},
			{"p-q03", 30, "960", "3840Gi"}, {"p-q04", 0, "960", "3840Gi"},
		},
	}, {
		name: "never less than the largest gang",
		n:    2, cpu: "16", memory: "64Gi",
		want: []queue{{"p-q00", 0, "32", "96Gi"}, {"p-q01", 10, "32", "96Gi"}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []queue
			for _, q := range scaleQueues("p", tc.n, resource.MustParse(tc.cpu), resource.MustParse(tc.memory)) {
				got = append(got, queue{q.Name, q.Spec.Priority, q.Spec.Quota.Cpu().String(), q.Spec.Quota.Memory().String()})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("queues (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScaleApp(t *testing.T) {
	queues := scaleQueues("p", 3, resource.MustParse("100"), resource.MustParse("100Gi"))
	type app struct {
		Queue     string
		Executors int32
	}
	var got []app
	for i := range 12 {
		a := scaleApp("ns", i, queues)
		got = append(got, app{*a.Spec.BatchSchedulerOptions.Queue, *a.Spec.Executor.Instances})
	}
	// Each queue gets one application of each size in turn.
	want := []app{
		{"p-q00", 2}, {"p-q00", 4}, {"p-q00", 8}, {"p-q00", 12},
		{"p-q01", 2}, {"p-q01", 4}, {"p-q01", 8}, {"p-q01", 12},
		{"p-q02", 2}, {"p-q02", 4}, {"p-q02", 8}, {"p-q02", 12},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("applications (-want +got):\n%s", diff)
	}
}
