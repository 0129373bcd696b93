/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package reservation

import (
	"slices"
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
)

var admitted = time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)

func cpu(n string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(n)}
}

// res is a reservation of app's run "run-1": the driver on driverNode, executors on the nodes
// given (one entry per executor), bound naming the members its status shows bound.
func res(app, driverNode string, executors []string, bound ...string) *schedv1alpha1.Reservation {
	r := &schedv1alpha1.Reservation{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: app},
		Spec: schedv1alpha1.ReservationSpec{Workload: schedv1alpha1.WorkloadReference{Kind: KindApplication, Name: app},
			Queue: "q", Run: "run-1", Admitted: metav1.NewTime(admitted),
			Members: []schedv1alpha1.ReservationMember{{Name: "driver", Role: "driver", Node: driverNode, Requests: cpu("1")}}},
		Status: schedv1alpha1.ReservationStatus{BoundMembers: bound},
	}
	for i, n := range executors {
		r.Spec.Members = append(r.Spec.Members, schedv1alpha1.ReservationMember{
			Name: "executor-" + string(rune('1'+i)), Role: "executor", Node: n, Requests: cpu("2")})
	}
	return r
}

// pod is a pod of app's run in role; node, if not empty, is where the gang scheduler released it.
func pod(app, run, role, node string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: app + "-" + role, Labels: map[string]string{
		v1beta2.LabelAppName: app, v1beta2.LabelSubmissionID: run, v1beta2.SparkRoleLabel: role}}}
	if node != "" {
		p.Annotations = map[string]string{AnnotationNode: node}
	}
	return p
}

func other() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
}

