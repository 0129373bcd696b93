/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	gt "github.com/sparkop/spark-operator/scheduler/gang/gangtest"
	"github.com/sparkop/spark-operator/scheduler/gang/placeholder"
)

func TestParseEnforcement(t *testing.T) {
	tests := []struct {
		in      string
		want    Enforcement
		wantErr string
	}{
		{in: "advisory", want: EnforcementAdvisory},
		{in: "placeholders", want: EnforcementPlaceholders},
		{in: "plugin", want: EnforcementPlugin},
		{in: "", wantErr: `unknown enforcement ""; use "placeholders", "plugin" or "advisory"`},
	}
	for _, tt := range tests {
		got, err := ParseEnforcement(tt.in)
		if gotErr := errString(err); gotErr != tt.wantErr || got != tt.want {
			t.Errorf("ParseEnforcement(%q) = %q, %q; want %q, %q", tt.in, got, gotErr, tt.want, tt.wantErr)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestReservationObjectRoundTrip: the object a reservation is stored as reads back as the same
// reservation, only for its owner; a plan whose members are out of order does not read.
func TestReservationObjectRoundTrip(t *testing.T) {
	a := app("a", "s1", v1beta2.ApplicationStateNew, 3, nil)
	a.UID = "uid-a"
	o := applicationObject(&a)
	admitted := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	res := Reservation{SubmissionID: "s1", Queue: "q", Driver: "n1", Executors: map[string]int32{"n2": 1, "n1": 2}, Admitted: admitted,
		DriverRequests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}, ExecutorRequests: cpu, PriorityClassName: "high"}
	obj, err := reservationObject(&o, res, EnforcementPlaceholders)
	if err != nil {
		t.Fatal(err)
	}
	var members []string
	for _, m := range obj.Spec.Members {
		members = append(members, m.Name+"@"+m.Node)
	}
	if diff := cmp.Diff([]string{"driver@n1", "executor-1@n1", "executor-2@n1", "executor-3@n2"}, members); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	if obj.Name != "a" || obj.OwnerReferences[0].UID != "uid-a" || obj.Spec.Workload.Kind != "SparkApplication" || obj.Spec.Enforcement != "placeholders" {
		t.Errorf("name %q, owner %v, workload %v, enforcement %q", obj.Name, obj.OwnerReferences, obj.Spec.Workload, obj.Spec.Enforcement)
	}
	obj.UID = "uid-res"
	back, ok := reservationFrom(obj, &a)
	want := res
	want.UID, want.Enforcement = "uid-res", EnforcementPlaceholders
	if !ok {
		t.Fatal("the stored reservation does not read back")
	}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
	other := a.DeepCopy()
	other.UID = "uid-other"
	if _, ok := reservationFrom(obj, other); ok {
		t.Error("another workload of the same name reads the reservation as its own")
	}
	swapped := obj.DeepCopy()
	swapped.Spec.Members[1].Name, swapped.Spec.Members[2].Name = "executor-2", "executor-1"
	if _, ok := reservationFrom(swapped, &a); ok {
		t.Error("a plan with its executors out of order reads")
	}
	if got := ReservationName(core.Key{Kind: "SparkConnect", NamespacedName: types.NamespacedName{Name: "a"}}); got != "a.sparkconnect" {
		t.Errorf("a session's reservation is named %q", got)
	}
}

// placeholderOf is the placeholder of member of a's reservation res on node, as the cluster
// cache holds it (bound or not, unschedulable or not).
func placeholderOf(res Reservation, member, node string, bound, unschedulable bool) corev1.Pod {
	key := core.Key{Kind: "SparkApplication", NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}
	var want placeholder.Wanted
	lo, hi, id := 0, 0, 0
	switch {
	case member == "driver":
		want = driverPlaceholder(key, res)
	case scanned(fmt.Sscanf(member, "executors-%d-%d", &lo, &hi)):
		want = groupPlaceholder(key, res, placeholder.NodeGroup{Node: node, Lo: lo, Hi: hi})
	case scanned(fmt.Sscanf(member, "executor-%d", &id)):
		want = executorPlaceholder(key, res, id, node)
	default:
		panic("no placeholder member " + member)
	}
	want.Node = node
	p := want.Pod(DefaultPlaceholderImage)
	if bound {
		p.Spec.NodeName = node
	}
	if unschedulable {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Minute))}}
	}
	trimmed, _ := trimPod(p)
	return *trimmed.(*corev1.Pod)
}

