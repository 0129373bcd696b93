/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	gt "github.com/sparkop/spark-operator/scheduler/gang/gangtest"
	"github.com/sparkop/spark-operator/scheduler/gang/status"
	"github.com/sparkop/spark-operator/sparkpod"
)

// fixedDemand is a session demand of a 1-CPU server and n 2-CPU executors.
func fixedDemand(n int32) SessionDemand {
	return func(*v1alpha1.SparkConnect) (sparkpod.Demand, error) {
		return sparkpod.Demand{
			Driver:   sparkpod.PodDemand{Role: sparkpod.RoleDriver, Count: 1, Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
			Executor: sparkpod.PodDemand{Role: sparkpod.RoleExecutor, Count: n, Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}},
		}, nil
	}
}

// session is a SparkConnect named name with server submission sub, state and server pod name.
func session(name, sub string, state v1alpha1.SparkConnectState, podName string, res *Reservation) *v1alpha1.SparkConnect {
	c := &v1alpha1.SparkConnect{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	c.Status.State, c.Status.Server.SubmissionID, c.Status.Server.PodName = state, sub, podName
	if res != nil {
		c.Annotations = map[string]string{AnnotationAdmission: res.encode()}
	}
	return c
}

func TestSessionObject(t *testing.T) {
	res := &Reservation{SubmissionID: "s1", Queue: "default", Driver: "n1"}
	deleting := session("c", "s1", v1alpha1.SparkConnectStateReady, "c-server", res)
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	tests := []struct {
		name                  string
		conn                  *v1alpha1.SparkConnect
		awaiting, holds, live bool
	}{
		{name: "no server submission yet", conn: session("c", "", "", "", nil)},
		{name: "queued: submission recorded, no server pod", conn: session("c", "s1", v1alpha1.SparkConnectStateProvisioning, "", nil), awaiting: true, holds: true},
		{name: "admitted, server not made yet", conn: session("c", "s1", v1alpha1.SparkConnectStateProvisioning, "", res), awaiting: true, holds: true, live: true},
		{name: "running", conn: session("c", "s1", v1alpha1.SparkConnectStateReady, "c-server", res), holds: true, live: true},
		{name: "next server: the old reservation holds nothing", conn: session("c", "s2", v1alpha1.SparkConnectStateProvisioning, "", res), awaiting: true, holds: true},
		{name: "server failed", conn: session("c", "s1", v1alpha1.SparkConnectStateFailed, "c-server", res)},
		{name: "being deleted", conn: deleting},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := sessionObject(tt.conn, fixedDemand(1))
			_, live := o.liveReservation()
			got := []bool{o.waits(), o.holds, live}
			if d := cmp.Diff([]bool{tt.awaiting, tt.holds, tt.live}, got); d != "" {
				t.Errorf("[awaiting, holds, live reservation] (-want +got):\n%s", d)
			}
			want := core.Key{Kind: scheduler.KindSession, NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
			if o.Key != want {
				t.Errorf("key %v, want %v", o.Key, want)
			}
		})
	}
}