func TestHeldOn(t *testing.T) {
	cases := []struct {
		name    string
		timeout time.Duration
		now     time.Time
		res     []*schedv1alpha1.Reservation
		node    string
		on      []*corev1.Pod
		pod     *corev1.Pod
		want    Holding
	}{{
		name: "nothing planned on the node",
		res:  []*schedv1alpha1.Reservation{res("a", "n1", []string{"n1"})},
		node: "n2", pod: other(),
	}, {
		name: "a pod of no application sees the whole gang held",
		res:  []*schedv1alpha1.Reservation{res("a", "n1", []string{"n1", "n1", "n2"})},
		node: "n1", pod: other(),
		want: Holding{Requests: cpu("5"), Reservations: []string{"ns/a"}, By: map[string]corev1.ResourceList{"ns/a": cpu("5")}},
	}, {
		name: "members whose pods are on the node hold nothing more",
		res:  []*schedv1alpha1.Reservation{res("a", "n1", []string{"n1", "n1"})},
		node: "n1", on: []*corev1.Pod{pod("a", "run-1", "driver", ""), pod("a", "run-1", "executor", "n1")}, pod: other(),
		want: Holding{Requests: cpu("2"), Reservations: []string{"ns/a"}, By: map[string]corev1.ResourceList{"ns/a": cpu("2")}},
	}, {
		name: "members the status shows bound but whose pods are not there yet (let go) still hold",
		res:  []*schedv1alpha1.Reservation{res("a", "n1", []string{"n1"}, "driver", "executor-1")},
		node: "n1", pod: other(),
		want: Holding{Requests: cpu("3"), Reservations: []string{"ns/a"}, By: map[string]corev1.ResourceList{"ns/a": cpu("3")}},
	}, {
		name: "a pod of another run of the same application is no member",
		res:  []*schedv1alpha1.Reservation{res("a", "n1", []string{"n1"})},
		node: "n1", on: []*corev1.Pod{pod("a", "run-0", "driver", "")}, pod: other(),
		want: Holding{Requests: cpu("3"), Reservations: []string{"ns/a"}, By: map[string]corev1.ResourceList{"ns/a": cpu("3")}},
	}, {
		name: "the executor being placed takes one of its run's executor slots there",
		res:  []*schedv1alpha1.Reservation{res("a", "n1", []string{"n1", "n1"})},
		node: "n1", pod: pod("a", "run-1", "executor", "n1"),
		want: Holding{Requests: cpu("3"), Reservations: []string{"ns/a"}, By: map[string]corev1.ResourceList{"ns/a": cpu("3")}},
	}, {
		name: "an executor not released onto the node (beyond the plan) takes no slot",
		res:  []*schedv1alpha1.Reservation{res("a", "n1", []string{"n1"})},
		node: "n1", on: []*corev1.Pod{pod("a", "run-1", "executor", "")}, pod: pod("a", "run-1", "executor", "n2"),
		want: Holding{Requests: cpu("3"), Reservations: []string{"ns/a"}, By: map[string]corev1.ResourceList{"ns/a": cpu("3")}},
	}, {
		name: "the driver being placed takes its slot, not an executor's",
		res:  []*schedv1alpha1.Reservation{res("a", "n1", []string{"n1"})},
		node: "n1", pod: pod("a", "run-1", "driver", ""),
		want: Holding{Requests: cpu("2"), Reservations: []string{"ns/a"}, By: map[string]corev1.ResourceList{"ns/a": cpu("2")}},
	}, {
		name: "another application's members hold their room from it",
		res:  []*schedv1alpha1.Reservation{res("a", "n1", []string{"n1"}), res("b", "n1", nil)},
		node: "n1", pod: pod("a", "run-1", "driver", ""),
		want: Holding{Requests: cpu("3"), Reservations: []string{"ns/a", "ns/b"},
			By: map[string]corev1.ResourceList{"ns/a": cpu("2"), "ns/b": cpu("1")}},
	}, {
		name:    "a reservation past its timeout holds nothing",
		timeout: time.Minute, now: admitted.Add(time.Minute),
		res:  []*schedv1alpha1.Reservation{res("a", "n1", []string{"n1"})},
		node: "n1", pod: other(),
	}, {
		name:    "within its timeout it holds",
		timeout: time.Minute, now: admitted.Add(59 * time.Second),
		res:  []*schedv1alpha1.Reservation{res("a", "n1", nil)},
		node: "n1", pod: other(),
		want: Holding{Requests: cpu("1"), Reservations: []string{"ns/a"}, By: map[string]corev1.ResourceList{"ns/a": cpu("1")}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := &Ledger{Timeout: tc.timeout}
			for _, r := range tc.res {
				l.Set(r)
			}
			now := tc.now
			if now.IsZero() {
				now = admitted
			}
			got := l.HeldOnBy(tc.node, slices.Values(tc.on), tc.pod, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("HeldOnBy (-want +got):\n%s", diff)
			}
			// HeldOn, on every scheduling cycle's path, is the same without the breakdown.
			want := tc.want
			want.By = nil
			if diff := cmp.Diff(want, l.HeldOn(tc.node, slices.Values(tc.on), tc.pod, now)); diff != "" {
				t.Errorf("HeldOn (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBookedMembersStayTaken: a member the scheduler placed keeps its place after its pod ends
// and leaves the node, through updates of its reservation, until the reservation goes or a new
// run replaces it; a booking undone (Unbook) gives the place back.
func TestBookedMembersStayTaken(t *testing.T) {
	l := &Ledger{}
	l.Set(res("a", "n1", []string{"n1", "n1"}))
	held := func() string { return l.HeldOn("n1", noPods, other(), admitted).String() }
	e1, e2 := pod("a", "run-1", "executor", "n1"), pod("a", "run-1", "executor", "n1")
	e1.UID, e2.UID = "e1", "e2"
	l.Book(e1, "n1")
	l.Book(e1, "n1") // twice: once
	if got, want := held(), "cpu=3 for ns/a"; got != want {
		t.Errorf("one executor booked: held %q, want %q", got, want)
	}
	l.Book(e2, "n2") // not a member's place there: no booking on n1
	l.Book(other(), "n1")
	l.Set(res("a", "n1", []string{"n1", "n1"}, "driver")) // a status update
	if got, want := held(), "cpu=3 for ns/a"; got != want {
		t.Errorf("after an update: held %q, want %q", got, want)
	}
	l.Unbook(e1)
	if got, want := held(), "cpu=5 for ns/a"; got != want {
		t.Errorf("after Unbook: held %q, want %q", got, want)
	}
	l.Book(e1, "n1")
	next := res("a", "n1", []string{"n1", "n1"})
	next.Spec.Run = "run-2"
	l.Set(next)
	if got, want := held(), "cpu=5 for ns/a"; got != want {
		t.Errorf("a new run: held %q, want %q (the old run's pods take none of its places)", got, want)
	}
}

func TestLedgerSetReplacesAndRemoveForgets(t *testing.T) {
	l := &Ledger{}
	l.Set(res("a", "n1", []string{"n1"}))
	l.Set(res("a", "n2", nil)) // replanned: the driver moved, no executors
	if h := l.HeldOn("n1", noPods, other(), admitted); h.Requests != nil {
		t.Errorf("n1 still holds %v after the reservation was replaced", h)
	}
	if h := l.HeldOn("n2", noPods, other(), admitted); h.String() != "cpu=1 for ns/a" {
		t.Errorf("n2 holds %q, want the driver's cpu=1 for ns/a", h)
	}
	l.Remove(types.NamespacedName{Namespace: "ns", Name: "a"})
	if h := l.HeldOn("n2", noPods, other(), admitted); h.Requests != nil {
		t.Errorf("n2 still holds %v after the reservation was removed", h)
	}
}

func TestPlannedNode(t *testing.T) {
	l := &Ledger{Timeout: time.Minute}
	l.Set(res("a", "n1", []string{"n2"}))
	session := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s-server", Labels: map[string]string{
		v1alpha1.LabelConnectName: "s", v1beta2.LabelSubmissionID: "run-1", v1beta2.SparkRoleLabel: v1alpha1.SparkRoleConnectServer}}}
	l.Set(&schedv1alpha1.Reservation{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s.sparkconnect"},
		Spec: schedv1alpha1.ReservationSpec{Run: "run-1", Admitted: metav1.NewTime(admitted),
			Members: []schedv1alpha1.ReservationMember{{Name: "driver", Role: "driver", Node: "n3"}}}})
	cases := []struct {
		name   string
		pod    *corev1.Pod
		now    time.Time
		want   string
		wantOK bool
	}{
		{"the driver, to its planned node", pod("a", "run-1", "driver", ""), admitted, "n1", true},
		{"a session's server, as its driver", session, admitted, "n3", true},
		{"a driver of another run, nowhere", pod("a", "run-2", "driver", ""), admitted, "", false},
		{"the driver past the timeout, nowhere", pod("a", "run-1", "driver", ""), admitted.Add(time.Minute), "", false},
		{"an executor released onto a node, to that node", pod("a", "run-1", "executor", "n2"), admitted, "n2", true},
		{"an executor not released, nowhere", pod("a", "run-1", "executor", ""), admitted, "", false},
		{"a pod of no application, nowhere", other(), admitted, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := l.PlannedNode(tc.pod, tc.now)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("PlannedNode = %q, %v; want %q, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// noPods is a node with no pods on it.
var noPods = slices.Values([]*corev1.Pod(nil))

func TestHeld(t *testing.T) {
	held := func(status metav1.ConditionStatus, generation int64) []metav1.Condition {
		return []metav1.Condition{{Type: schedv1alpha1.ConditionHeld, Status: status, ObservedGeneration: generation}}
	}
	cases := []struct {
		name       string
		conditions []metav1.Condition
		want       bool
	}{
		{name: "not said", want: false},
		{name: "held, for this plan", conditions: held(metav1.ConditionTrue, 2), want: true},
		{name: "held, for an earlier plan", conditions: held(metav1.ConditionTrue, 1), want: false},
		{name: "said not held", conditions: held(metav1.ConditionFalse, 2), want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &schedv1alpha1.Reservation{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Status: schedv1alpha1.ReservationStatus{Conditions: tc.conditions}}
			if got := Held(r); got != tc.want {
				t.Errorf("Held = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTakenOn(t *testing.T) {
	taken := func(reason, message string, generation int64) []metav1.Condition {
		return []metav1.Condition{{Type: schedv1alpha1.ConditionHeld, Status: metav1.ConditionFalse, Reason: reason, Message: message, ObservedGeneration: generation}}
	}
	cases := []struct {
		name       string
		conditions []metav1.Condition
		want       string
	}{
		{name: "not said"},
		{name: "taken on a node", conditions: taken(ReasonRoomTaken, TakenMessage("kwok-node-12"), 2), want: "kwok-node-12"},
		{name: "taken, of an earlier plan", conditions: taken(ReasonRoomTaken, TakenMessage("kwok-node-12"), 1)},
		{name: "another reason", conditions: taken("Other", TakenMessage("kwok-node-12"), 2)},
		{name: "a message that names no node", conditions: taken(ReasonRoomTaken, "taken", 2)},
		{name: "a message of another form", conditions: taken(ReasonRoomTaken, "room on kwok-node-12"+takenSuffix, 2)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &schedv1alpha1.Reservation{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Status: schedv1alpha1.ReservationStatus{Conditions: tc.conditions}}
			if got, ok := TakenOn(r); got != tc.want || ok != (tc.want != "") {
				t.Errorf("TakenOn = %q, %v; want %q", got, ok, tc.want)
			}
			if Held(r) {
				t.Error("a reservation whose room was taken reads as held")
			}
		})
	}
}

// TestJudgedPlans: a plan not judged yet is held from other pods but not from the members of
// plans found to fit; a plan whose room was taken holds nothing; a judgement made here stands
// until the object says otherwise.
func TestJudgedPlans(t *testing.T) {
	held := func(r *schedv1alpha1.Reservation) *schedv1alpha1.Reservation {
		r.Generation = 1
		r.Status.Conditions = []metav1.Condition{{Type: schedv1alpha1.ConditionHeld, Status: metav1.ConditionTrue, ObservedGeneration: 1}}
		return r
	}
	unjudged := res("b", "n2", []string{"n1"})
	unjudged.Generation = 1
	l := &Ledger{}
	l.Set(held(res("a", "n2", []string{"n1", "n1"})))
	l.Set(unjudged)
	cases := []struct {
		name string
		pod  *corev1.Pod
		want []string
	}{
		{name: "another pod: both plans held from it", pod: other(), want: []string{"ns/a", "ns/b"}},
		{name: "a member of the plan found to fit: only it", pod: pod("a", "run-1", "executor", "n1"), want: []string{"ns/a"}},
		{name: "a member of the unjudged plan: the plan found to fit (its own one slot it takes)", pod: pod("b", "run-1", "executor", "n1"), want: []string{"ns/a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := l.HeldOn("n1", slices.Values([]*corev1.Pod(nil)), tc.pod, admitted).Reservations; !slices.Equal(got, tc.want) {
				t.Errorf("held by %v, want %v", got, tc.want)
			}
		})
	}
	b := types.NamespacedName{Namespace: "ns", Name: "b"}
	l.Judge(b, 1, JudgedTaken)
	l.Set(unjudged) // its object, read again before it says so
	if got := l.HeldOn("n1", slices.Values([]*corev1.Pod(nil)), other(), admitted).Reservations; !slices.Equal(got, []string{"ns/a"}) {
		t.Errorf("after b's room was found taken, held by %v, want only a", got)
	}
	next := res("b", "n2", []string{"n1"})
	next.Generation = 2
	l.Set(next)
	if got := l.HeldOn("n1", slices.Values([]*corev1.Pod(nil)), other(), admitted).Reservations; !slices.Equal(got, []string{"ns/a", "ns/b"}) {
		t.Errorf("b's next plan, not judged yet, held by %v, want both", got)
	}
}
