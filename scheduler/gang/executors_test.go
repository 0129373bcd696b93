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
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	gt "github.com/sparkop/spark-operator/scheduler/gang/gangtest"
	"github.com/sparkop/spark-operator/scheduler/gang/release"
	"github.com/sparkop/spark-operator/sparkpod"
)

// released is what ungating p onto node must leave.
func released(p *corev1.Pod, node string) *corev1.Pod {
	p = p.DeepCopy()
	if !release.Ungate(p, node) {
		panic("not gated")
	}
	return p
}

// withGate is p gated by the gang scheduler.
func withGate(p corev1.Pod) corev1.Pod {
	p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: GateExecutor}}
	return p
}

// TestPlanSlots: which planned node each gated executor gets, and which planned slots stay
// kept, from the executors' ids (Spark numbers them from 1 in creation order).
func TestPlanSlots(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := Reservation{SubmissionID: "s1", Driver: "n1", Executors: map[string]int32{"n2": 2, "n1": 1}, Admitted: now}
	executor := func(id int, node string, phase corev1.PodPhase) corev1.Pod {
		p := gt.Numbered(gt.Pod("a", "s1", "executor", node, "2", phase), id)
		if node == "" {
			return withGate(p)
		}
		return given(p, node)
	}
	unnumbered := func(name, node string) corev1.Pod {
		p := gt.Pod("a", "s1", "executor", node, "2", corev1.PodRunning)
		p.Name = name
		if node == "" {
			return withGate(p)
		}
		return given(p, node)
	}
	tests := []struct {
		name  string
		age   time.Duration // since admission; the reservation timeout is a minute
		pods  []corev1.Pod
		seen  []int    // executor ids seen before, whose pods may be gone
		want  []string // planSlots, in the order of the gated executors (by id)
		kept  []string // slotsToGive
		count bool     // slotsToGive leaves it to counting (unnumbered)
	}{{
		name: "the initial gang takes the plan's slots by id",
		pods: []corev1.Pod{executor(3, "", corev1.PodPending), executor(1, "", corev1.PodPending), executor(2, "", corev1.PodPending)},
		want: []string{"n1", "n2", "n2"},
		kept: []string{"n1", "n2", "n2"},
	}, {
		name: "nothing created yet: every slot is kept",
		kept: []string{"n1", "n2", "n2"},
	}, {
		name: "an id beyond the plan gets no slot, even one whose executor was deleted",
		// 1 was given n1 and deleted, 3 failed on n2 and was deleted; 4 replaces them.
		pods: []corev1.Pod{executor(2, "n2", corev1.PodRunning), executor(4, "", corev1.PodPending)},
		seen: []int{1, 2, 3},
		want: []string{""},
	}, {
		// Created side by side, 1 and 3 reached the cache before 2: 2's slot is kept for it.
		name: "an executor not in the cache yet keeps its slot",
		pods: []corev1.Pod{executor(3, "", corev1.PodPending), executor(1, "", corev1.PodPending)},
		want: []string{"n1", "n2"},
		kept: []string{"n1", "n2", "n2"},
	}, {
		// After a restart nothing was seen before: a missing id keeps its slot (conservative).
		name: "an id missing and never seen keeps its slot",
		pods: []corev1.Pod{executor(2, "n2", corev1.PodRunning), executor(4, "", corev1.PodPending)},
		want: []string{""},
		kept: []string{"n1", "n2"},
	}, {
		name: "an ended executor's slot stays taken",
		pods: []corev1.Pod{executor(1, "n1", corev1.PodFailed), executor(2, "", corev1.PodPending)},
		want: []string{"n2"},
		kept: []string{"n2", "n2"},
	}, {
		name: "after the reservation timeout no executor gets a planned slot",
		age:  2 * time.Minute,
		pods: []corev1.Pod{executor(1, "", corev1.PodPending)},
		want: []string{""},
		kept: []string{"n1", "n2", "n2"},
	}, {
		// A variant's executors are not gated: kube-scheduler places them. On no node yet,
		// they keep their slots; bound, or ended, they count through their pods.
		name: "ungated executors on no node yet keep their slots",
		pods: []corev1.Pod{gt.Numbered(gt.Pod("a", "s1", "executor", "", "2", corev1.PodPending), 1),
			gt.Numbered(gt.Pod("a", "s1", "executor", "", "2", corev1.PodPending), 3),
			gt.Numbered(gt.Pod("a", "s1", "executor", "n2", "2", corev1.PodRunning), 2)},
		kept: []string{"n1", "n2"},
	}, {
		name: "an ungated executor on no node that ended keeps no slot",
		pods: []corev1.Pod{gt.Numbered(gt.Pod("a", "s1", "executor", "", "2", corev1.PodFailed), 1)},
		kept: []string{"n2", "n2"},
	}, {
		name:  "without ids, slots are counted per node: a deleted pod's slot opens again",
		pods:  []corev1.Pod{unnumbered("e2", "n2"), unnumbered("e4", ""), unnumbered("e5", "")},
		want:  []string{"n1", "n2"},
		count: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			member := boundMember{applicationObject(&v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}).Key, "s1", v1beta2.SparkRoleExecutor}
			seen := executorIDs{member: {}}
			for _, id := range tt.seen {
				seen[member][id] = true
			}
			ep := executorsOf(tt.pods, seen)[member]
			var got []string
			if ep != nil {
				got = planSlots(res, ep, snapshotOptions{ReservationTimeout: time.Minute, Now: now.Add(tt.age)})
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("planned nodes of the gated executors (-want +got):\n%s", diff)
			}
			kept, ok := slotsToGive(res, ep)
			if ok == tt.count {
				t.Fatalf("slotsToGive numbered = %v, want %v", ok, !tt.count)
			}
			if diff := cmp.Diff(tt.kept, kept, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("slots kept (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTrimPodKeepsExecutorID: the cluster cache keeps the executor id planned slots are given by.
func TestTrimPodKeepsExecutorID(t *testing.T) {
	p := gt.Numbered(gt.Pod("a", "s1", "executor", "n1", "2", corev1.PodRunning), 7)
	trimmed, err := trimPod(&p)
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := sparkpod.ExecutorID(trimmed.(*corev1.Pod).Name, trimmed.(*corev1.Pod).Labels); !ok || id != 7 {
		t.Errorf("executor id after trimming = %d, %v; want 7, true", id, ok)
	}
}

// TestSeenExecutors: ids are remembered across reads while their run is current, so a deleted
// executor's id stays seen, and forgotten with the run; what a world holds as seen was taken
// before its own list, so another reader's newer list does not show in it.
func TestSeenExecutors(t *testing.T) {
	app := applicationObject(&v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}})
	app.Run = "s1"
	member := boundMember{app.Key, "s1", v1beta2.SparkRoleExecutor}
	var s seenExecutors
	exec := func(id int) corev1.Pod {
		return gt.Numbered(gt.Pod("a", "s1", "executor", "n1", "2", corev1.PodRunning), id)
	}
	s.remember(world{Workloads: []object{app}, Pods: []corev1.Pod{exec(1), exec(2)}})
	s.remember(world{Workloads: []object{app}, Pods: []corev1.Pod{exec(2)}})
	if got, want := s.before(), (executorIDs{member: {1: true, 2: true}}); !cmp.Equal(got, want) {
		t.Errorf("after executor 1 was deleted: seen %v, want %v", got, want)
	}

	taken := s.before()
	s.remember(world{Workloads: []object{app}, Pods: []corev1.Pod{exec(2), exec(3)}}) // a newer list, elsewhere
	if taken[member][3] {
		t.Errorf("a world's seen ids changed after they were taken: %v", taken)
	}

	next := app
	next.Run = "s2"
	s.remember(world{Workloads: []object{next}, Pods: []corev1.Pod{exec(2)}})
	if got := s.before(); len(got) != 0 {
		t.Errorf("once the run moved on: seen %v, want nothing", got)
	}
}

func TestPlaceAtCreation(t *testing.T) {
	admitted := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := Reservation{SubmissionID: "s1", Queue: "q", Driver: "n1", Executors: map[string]int32{"n2": 1, "n1": 2}, Admitted: admitted}
	owner := func(r Reservation, annotations ...string) *v1beta2.SparkApplication {
		app := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app",
			Annotations: map[string]string{AnnotationAdmission: r.encode()}}}
		for i := 0; i+1 < len(annotations); i += 2 {
			app.Annotations[annotations[i]] = annotations[i+1]
		}
		return app
	}
	executor := func(id, submission string, gated bool) *corev1.Pod {
		p := gt.GatedExecutor(nil)
		if gated {
			p = gt.GatedExecutor(nil, GateExecutor)
		}
		p.Name = "app-exec-" + id
		p.Labels = map[string]string{v1beta2.LabelAppName: "app", v1beta2.LabelSubmissionID: submission,
			v1beta2.SparkRoleLabel: v1beta2.SparkRoleExecutor, v1beta2.SparkExecutorIDLabel: id}
		return p
	}
	beingDeleted := owner(res)
	beingDeleted.DeletionTimestamp = &metav1.Time{Time: admitted}
	// ended is an owner whose run's driver has ended (state), its reservation not yet removed.
	ended := func(state v1beta2.ApplicationStateType) *v1beta2.SparkApplication {
		app := owner(res)
		app.Status.AppState.State = state
		return app
	}
	running := ended(v1beta2.ApplicationStateRunning)
	serverFailed := &v1alpha1.SparkConnect{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "conn",
		Annotations: map[string]string{AnnotationAdmission: res.encode()}}, Status: v1alpha1.SparkConnectStatus{State: v1alpha1.SparkConnectStateFailed}}
	driver := executor("1", "s1", true)
	driver.Labels[v1beta2.SparkRoleLabel] = v1beta2.SparkRoleDriver
	soon := snapshotOptions{ReservationTimeout: time.Minute, Now: admitted.Add(time.Second)}
	// A SparkConnect session's executor, with the session's reservation: placed the same way.
	session := &v1alpha1.SparkConnect{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "conn",
		Annotations: map[string]string{AnnotationAdmission: res.encode()}}}
	sessionExecutor := executor("3", "s1", true)
	delete(sessionExecutor.Labels, v1beta2.LabelAppName)
	sessionExecutor.Labels[v1alpha1.LabelConnectName] = "conn"
	cases := []struct {
		name  string
		pod   *corev1.Pod
		owner client.Object
		o     snapshotOptions
		want  string // the node placed on; "" when the pod keeps its gate
	}{
		// The plan's slots in order: n1, n1, n2 (plannedSlots), as a cycle gives them.
		{name: "executor 1 takes the first slot", pod: executor("1", "s1", true), owner: owner(res), o: soon, want: "n1"},
		{name: "executor 2 the second", pod: executor("2", "s1", true), owner: owner(res), o: soon, want: "n1"},
		{name: "executor 3 the third", pod: executor("3", "s1", true), owner: owner(res), o: soon, want: "n2"},
		{name: "an id beyond the plan waits for a cycle", pod: executor("4", "s1", true), owner: owner(res), o: soon},
		{name: "an unreadable id waits", pod: executor("x", "s1", true), owner: owner(res), o: soon},
		{name: "a pod without the gang gate is not ours", pod: executor("1", "s1", false), owner: owner(res), o: soon},
		{name: "a driver is not placed", pod: driver, owner: owner(res), o: soon},
		{name: "another run's executor waits", pod: executor("1", "s0", true), owner: owner(res), o: soon},
		{name: "no reservation", pod: executor("1", "s1", true), owner: &v1beta2.SparkApplication{}, o: soon},
		{name: "a preempted run", pod: executor("1", "s1", true), owner: owner(res, scheduler.AnnotationPreempted, "s1"), o: soon},
		{name: "an owner being deleted", pod: executor("1", "s1", true), owner: beingDeleted, o: soon},
		{name: "a reservation past its timeout", pod: executor("1", "s1", true), owner: owner(res),
			o: snapshotOptions{ReservationTimeout: time.Minute, Now: admitted.Add(time.Minute)}},
		{name: "a session's executor", pod: sessionExecutor, owner: session, o: soon, want: "n2"},
		{name: "a running run's executor", pod: executor("1", "s1", true), owner: running, o: soon, want: "n1"},
		// A late executor of a run that ended keeps its gate: a cycle lets it go unconfined.
		{name: "a run whose driver succeeded", pod: executor("1", "s1", true), owner: ended(v1beta2.ApplicationStateSucceeding), o: soon},
		{name: "a run whose driver failed", pod: executor("1", "s1", true), owner: ended(v1beta2.ApplicationStateFailing), o: soon},
		{name: "a run completed", pod: executor("1", "s1", true), owner: ended(v1beta2.ApplicationStateCompleted), o: soon},
		{name: "a run being invalidated", pod: executor("1", "s1", true), owner: ended(v1beta2.ApplicationStateInvalidating), o: soon},
		{name: "a suspending run", pod: executor("1", "s1", true), owner: ended(v1beta2.ApplicationStateSuspending), o: soon},
		{name: "a session whose server failed", pod: sessionExecutor, owner: serverFailed, o: soon},
		{name: "no timeout keeps the slots", pod: executor("3", "s1", true), owner: owner(res),
			o: snapshotOptions{Now: admitted.Add(time.Hour)}, want: "n2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := tc.pod.DeepCopy()
			res, _ := legacyReservation(tc.owner)
			placed := placeAtCreation(pod, tc.owner, res, tc.o)
			if placed != (tc.want != "") {
				t.Fatalf("placed = %v, want %v", placed, tc.want != "")
			}
			want := tc.pod
			if placed {
				want = released(tc.pod, tc.want)
			}
			if diff := cmp.Diff(want, pod); diff != "" {
				t.Errorf("pod (-want +got):\n%s", diff)
			}
		})
	}
}
