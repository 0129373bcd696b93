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
	testingclock "k8s.io/utils/clock/testing"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	gt "github.com/sparkop/spark-operator/scheduler/gang/gangtest"
	"github.com/sparkop/spark-operator/sparkpod"
)

// TestStartGate: an admitted workload's driver is created only once it fits its planned node
// by the pods there now, terminating ones included (kube-scheduler would otherwise preempt
// pods there itself), or when it exists already.
func TestStartGate(t *testing.T) {
	key := func(name string) core.Key {
		return core.Key{Kind: scheduler.KindApplication, NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}
	driver := func(name string) core.Workload {
		return core.Workload{Key: key(name), Demand: sparkpod.Demand{Driver: sparkpod.PodDemand{Role: sparkpod.RoleDriver, Count: 1,
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}}
	}
	node := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("110")}}}
	terminating := gt.Pod("victim", "v1", v1beta2.SparkRoleDriver, "n", "2", corev1.PodRunning)
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	type start struct{ name, run, node string }
	tests := []struct {
		name   string
		pods   []corev1.Pod
		starts []start
		want   map[string]bool
		held   map[core.Key]string
	}{{
		name:   "room now: it starts and takes the room",
		pods:   []corev1.Pod{gt.Pod("other", "o1", v1beta2.SparkRoleExecutor, "n", "2", corev1.PodRunning)},
		starts: []start{{"a", "a1", "n"}, {"b", "b1", "n"}},
		want:   map[string]bool{"a": true, "b": false},
		held:   map[core.Key]string{key("b"): roomReason("n")},
	}, {
		name: "a victim's pod still terminating there: held",
		pods: []corev1.Pod{terminating, gt.Pod("other", "o1", v1beta2.SparkRoleExecutor, "n", "1", corev1.PodRunning),
			gt.Pod("done", "d1", v1beta2.SparkRoleDriver, "n", "4", corev1.PodSucceeded)},
		starts: []start{{"a", "a1", "n"}},
		want:   map[string]bool{"a": false},
		held:   map[core.Key]string{key("a"): roomReason("n")},
	}, {
		name:   "its driver exists already: not held for the room it takes itself",
		pods:   []corev1.Pod{gt.Pod("a", "a1", v1beta2.SparkRoleDriver, "n", "2", corev1.PodRunning), terminating},
		starts: []start{{"a", "a1", "n"}},
		want:   map[string]bool{"a": true},
		held:   map[core.Key]string{},
	}, {
		name:   "a node it does not know is no reason to wait",
		pods:   []corev1.Pod{terminating},
		starts: []start{{"a", "a1", "gone"}},
		want:   map[string]bool{"a": true},
		held:   map[core.Key]string{},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newStartGate(world{Nodes: []corev1.Node{node}, Pods: tc.pods},
				core.Snapshot{Workloads: []core.Workload{driver("a"), driver("b")}}, time.Now(), 0, 0, nil)
			got := map[string]bool{}
			for _, s := range tc.starts {
				got[s.name] = g.start(key(s.name), s.run, s.node, nil)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("started (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.held, g.held); diff != "" {
				t.Errorf("held (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStartGatePacing: drivers start while fewer executors than the backlog are owed to
// drivers created less than owedFor ago (planned and not yet released, or being released);
// one started counts its plan as owed; with nothing owed any workload starts, however large.
func TestStartGatePacing(t *testing.T) {
	now := time.Now()
	key := func(name string) core.Key {
		return core.Key{Kind: scheduler.KindApplication, NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}
	// running is application name, admitted with 4 executors planned, whose driver was created
	// ago, with released of them released and gated more gated.
	running := func(name string, ago time.Duration, released, gated int) ([]corev1.Pod, object) {
		d := gt.Pod(name, "s1", v1beta2.SparkRoleDriver, "n", "1", corev1.PodRunning)
		d.CreationTimestamp = metav1.NewTime(now.Add(-ago))
		pods := []corev1.Pod{d}
		for i := range released + gated {
			e := gt.Numbered(gt.Pod(name, "s1", v1beta2.SparkRoleExecutor, "n", "1", corev1.PodPending), i+1)
			if i >= released {
				e.Spec.NodeName = ""
				e.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: GateExecutor}}
			}
			pods = append(pods, e)
		}
		a := app(name, "s1", v1beta2.ApplicationStateRunning, 4, &Reservation{SubmissionID: "s1", Queue: "q", Driver: "n", Executors: map[string]int32{"n": 4}})
		return pods, applicationObject(&a)
	}
	four := map[string]int32{"n": 2, "m": 2}
	type start struct {
		name string
		plan map[string]int32
	}
	type pacingCase struct {
		name      string
		pods      []corev1.Pod
		objects   []object
		releasing int
		backlog   int
		let       map[string]time.Duration // drivers let start by an earlier cycle, how long ago
		starts    []start
		want      map[string]bool
	}
	tests := []pacingCase{{
		name:    "nothing owed: even a plan over the backlog starts, the next waits",
		backlog: 4,
		starts:  []start{{"a", map[string]int32{"n": 8}}, {"b", four}},
		want:    map[string]bool{"a": true, "b": false},
	}, {
		name:    "started in turn until the backlog is owed",
		backlog: 8,
		starts:  []start{{"a", four}, {"b", four}, {"c", four}},
		want:    map[string]bool{"a": true, "b": true, "c": false},
	}, {
		name:    "no pacing",
		backlog: 0,
		starts:  []start{{"a", four}, {"b", four}, {"c", four}},
		want:    map[string]bool{"a": true, "b": true, "c": true},
	}}
	// A driver created just now is owed its 4 executors less those released: with 1 released
	// and 2 gated, 3.
	pods, obj := running("r", time.Second, 1, 2)
	tests = append(tests, pacingCase{name: "executors owed to a driver just created count", pods: pods, objects: []object{obj},
		backlog: 3, starts: []start{{"a", four}}, want: map[string]bool{"a": false}})
	pods, obj = running("r", time.Second, 0, 4)
	tests = append(tests, pacingCase{name: "as do releases in flight", pods: pods, objects: []object{obj},
		releasing: 1, backlog: 5, starts: []start{{"a", four}}, want: map[string]bool{"a": false}})
	pods, obj = running("r", owedFor+time.Second, 0, 4)
	tests = append(tests, pacingCase{name: "a driver created owedFor ago is owed nothing more", pods: pods, objects: []object{obj},
		backlog: 3, starts: []start{{"a", four}, {"b", four}}, want: map[string]bool{"a": true, "b": false}})
	pods, obj = running("r", time.Second, 4, 0)
	tests = append(tests, pacingCase{name: "every executor released: nothing owed", pods: pods, objects: []object{obj},
		backlog: 3, starts: []start{{"a", four}, {"b", four}}, want: map[string]bool{"a": true, "b": false}})
	// A submission recorded whose driver pod the cache does not show yet is owed its plan, for
	// owedFor after its admission.
	submitted := func(admitted time.Time) object {
		a := app("s", "s1", v1beta2.ApplicationStateSubmitted, 4, &Reservation{SubmissionID: "s1", Queue: "q", Driver: "n",
			Executors: map[string]int32{"n": 4}, Admitted: admitted})
		return applicationObject(&a)
	}
	tests = append(tests, pacingCase{name: "a driver being created is owed its executors", objects: []object{submitted(now)},
		backlog: 4, starts: []start{{"a", four}}, want: map[string]bool{"a": false}})
	tests = append(tests, pacingCase{name: "but no longer than owedFor after its admission", objects: []object{submitted(now.Add(-owedFor))},
		backlog: 4, starts: []start{{"a", four}, {"b", four}}, want: map[string]bool{"a": true, "b": false}})
	waiting := app("w", "w1", v1beta2.ApplicationStateNew, 4, &Reservation{SubmissionID: "w1", Queue: "q", Driver: "n",
		Executors: map[string]int32{"n": 4}, Admitted: now})
	tests = append(tests, pacingCase{name: "an admitted one not started yet is owed nothing until it starts", objects: []object{applicationObject(&waiting)},
		backlog: 4, starts: []start{{"a", four}, {"b", four}}, want: map[string]bool{"a": true, "b": false}})
	// One an earlier cycle let start, whose start the cache does not show yet (still NEW, no
	// driver pod): it is not judged again, and its executors are owed, for owedFor.
	letStart := app("l", "s1", v1beta2.ApplicationStateNew, 4, &Reservation{SubmissionID: "s1", Queue: "q", Driver: "n",
		Executors: map[string]int32{"n": 4}, Admitted: now})
	tests = append(tests, pacingCase{name: "one let start earlier starts, and is owed its executors", objects: []object{applicationObject(&letStart)},
		let: map[string]time.Duration{"l": time.Second}, backlog: 4, starts: []start{{"a", four}, {"l", four}},
		want: map[string]bool{"a": false, "l": true}})
	tests = append(tests, pacingCase{name: "one let start owedFor ago is judged again", objects: []object{applicationObject(&letStart)},
		let: map[string]time.Duration{"l": owedFor}, backlog: 4, starts: []start{{"a", four}, {"l", four}},
		want: map[string]bool{"a": true, "l": false}})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			let := map[boundMember]time.Time{}
			for name, ago := range tc.let {
				let[boundMember{app: key(name), submission: "s1", role: v1beta2.SparkRoleDriver}] = now.Add(-ago)
			}
			g := newStartGate(world{Pods: tc.pods, Workloads: tc.objects}, core.Snapshot{}, now, tc.releasing, tc.backlog, let)
			got := map[string]bool{}
			for _, s := range tc.starts {
				got[s.name] = g.start(key(s.name), "s1", "n", s.plan)
				if !got[s.name] && g.held[key(s.name)] != pacedReason {
					t.Errorf("%s held for %q, want %q", s.name, g.held[key(s.name)], pacedReason)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("started (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStartGateRoomWait: a driver held for room (pods of the applications it preempted still
// ending) is overdue once it has waited the room wait since its admission, by the scheduler's
// clock: it is then planned again, and shows why before the reason it waits for next; one held
// for pacing, or let start, never is. Once admitted again, or rerun, it shows that no more.
func TestStartGateRoomWait(t *testing.T) {
	key := func(name string) core.Key {
		return core.Key{Kind: scheduler.KindApplication, NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}
	admitted := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const wait = 2 * time.Minute
	node := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("110")}}}
	stuck := gt.Pod("victim", "v1", v1beta2.SparkRoleDriver, "n", "3", corev1.PodRunning)
	stuck.DeletionTimestamp = &metav1.Time{Time: admitted}
	stuck.Finalizers = []string{"example.com/never"}
	driver := func(name, cpu string) core.Workload {
		return core.Workload{Key: key(name), Demand: sparkpod.Demand{Driver: sparkpod.PodDemand{Role: sparkpod.RoleDriver, Count: 1,
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}
	}
	clock := testingclock.NewFakeClock(admitted)
	tests := []struct {
		name    string
		after   time.Duration
		backlog int
		want    map[string]bool // overdue, by workload
	}{
		{name: "just admitted", after: 0, want: map[string]bool{"held": false, "fits": false}},
		{name: "a moment before the wait is over", after: wait - time.Second, want: map[string]bool{"held": false, "fits": false}},
		{name: "the wait is over: held for room, overdue", after: wait, want: map[string]bool{"held": true, "fits": false}},
		{name: "held for pacing: never overdue", after: 2 * wait, backlog: 1, want: map[string]bool{"held": false, "fits": false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock.SetTime(admitted)
			clock.Step(tc.after)
			now := clock.Now()
			pods := []corev1.Pod{stuck}
			if tc.backlog > 0 {
				pods = nil // room enough: held by pacing alone
			}
			g := newStartGate(world{Nodes: []corev1.Node{node}, Pods: pods},
				core.Snapshot{Workloads: []core.Workload{driver("held", "2"), driver("fits", "1")}}, now, 0, tc.backlog, nil)
			// fits starts first (taking the room left); held, then, waits for room, or for pacing.
			g.start(key("fits"), "s1", "n", map[string]int32{"n": 1})
			g.start(key("held"), "s1", "n", nil)
			got := map[string]bool{}
			for _, name := range []string{"held", "fits"} {
				got[name] = g.overdue(key(name), admitted, now, wait)
			}
			if tc.backlog > 0 && g.held[key("held")] != pacedReason {
				t.Fatalf("held for %q, want pacing", g.held[key("held")])
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("overdue (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("planned again: its reason says so until admitted again", func(t *testing.T) {
		s := New(Config{PreemptionWait: wait, Clock: clock})
		s.replanned[key("held")] = replanned{run: "s1", why: replanReason("n", wait)}
		s.replanned[key("rerun")] = replanned{run: "s1", why: replanReason("n", wait)}
		objects := map[core.Key]*object{}
		for name, run := range map[string]string{"held": "s1", "rerun": "s2"} {
			a := app(name, run, v1beta2.ApplicationStateNew, 1, nil)
			o := applicationObject(&a)
			objects[o.Key] = &o
		}
		noFit := core.Reason{Message: "no node fits: driver needs 2 cpu; no node has it free", Kind: core.ReasonKind{Is: core.KindNoNodeFits}}
		out := core.Outcome{Waiting: map[core.Key]core.Reason{key("held"): noFit, key("rerun"): noFit}}
		s.explainReplanned(objects, out)
		want := map[core.Key]core.Reason{
			key("held"):  {Message: "planned again: pods on n, of the applications it preempted, did not end within 2m0s; " + noFit.Message, Kind: noFit.Kind},
			key("rerun"): noFit,
		}
		if diff := cmp.Diff(want, out.Waiting); diff != "" {
			t.Errorf("reasons (-want +got):\n%s", diff)
		}
		s.explainReplanned(objects, core.Outcome{Admitted: []core.Admitted{{Key: key("held")}}})
		if len(s.replanned) != 0 {
			t.Errorf("still planned again after admitted again, or rerun: %v", s.replanned)
		}
	})
}

// TestWokenFor: a workload whose driver an earlier cycle let start, and woke, is not woken again
// for the same run while the cache does not show it started; another run of it, or another
// workload, is.
func TestWokenFor(t *testing.T) {
	a := scheduler.ApplicationKey(types.NamespacedName{Namespace: "ns", Name: "a"})
	b := scheduler.ApplicationKey(types.NamespacedName{Namespace: "ns", Name: "b"})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := &loop{let: map[boundMember]time.Time{{app: a, submission: "s1", role: v1beta2.SparkRoleDriver}: t0}}
	tests := []struct {
		key  core.Key
		run  string
		now  time.Time
		want bool
	}{
		{a, "s1", t0.Add(time.Second), true},
		{a, "s1", t0.Add(owedFor), false},     // owed no more: woken again
		{a, "s2", t0.Add(time.Second), false}, // rerun since
		{b, "s1", t0.Add(time.Second), false},
	}
	for _, tt := range tests {
		if got := l.wokenFor(tt.key, tt.run, tt.now); got != tt.want {
			t.Errorf("wokenFor(%s, %s) = %t, want %t", tt.key, tt.run, got, tt.want)
		}
	}
}