// TestPlaceholders: which placeholders a reservation wants (the members not placed yet, while
// it keeps node capacity), whether they hold their room, and that the room is counted once.
func TestPlaceholders(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := &Reservation{SubmissionID: "s1", Queue: "default", Driver: "n1", Executors: map[string]int32{"n1": 1, "n2": 2}, Admitted: now,
		UID: "uid-res", DriverRequests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		ExecutorRequests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
	soon := snapshotOptions{ReservationTimeout: time.Minute, Now: now.Add(time.Second)}
	// One for the driver, one for each node's executors.
	all := []string{"a-ph-driver", "a-ph-executors-1-1", "a-ph-executors-2-3"}
	allBound := []corev1.Pod{placeholderOf(*res, "driver", "n1", true, false), placeholderOf(*res, "executors-1-1", "n1", true, false),
		placeholderOf(*res, "executors-2-3", "n2", true, false)}
	tests := []struct {
		name        string
		state       v1beta2.ApplicationStateType
		pods        []corev1.Pod
		o           snapshotOptions
		want        []string
		wantWaiting bool
		wantTaken   string
		wantRecheck bool
		wantUsed    map[string]string // cpu by node in the snapshot
	}{{
		name: "admitted, nothing created: every member", state: v1beta2.ApplicationStateNew, o: soon,
		want: all, wantWaiting: true, wantUsed: map[string]string{"n1": "3", "n2": "4"},
	}, {
		name: "placeholders bound: held, and counted once", state: v1beta2.ApplicationStateNew, o: soon, pods: allBound,
		want: all, wantUsed: map[string]string{"n1": "3", "n2": "4"},
	}, {
		name: "a placeholder found no room: taken", state: v1beta2.ApplicationStateNew, o: soon,
		pods: append(slices.Clone(allBound[1:]), placeholderOf(*res, "driver", "n1", false, true)),
		want: all, wantWaiting: true, wantTaken: "n1", wantUsed: map[string]string{"n1": "3", "n2": "4"},
	}, {
		name: "a placeholder found no room a moment ago: not taken yet, looked at again", state: v1beta2.ApplicationStateNew, o: soon,
		pods: append(slices.Clone(allBound[1:]), func() corev1.Pod {
			p := placeholderOf(*res, "driver", "n1", false, true)
			p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now)
			return p
		}()),
		want: all, wantWaiting: true, wantRecheck: true, wantUsed: map[string]string{"n1": "3", "n2": "4"},
	}, {
		name: "a placeholder found no room where pods are ending (preempted ones): it waits for them", state: v1beta2.ApplicationStateNew, o: soon,
		pods: append(slices.Clone(allBound[1:]), placeholderOf(*res, "driver", "n1", false, true), ending(gt.Pod("v", "s9", "driver", "n1", "1", corev1.PodRunning))),
		want: all, wantWaiting: true, wantUsed: map[string]string{"n1": "4", "n2": "4"},
	}, {
		name: "driver and executor 1 placed, executor 2 gated: their placeholders go, n2's stays", state: v1beta2.ApplicationStateRunning, o: soon,
		pods: append(slices.Clone(allBound[2:]), gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning),
			given(gt.Numbered(gt.Pod("a", "s1", "executor", "", "2", corev1.PodPending), 1), "n1"),
			withGate(gt.Numbered(gt.Pod("a", "s1", "executor", "", "2", corev1.PodPending), 2))),
		want: []string{"a-ph-executors-2-3"}, wantUsed: map[string]string{"n1": "3", "n2": "4"},
	}, {
		name: "executor 2 took n2's place without 3, which has a placeholder of its own: that one stays", state: v1beta2.ApplicationStateRunning, o: soon,
		pods: []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning),
			given(gt.Numbered(gt.Pod("a", "s1", "executor", "n1", "2", corev1.PodRunning), 1), "n1"),
			given(gt.Numbered(gt.Pod("a", "s1", "executor", "", "2", corev1.PodPending), 2), "n2"),
			placeholderOf(*res, "executor-3", "n2", false, false)},
		want: []string{"a-ph-executor-3"}, wantWaiting: true, wantUsed: map[string]string{"n1": "3", "n2": "4"},
	}, {
		name: "executor 2 let go without n2's placeholder (a restart between): 3 gets one of its own", state: v1beta2.ApplicationStateRunning, o: soon,
		pods: []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning),
			given(gt.Numbered(gt.Pod("a", "s1", "executor", "n1", "2", corev1.PodRunning), 1), "n1"),
			given(gt.Numbered(gt.Pod("a", "s1", "executor", "", "2", corev1.PodPending), 2), "n2")},
		want: []string{"a-ph-executor-3"}, wantWaiting: true, wantUsed: map[string]string{"n1": "3", "n2": "4"},
	}, {
		name: "the reservation timed out: none wanted, those left count as pods", state: v1beta2.ApplicationStateNew,
		o: snapshotOptions{ReservationTimeout: time.Minute, Now: now.Add(time.Minute)}, pods: allBound,
		wantUsed: map[string]string{"n1": "3", "n2": "4"},
	}, {
		name: "the run completed: none wanted", state: v1beta2.ApplicationStateCompleted, o: soon,
		pods: allBound[:1], wantUsed: map[string]string{"n1": "1", "n2": "0"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := placeholderWorld(tt.state, res, tt.pods)
			o := w.Workloads[0]
			var got []string
			for key := range placeholdersOf(w, tt.o, existingPlaceholders(w)) {
				got = append(got, key.Name)
			}
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("placeholders wanted (-want +got):\n%s", diff)
			}
			waiting, taken, recheck := placeholdersHold(w, tt.o)
			key := o.Key
			if _, ok := waiting[key]; ok != tt.wantWaiting || taken[key] != tt.wantTaken || (recheck > 0) != tt.wantRecheck {
				t.Errorf("waiting %v, taken %v, recheck %s; want waiting %v, taken %q, recheck %v", waiting, taken, recheck, tt.wantWaiting, tt.wantTaken, tt.wantRecheck)
			}
			snap, err := snapshot(w, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			used := map[string]string{}
			for _, n := range snap.Nodes {
				q := n.Used[corev1.ResourceCPU]
				used[n.Name] = q.String()
			}
			if diff := cmp.Diff(tt.wantUsed, used); diff != "" {
				t.Errorf("cpu used (-want +got):\n%s", diff)
			}
		})
	}
}