func TestMemberOf(t *testing.T) {
	labelled := func(labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Labels: labels}}
	}
	app := func(name string) core.Key {
		return core.Key{Kind: scheduler.KindApplication, NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}
	sess := func(name string) core.Key {
		return core.Key{Kind: scheduler.KindSession, NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want boundMember
		ok   bool
	}{
		{name: "application driver", ok: true, want: boundMember{app("x"), "s", v1beta2.SparkRoleDriver},
			pod: labelled(map[string]string{v1beta2.LabelAppName: "x", v1beta2.LabelSubmissionID: "s", v1beta2.SparkRoleLabel: v1beta2.SparkRoleDriver})},
		{name: "session server counts as its driver", ok: true, want: boundMember{sess("x"), "s", v1beta2.SparkRoleDriver},
			pod: labelled(map[string]string{v1alpha1.LabelConnectName: "x", v1beta2.LabelSubmissionID: "s", v1beta2.SparkRoleLabel: v1alpha1.SparkRoleConnectServer})},
		{name: "session executor, even with an app-name label of its session's", ok: true, want: boundMember{sess("x"), "s", v1beta2.SparkRoleExecutor},
			pod: labelled(map[string]string{v1alpha1.LabelConnectName: "x", v1beta2.LabelAppName: "x", v1beta2.LabelSubmissionID: "s", v1beta2.SparkRoleLabel: v1beta2.SparkRoleExecutor})},
		{name: "another workload's pod", pod: labelled(map[string]string{"app": "web"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := memberOf(tt.pod)
			if ok != tt.ok || got != tt.want {
				t.Errorf("memberOf = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestSessionAndApplicationOfOneName: a session and an application of the same name in the same
// namespace are two workloads: each is admitted on its own, with its own reservation, and the
// pods of one never count as the other's.
func TestSessionAndApplicationOfOneName(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := app("same", "s1", v1beta2.ApplicationStateRunning, 2, &Reservation{SubmissionID: "s1", Queue: "default", Driver: "n1",
		Executors: map[string]int32{"n1": 2}, Admitted: now})
	waiting := session("same", "s1", v1alpha1.SparkConnectStateProvisioning, "", nil)
	w := world{
		Nodes:  []corev1.Node{gt.ClusterNode("n1"), gt.ClusterNode("n2")},
		Queues: []schedv1alpha1.Queue{{ObjectMeta: metav1.ObjectMeta{Name: "default"}}},
		// The application's driver is bound; a pod labelled as the session's server (same name,
		// same submission ID) must not be taken for it.
		Pods:      []corev1.Pod{gt.Pod("same", "s1", "driver", "n1", "1", corev1.PodRunning)},
		Workloads: []object{applicationObject(&a), sessionObject(waiting, fixedDemand(2))},
	}
	snap, err := snapshot(w, snapshotOptions{ReservationTimeout: time.Minute, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Workloads) != 2 {
		t.Fatalf("%d workloads, want the application and the session", len(snap.Workloads))
	}
	out := core.Schedule(snap, core.Options{})
	var admitted []string
	for _, ad := range out.Admitted {
		admitted = append(admitted, ad.Key.String())
	}
	if d := cmp.Diff([]string{"ns/same (SparkConnect)"}, admitted); d != "" {
		t.Errorf("admitted (-want +got):\n%s", d)
	}
	// The application's gang (1 + 2×2 CPU) and the session's (1 + 2×2) both count in the queue.
	st := status.Queues(snap, out)["default"]
	cpu := st.Admitted[corev1.ResourceCPU]
	if st.AdmittedApplications != 2 || cpu.String() != "10" {
		t.Errorf("queue status: %d admitted using %s CPU, want 2 using 10", st.AdmittedApplications, cpu.String())
	}
}

// TestDemandMemo: an application's demand is worked out once per spec generation, again when
// the spec changes, and forgotten once no cycle counts the application (finished, or deleted).
func TestDemandMemo(t *testing.T) {
	var m demandMemo
	computed := 0
	compute := func(cpu string) func() (sparkpod.Demand, error) {
		return func() (sparkpod.Demand, error) {
			computed++
			return sparkpod.Demand{Driver: sparkpod.PodDemand{Count: 1, Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}, nil
		}
	}
	cpuOf := func(demand func() (sparkpod.Demand, error)) string {
		d, err := demand()
		if err != nil {
			t.Fatal(err)
		}
		q := d.Driver.Requests[corev1.ResourceCPU]
		return q.String()
	}
	admitted := &Reservation{SubmissionID: "s1", Queue: "default", Driver: "n1"}
	// there is the application as the cache shows it before a step; a step with none has it deleted.
	there := func(state v1beta2.ApplicationStateType, res *Reservation) []object {
		a := app("a", "s1", state, 2, res)
		a.UID = "uid"
		return gangApps([]v1beta2.SparkApplication{a})
	}
	steps := []struct {
		name       string
		before     []object
		generation int64
		cpu        string // what computing it now would give
		want       string
		computed   int
	}{
		{"first read: computed", there(v1beta2.ApplicationStateNew, nil), 1, "1", "1", 1},
		{"same generation: remembered", there(v1beta2.ApplicationStateNew, nil), 1, "2", "1", 1},
		{"spec changed: computed again", there(v1beta2.ApplicationStateNew, nil), 2, "2", "2", 2},
		{"admitted and running: remembered", there(v1beta2.ApplicationStateRunning, admitted), 2, "3", "2", 2},
		{"completed, and asked again: computed afresh", there(v1beta2.ApplicationStateCompleted, admitted), 2, "4", "4", 3},
		{"deleted and created again: computed afresh", nil, 2, "5", "5", 4},
	}
	for _, s := range steps {
		m.keepFor(s.before)
		if got := cpuOf(m.of("uid", s.generation, compute(s.cpu))); got != s.want || computed != s.computed {
			t.Errorf("%s: cpu %s, computed %d times; want %s, %d", s.name, got, computed, s.want, s.computed)
		}
	}
}