// scanned reports whether a scan read all it asked for.
func scanned(_ int, err error) bool { return err == nil }

func TestPlaceholderOrder(t *testing.T) {
	res := Reservation{SubmissionID: "s1", Driver: "n1", Executors: map[string]int32{"n1": 11}}
	a := core.Key{Kind: "SparkApplication", NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}
	b := core.Key{Kind: "SparkApplication", NamespacedName: types.NamespacedName{Namespace: "ns", Name: "b"}}
	// Created in this order when room runs short: the driver first, then executors by id,
	// groups by their first (executors-3-4 before executors-10-11, which a name would put
	// first), workload by workload.
	want := []placeholder.Wanted{
		driverPlaceholder(a, res),
		executorPlaceholder(a, res, 2, "n1"),
		groupPlaceholder(a, res, placeholder.NodeGroup{Node: "n1", Lo: 3, Hi: 4}),
		executorPlaceholder(a, res, 5, "n1"),
		groupPlaceholder(a, res, placeholder.NodeGroup{Node: "n1", Lo: 10, Hi: 11}),
		driverPlaceholder(b, res),
	}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, func(x, y placeholder.Wanted) int {
		switch {
		case x.Before(y):
			return -1
		case y.Before(x):
			return 1
		}
		return 0
	})
	for i := range want {
		if got[i].Key != want[i].Key || got[i].Member != want[i].Member {
			t.Errorf("place %d: %s %s, want %s %s", i, got[i].Key, got[i].Member, want[i].Key, want[i].Member)
		}
	}
}

// TestPlaceholderOwner: a reservation's placeholders name it, its run and its workload's
// PriorityClass, and carry the queue label its run's pods carry.
func TestPlaceholderOwner(t *testing.T) {
	res := Reservation{SubmissionID: "s1", Queue: "q", PriorityClassName: "high", UID: "uid-res"}
	got := placeholderOwner(core.Key{Kind: "SparkApplication", NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}, res)
	want := placeholder.Owner{Name: "a", UID: "uid-res", Run: "s1", PriorityClassName: "high", Queue: "q"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("owner (-want +got):\n%s", diff)
	}
}

// TestPlaceholderBookKeepsTheSchedulersClock: the book keeps time by the scheduler's clock
// (package placeholder checks that it keeps and forgets by its clock).
func TestPlaceholderBookKeepsTheSchedulersClock(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	if s := New(Config{Clock: clock}); s.placeholders.Clock != clock {
		t.Errorf("the placeholder book keeps time by %v, not the scheduler's clock", s.placeholders.Clock)
	}
}

// placeholderWorld is nodes n1 and n2 with pods, and application a of 3 executors in state,
// holding res.
func placeholderWorld(state v1beta2.ApplicationStateType, res *Reservation, pods []corev1.Pod) world {
	a := app("a", "s1", state, 3, nil)
	a.UID = "uid-a"
	o := applicationObject(&a)
	o.res = res
	return world{Nodes: []corev1.Node{gt.ClusterNode("n1"), gt.ClusterNode("n2")}, Pods: pods, Workloads: []object{o}}
}

func ending(p corev1.Pod) corev1.Pod {
	p.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return p
}

func TestReservationStatus(t *testing.T) {
	res := Reservation{SubmissionID: "s1", Driver: "n1", Executors: map[string]int32{"n1": 1, "n2": 2}}
	key := core.Key{Kind: "SparkApplication", NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}
	pods := []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning),
		given(gt.Numbered(gt.Pod("a", "s1", "executor", "", "2", corev1.PodPending), 3), "n2"),
		withGate(gt.Numbered(gt.Pod("a", "s1", "executor", "", "2", corev1.PodPending), 1)),
		gt.Pod("a", "s0", "driver", "n1", "1", corev1.PodRunning)} // an earlier run's
	ph := placeholderOf(res, "executor-1", "n1", true, false)
	ph2 := placeholderOf(res, "executor-2", "n2", true, false)
	got := reservationStatus(key, res, pods, map[types.NamespacedName]*corev1.Pod{{Namespace: "ns", Name: ph.Name}: &ph, {Namespace: "ns", Name: ph2.Name}: &ph2})
	want := schedv1alpha1.ReservationStatus{Nodes: "n1,n2", Bound: "2/4", BoundMembers: []string{"driver", "executor-3"}, Placeholders: 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

// TestTakeGroups: executors whose node group's placeholder holds their room take its place
// together once the whole group is there, or, groupWait after the first was seen, without the
// missing ones, which get placeholders of their own (gated) in the same swap; until then they
// wait. An executor with a placeholder of its own takes that one's place.
func TestTakeGroups(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	res := &Reservation{SubmissionID: "s1", Queue: "default", Driver: "n1", Executors: map[string]int32{"n1": 1, "n2": 2}, Admitted: now.Add(-time.Minute),
		UID: "uid-res", DriverRequests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		ExecutorRequests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
	executor := func(id int) corev1.Pod {
		return withGate(gt.Numbered(gt.Pod("a", "s1", "executor", "", "2", corev1.PodPending), id))
	}
	running := gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning)
	groups := []corev1.Pod{placeholderOf(*res, "executors-1-1", "n1", true, false), placeholderOf(*res, "executors-2-3", "n2", true, false)}
	type took struct{ Pod, Placeholder string }
	tests := []struct {
		name        string
		pods        []corev1.Pod
		arrived     time.Duration // how long ago n2's first executor was seen waiting (0: not)
		want        []took
		wantMissing []string // placeholders made for missing members
	}{{
		name: "all of each group there: they take the groups' places",
		pods: append(slices.Clone(groups), running, executor(1), executor(2), executor(3)),
		want: []took{{"a-exec-1", "a-ph-executors-1-1"}, {"a-exec-2", "a-ph-executors-2-3"}, {"a-exec-3", "a-ph-executors-2-3"}},
	}, {
		name: "n2's group in part, first seen now: 2 waits for 3",
		pods: append(slices.Clone(groups), running, executor(1), executor(2)),
		want: []took{{"a-exec-1", "a-ph-executors-1-1"}},
	}, {
		name: "n2's group in part, seen a moment ago: 2 still waits",
		pods: append(slices.Clone(groups), running, executor(2)), arrived: groupWait / 2,
	}, {
		name: "n2's group in part, seen groupWait ago: 2 goes, 3 gets a placeholder of its own",
		pods: append(slices.Clone(groups), running, executor(2)), arrived: groupWait,
		want: []took{{"a-exec-2", "a-ph-executors-2-3"}}, wantMissing: []string{"a-ph-executor-3"},
	}, {
		name: "3 has a placeholder of its own: it takes that one's place",
		pods: []corev1.Pod{running, executor(3), placeholderOf(*res, "executor-3", "n2", true, false)},
		want: []took{{"a-exec-3", "a-ph-executor-3"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := placeholderWorld(v1beta2.ApplicationStateRunning, res, tt.pods)
			s := &Scheduler{cfg: Config{Enforcement: EnforcementPlaceholders, PlaceholderImage: DefaultPlaceholderImage}}
			if tt.arrived > 0 {
				s.placeholders.ArrivedAt(types.NamespacedName{Namespace: "ns", Name: "a-ph-executors-2-3"}, now.Add(-tt.arrived))
			}
			chosen, missing := s.takeGroups(executorsToUngate(w, nil, snapshotOptions{ReservationTimeout: time.Hour, Now: now}), existingPlaceholders(w), now)
			var got []took
			for _, rel := range chosen {
				got = append(got, took{rel.pod.Name, rel.placeholder.Name})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("taken (-want +got):\n%s", diff)
			}
			var made []string
			for node, ms := range missing {
				for _, m := range ms {
					made = append(made, m.pod.Name)
					if node != "n2" || m.group.Name != "a-ph-executors-2-3" || len(m.pod.Spec.SchedulingGates) != 1 || m.pod.Spec.SchedulingGates[0].Name != GatePlaceholder {
						t.Errorf("missing member's placeholder %s on %s for %s, gates %v; want on n2 for a-ph-executors-2-3, gated", m.pod.Name, node, m.group, m.pod.Spec.SchedulingGates)
					}
					if got := m.pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; got.String() != "2" {
						t.Errorf("missing member's placeholder asks for %s CPU; want one member's, 2", got.String())
					}
				}
			}
			if diff := cmp.Diff(tt.wantMissing, made); diff != "" {
				t.Errorf("placeholders made for missing members (-want +got):\n%s", diff)
			}
		})
	}
}
