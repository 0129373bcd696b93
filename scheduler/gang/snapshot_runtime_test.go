/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	gt "github.com/sparkop/spark-operator/scheduler/gang/gangtest"
)

func TestSnapshotReservations(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := func(sub string, at time.Time) *Reservation {
		return &Reservation{SubmissionID: sub, Queue: "default", Driver: "n1", Executors: map[string]int32{"n1": 2, "n2": 3}, Admitted: at}
	}
	cpuUsed := func(s core.Snapshot) map[string]string {
		m := map[string]string{}
		for _, n := range s.Nodes {
			q := n.Used[corev1.ResourceCPU]
			m[n.Name] = q.String()
		}
		return m
	}
	tests := []struct {
		name     string
		apps     []v1beta2.SparkApplication
		pods     []corev1.Pod
		seen     []int // executor ids of a's run s1 seen before
		wantUsed map[string]string
		admitted int
		waiting  int
		queueCPU string
	}{{
		name:     "admitted, nothing bound: whole gang reserved on the planned nodes",
		apps:     []v1beta2.SparkApplication{app("a", "s1", v1beta2.ApplicationStateNew, 5, res("s1", now))},
		wantUsed: map[string]string{"n1": "5", "n2": "6"},
		admitted: 1, queueCPU: "11",
	}, {
		name: "bound members count through their pods, executors matched anywhere among the plan",
		apps: []v1beta2.SparkApplication{app("a", "s1", v1beta2.ApplicationStateRunning, 5, res("s1", now))},
		pods: []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning),
			gt.Pod("a", "s1", "executor", "n2", "2", corev1.PodRunning)},
		// n1: driver pod 1 + 2 executors reserved; n2: 1 bound + 2 reserved (3 planned - 1).
		wantUsed: map[string]string{"n1": "5", "n2": "6"},
		admitted: 1, queueCPU: "11",
	}, {
		name: "numbered executors: a slot given stays taken once its pod is deleted; those not created yet or gated are kept",
		apps: []v1beta2.SparkApplication{app("a", "s1", v1beta2.ApplicationStateRunning, 5, res("s1", now))},
		// Executor 1 was given n1 and deleted; 2 runs on n1, 3 on n2; 4 is gated, 5 not created.
		pods: []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning),
			given(gt.Numbered(gt.Pod("a", "s1", "executor", "n1", "2", corev1.PodRunning), 2), "n1"),
			given(gt.Numbered(gt.Pod("a", "s1", "executor", "n2", "2", corev1.PodRunning), 3), "n2"),
			withGate(gt.Numbered(gt.Pod("a", "s1", "executor", "", "2", corev1.PodPending), 4))},
		seen: []int{1, 2, 3, 4},
		// n1: driver 1 + executor 2; n2: executor 3 + the slots of 4 and 5 (plan order n1, n1, n2, n2, n2).
		wantUsed: map[string]string{"n1": "3", "n2": "6"},
		admitted: 1, queueCPU: "11",
	}, {
		name: "numbered executors: the slot of one created but not in the cache yet is kept",
		apps: []v1beta2.SparkApplication{app("a", "s1", v1beta2.ApplicationStateRunning, 5, res("s1", now))},
		// 1 and 3 are seen, released to n1 and n2; 2 was created beside them and not seen yet.
		pods: []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning),
			given(gt.Numbered(gt.Pod("a", "s1", "executor", "", "2", corev1.PodPending), 1), "n1"),
			given(gt.Numbered(gt.Pod("a", "s1", "executor", "", "2", corev1.PodPending), 3), "n2")},
		// n1: driver 1 + executor 1 + the slot of 2; n2: executor 3 + the slots of 4 and 5.
		wantUsed: map[string]string{"n1": "5", "n2": "6"},
		admitted: 1, queueCPU: "11",
	}, {
		name:     "a reservation of an older submission holds nothing; the app waits again",
		apps:     []v1beta2.SparkApplication{app("a", "s2", v1beta2.ApplicationStatePendingRerun, 5, res("s1", now))},
		wantUsed: map[string]string{"n1": "0", "n2": "0"},
		waiting:  1, queueCPU: "",
	}, {
		name:     "a preempted run holds nothing and does not wait: it comes back with a new submission",
		apps:     []v1beta2.SparkApplication{markPreempted(app("a", "s1", v1beta2.ApplicationStateRunning, 5, res("s1", now)), "s1")},
		wantUsed: map[string]string{"n1": "0", "n2": "0"},
		queueCPU: "0",
	}, {
		name:     "a preemption mark of an older submission is ignored",
		apps:     []v1beta2.SparkApplication{markPreempted(app("a", "s2", v1beta2.ApplicationStateRunning, 5, res("s2", now)), "s1")},
		wantUsed: map[string]string{"n1": "5", "n2": "6"},
		admitted: 1, queueCPU: "11",
	}, {
		name: "a run whose driver ended holds nothing, though the controller has not seen it end",
		apps: []v1beta2.SparkApplication{app("a", "s1", v1beta2.ApplicationStateRunning, 5, res("s1", now))},
		pods: []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodSucceeded),
			gt.Pod("a", "s1", "executor", "n2", "2", corev1.PodRunning)},
		// The executor not yet gone counts through its pod; nothing is reserved, no quota taken.
		wantUsed: map[string]string{"n1": "0", "n2": "2"},
		queueCPU: "0",
	}, {
		name:     "a driver of an older submission that ended does not end the current run",
		apps:     []v1beta2.SparkApplication{app("a", "s2", v1beta2.ApplicationStateRunning, 5, res("s2", now))},
		pods:     []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodFailed)},
		wantUsed: map[string]string{"n1": "5", "n2": "6"},
		admitted: 1, queueCPU: "11",
	}, {
		name:     "a finished run holds nothing",
		apps:     []v1beta2.SparkApplication{app("a", "s1", v1beta2.ApplicationStateCompleted, 5, res("s1", now))},
		wantUsed: map[string]string{"n1": "0", "n2": "0"},
	}, {
		name:     "after the reservation timeout only the quota stays taken",
		apps:     []v1beta2.SparkApplication{app("a", "s1", v1beta2.ApplicationStateSubmitted, 5, res("s1", now.Add(-time.Hour)))},
		wantUsed: map[string]string{"n1": "0", "n2": "0"},
		admitted: 1, queueCPU: "11",
	}, {
		name:     "terminal pods of other workloads take nothing",
		pods:     []corev1.Pod{gt.Pod("x", "", "", "n1", "3", corev1.PodSucceeded), gt.Pod("y", "", "", "n2", "4", corev1.PodRunning)},
		wantUsed: map[string]string{"n1": "0", "n2": "4"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := world{Nodes: []corev1.Node{gt.ClusterNode("n1"), gt.ClusterNode("n2")}, Pods: tt.pods, Workloads: gangApps(tt.apps),
				Queues: []schedv1alpha1.Queue{{ObjectMeta: metav1.ObjectMeta{Name: "default"}}}}
			if len(tt.apps) > 0 {
				a := boundMember{w.Workloads[0].Key, "s1", v1beta2.SparkRoleExecutor}
				w.Seen = executorIDs{a: {}}
				for _, id := range tt.seen {
					w.Seen[a][id] = true
				}
			}
			snap, err := snapshot(w, snapshotOptions{ReservationTimeout: time.Minute, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantUsed, cpuUsed(snap)); diff != "" {
				t.Errorf("node cpu used (-want +got):\n%s", diff)
			}
			var admitted, waiting int
			for _, wl := range snap.Workloads {
				if wl.Admission != nil {
					admitted++
				} else {
					waiting++
				}
			}
			if admitted != tt.admitted || waiting != tt.waiting {
				t.Errorf("admitted %d, waiting %d; want %d, %d", admitted, waiting, tt.admitted, tt.waiting)
			}
			q := snap.Queues["default"].Usage[corev1.ResourceCPU]
			if got := q.String(); tt.queueCPU != "" && got != tt.queueCPU {
				t.Errorf("queue cpu usage %s, want %s", got, tt.queueCPU)
			}
		})
	}
}

func markPreempted(a v1beta2.SparkApplication, submission string) v1beta2.SparkApplication {
	if a.Annotations == nil {
		a.Annotations = map[string]string{}
	}
	a.Annotations[scheduler.AnnotationPreempted] = submission
	return a
}

// TestOverlayMarked: a preemption the loop wrote counts before the cache shows it, and is
// forgotten once the cache shows it or the application has moved on to another submission.
func TestOverlayMarked(t *testing.T) {
	key := func(name string) core.Key {
		return scheduler.ApplicationKey(types.NamespacedName{Namespace: "ns", Name: name})
	}
	l := &loop{marked: map[core.Key]string{key("lagging"): "s1", key("shown"): "s1", key("rerun"): "s1", key("deleted"): "s1"}}
	objects := gangApps([]v1beta2.SparkApplication{
		app("lagging", "s1", v1beta2.ApplicationStateRunning, 1, nil),
		markPreempted(app("shown", "s1", v1beta2.ApplicationStateRunning, 1, nil), "s1"),
		app("rerun", "s2", v1beta2.ApplicationStatePendingRerun, 1, nil),
	})
	l.overlayMarked(objects)
	got := map[string]string{}
	for _, o := range objects {
		got[o.Key.Name] = o.Object.GetAnnotations()[scheduler.AnnotationPreempted]
	}
	if diff := cmp.Diff(map[string]string{"lagging": "s1", "shown": "s1", "rerun": ""}, got); diff != "" {
		t.Errorf("marks on the applications (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[core.Key]string{key("lagging"): "s1"}, l.marked); diff != "" {
		t.Errorf("marks kept (-want +got):\n%s", diff)
	}
}

func TestReservationPods(t *testing.T) {
	r := Reservation{SubmissionID: "s", Queue: "q", Driver: "n1", Executors: map[string]int32{"n3": 1, "n2": 2, "n4": 0}}
	p := r.Pods(EnforcementAdvisory)
	if diff := cmp.Diff([]string{"n1"}, p.Driver.NodeNames); diff != "" {
		t.Error(diff)
	}
	if p.Executor.NodeNames != nil {
		t.Errorf("executor template confined to %v: extra executors could not go beyond the planned nodes", p.Executor.NodeNames)
	}
	if diff := cmp.Diff([]corev1.PodSchedulingGate{{Name: GateExecutor}}, p.Executor.SchedulingGates); diff != "" {
		t.Error(diff)
	}
	if p.Executor.Labels[LabelQueue] != "q" || p.Driver.Labels[LabelQueue] != "q" {
		t.Errorf("queue label missing: %+v", p)
	}
}

// TestPodSlots: a node's allocatable "pods" is capacity like cpu. Every non-terminal pod bound
// to a node, and every admitted member reserved there and not bound yet, takes one slot; a
// node with no slot left is not chosen, however well its cpu fits.
func TestPodSlots(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	node := func(name, cpu, pods string) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("64Gi"),
			corev1.ResourcePods: resource.MustParse(pods)}}}
	}
	other := func(name, nodeName, cpu string, phase corev1.PodPhase) corev1.Pod {
		p := gt.Pod(name, "", "", nodeName, cpu, phase)
		p.Labels = nil
		return p
	}
	tests := []struct {
		name     string
		nodes    []corev1.Node
		pods     []corev1.Pod
		apps     []v1beta2.SparkApplication
		wantUsed map[string]string // node → pod slots used
		// wantPlan is the waiting application w's admission: driver node, executors per node;
		// nil when it must wait.
		wantPlan *core.Admission
	}{{
		name:     "a full node is not chosen though its cpu fits tightest",
		nodes:    []corev1.Node{node("n1", "16", "2"), node("n2", "16", "110")},
		pods:     []corev1.Pod{other("x", "n1", "7", corev1.PodRunning), other("y", "n1", "7", corev1.PodRunning)},
		apps:     []v1beta2.SparkApplication{app("w", "s1", v1beta2.ApplicationStateNew, 1, nil)},
		wantUsed: map[string]string{"n1": "2", "n2": "0"},
		wantPlan: &core.Admission{Queue: "default", Driver: "n2", Executors: map[string]int32{"n2": 1}},
	}, {
		name:     "one slot left: the driver takes it, the executor goes elsewhere",
		nodes:    []corev1.Node{node("n1", "16", "3"), node("n2", "16", "110")},
		pods:     []corev1.Pod{other("x", "n1", "7", corev1.PodRunning), other("y", "n1", "7", corev1.PodRunning)},
		apps:     []v1beta2.SparkApplication{app("w", "s1", v1beta2.ApplicationStateNew, 1, nil)},
		wantUsed: map[string]string{"n1": "2", "n2": "0"},
		wantPlan: &core.Admission{Queue: "default", Driver: "n1", Executors: map[string]int32{"n2": 1}},
	}, {
		name:     "terminal pods free their slot",
		nodes:    []corev1.Node{node("n1", "16", "2")},
		pods:     []corev1.Pod{other("x", "n1", "1", corev1.PodSucceeded), other("y", "n1", "1", corev1.PodFailed)},
		apps:     []v1beta2.SparkApplication{app("w", "s1", v1beta2.ApplicationStateNew, 1, nil)},
		wantUsed: map[string]string{"n1": "0"},
		wantPlan: &core.Admission{Queue: "default", Driver: "n1", Executors: map[string]int32{"n1": 1}},
	}, {
		name:  "an admitted gang's unbound members hold their slots",
		nodes: []corev1.Node{node("n1", "16", "3")},
		apps: []v1beta2.SparkApplication{
			app("a", "s1", v1beta2.ApplicationStateSubmitted, 1, &Reservation{SubmissionID: "s1", Queue: "default", Driver: "n1", Executors: map[string]int32{"n1": 1}, Admitted: now}),
			app("w", "s2", v1beta2.ApplicationStateNew, 1, nil)},
		wantUsed: map[string]string{"n1": "2"},
	}, {
		name:  "bound members hold their slot through their pod, once",
		nodes: []corev1.Node{node("n1", "16", "4")},
		pods:  []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning)},
		apps: []v1beta2.SparkApplication{
			app("a", "s1", v1beta2.ApplicationStateRunning, 1, &Reservation{SubmissionID: "s1", Queue: "default", Driver: "n1", Executors: map[string]int32{"n1": 1}, Admitted: now}),
			app("w", "s2", v1beta2.ApplicationStateNew, 1, nil)},
		wantUsed: map[string]string{"n1": "2"},
		wantPlan: &core.Admission{Queue: "default", Driver: "n1", Executors: map[string]int32{"n1": 1}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := world{Nodes: tt.nodes, Pods: tt.pods, Workloads: gangApps(tt.apps),
				Queues: []schedv1alpha1.Queue{{ObjectMeta: metav1.ObjectMeta{Name: "default"}}}}
			snap, err := snapshot(w, snapshotOptions{ReservationTimeout: time.Minute, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			used := map[string]string{}
			for _, n := range snap.Nodes {
				q := n.Used[corev1.ResourcePods]
				used[n.Name] = q.String()
			}
			if diff := cmp.Diff(tt.wantUsed, used); diff != "" {
				t.Errorf("pod slots used (-want +got):\n%s", diff)
			}
			out := core.Schedule(snap, core.Options{})
			var got *core.Admission
			for _, a := range out.Admitted {
				if a.Key.Name == "w" {
					got = &a.Admission
				}
			}
			if diff := cmp.Diff(tt.wantPlan, got); diff != "" {
				t.Errorf("admission of w (-want +got):\n%s\nwaiting: %v, rejected: %v", diff, out.Waiting, out.Rejected)
			}
		})
	}
}

// TestExecutorReleases runs the runtime's whole path for gated executors (the world read from
// the cluster, its snapshot, a cycle, the releases): the planned nodes' slots first, then
// executors beyond the plan only within the queue's quota and onto free capacity, counted
// where they go once released.
func TestExecutorsToUngate(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	node := func(name string) corev1.Node {
		n := gt.ClusterNode(name)
		n.Status.Allocatable[corev1.ResourceMemory] = resource.MustParse("64Gi")
		return n
	}
	// executor is an executor of a's submission sub: gated, or released to node (bound when
	// bound is set).
	executor := func(name, sub, node string, gated, bound bool, phase corev1.PodPhase) corev1.Pod {
		p := gt.Pod("a", sub, "executor", "", "2", phase)
		p.Name = name
		if gated {
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: GateExecutor}}
			return p
		}
		p.Annotations = map[string]string{AnnotationNode: node}
		if bound {
			p.Spec.NodeName = node
		}
		return p
	}
	running := func(ps ...corev1.Pod) []corev1.Pod {
		return append([]corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning),
			executor("e1", "s1", "n1", false, true, corev1.PodRunning), executor("e2", "s1", "n1", false, true, corev1.PodRunning)}, ps...)
	}
	gated := func(names ...string) []corev1.Pod {
		var ps []corev1.Pod
		for _, n := range names {
			ps = append(ps, executor(n, "s1", "", true, false, corev1.PodPending))
		}
		return ps
	}
	// other is a pod of no gang application, bound to node.
	other := func(name, node, cpu string) corev1.Pod {
		p := gt.Pod(name, "", "", node, cpu, corev1.PodRunning)
		p.Labels = nil
		return p
	}
	res := &Reservation{SubmissionID: "s1", Queue: "default", Driver: "n1", Executors: map[string]int32{"n1": 2}, Admitted: now}
	tests := []struct {
		name     string
		quota    string        // the default queue's cpu quota; "" = none
		sub      string        // a's current submission; "" = s1
		age      time.Duration // time since a's admission (the reservation timeout is a minute)
		pods     []corev1.Pod
		want     []string // "pod→node"
		queueCPU string   // the default queue's admitted cpu after the cycle
		n2CPU    string   // if set, the cpu used on n2 in the snapshot
	}{{
		name:     "beyond the plan, without quota: onto free capacity, tightest first",
		pods:     running(gated("e3", "e4", "e5")...),
		want:     []string{"e3→n1", "e4→n1", "e5→n1"},
		queueCPU: "11",
	}, {
		name:     "beyond the plan: only what the queue's quota allows",
		quota:    "7",
		pods:     running(gated("e3", "e4", "e5")...),
		want:     []string{"e3→n1"},
		queueCPU: "7",
	}, {
		name:     "an executor released and not bound yet counts on its node and in the quota",
		quota:    "7",
		pods:     running(append([]corev1.Pod{executor("e3", "s1", "n2", false, false, corev1.PodPending)}, gated("e4")...)...),
		queueCPU: "7",
		n2CPU:    "2",
	}, {
		name:     "a replacement for an executor that ended takes no more quota",
		quota:    "5",
		pods:     []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning), executor("e1", "s1", "n1", false, true, corev1.PodFailed), executor("e2", "s1", "n1", false, true, corev1.PodRunning), gated("e3", "e4")[0], gated("e3", "e4")[1]},
		want:     []string{"e3→n1"},
		queueCPU: "5",
	}, {
		name:     "a replacement goes where capacity is free, not to the planned node its ended executor left to others",
		quota:    "5",
		pods:     []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning), executor("e1", "s1", "n1", false, true, corev1.PodFailed), executor("e2", "s1", "n1", false, true, corev1.PodRunning), other("x", "n1", "13"), gated("e3")[0]},
		want:     []string{"e3→n2"},
		queueCPU: "5",
	}, {
		name:     "an executor whose pod is gone leaves its planned slot to the next",
		quota:    "5",
		pods:     []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning), executor("e2", "s1", "n1", false, true, corev1.PodRunning), gated("e3", "e4")[0], gated("e3", "e4")[1]},
		want:     []string{"e3→n1"},
		queueCPU: "5",
	}, {
		name:     "an executor numbered beyond the plan never takes a planned slot, not even one its deleted predecessor left free",
		quota:    "5",
		pods:     []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning), gt.Numbered(executor("e2", "s1", "n1", false, true, corev1.PodRunning), 2), other("x", "n1", "13"), gt.Numbered(gated("e3")[0], 3)},
		want:     []string{"a-exec-3→n2"},
		queueCPU: "5",
	}, {
		name:     "the plan's own ids take their slots, a replacement created among them goes beyond the plan",
		quota:    "5",
		pods:     []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning), other("x", "n1", "12"), gt.Numbered(gated("e2")[0], 2), gt.Numbered(gated("e3")[0], 3)},
		want:     []string{"a-exec-2→n1", "a-exec-3→n2"},
		queueCPU: "5",
	}, {
		name:     "a lapsed reservation gives no planned slots: its executors go where capacity is free, within the gang's quota",
		quota:    "5",
		age:      2 * time.Minute,
		pods:     []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning), other("x", "n1", "14"), gated("e1", "e2")[0], gated("e1", "e2")[1]},
		want:     []string{"e1→n2", "e2→n2"},
		queueCPU: "5",
	}, {
		name:     "a lapsed reservation's executors stay gated while no node has room",
		age:      2 * time.Minute,
		pods:     []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodRunning), other("x", "n1", "14"), other("y", "n2", "15"), gated("e1", "e2")[0], gated("e1", "e2")[1]},
		queueCPU: "5",
	}, {
		name:     "executors of a submission without a reservation are let go unconfined",
		sub:      "s2",
		pods:     running(gated("e3")...),
		want:     []string{"e3→"},
		queueCPU: "",
	}, {
		// The controller has not recorded the end yet: the application still shows RUNNING.
		name: "executors that appear after their run's driver ended get no planned slot: let go unconfined",
		pods: []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodSucceeded),
			gt.Numbered(gated("e1")[0], 1), gt.Numbered(gated("e2")[0], 2)},
		want: []string{"a-exec-1→", "a-exec-2→"},
	}, {
		name: "as are those of a run whose driver failed, unnumbered",
		pods: []corev1.Pod{gt.Pod("a", "s1", "driver", "n1", "1", corev1.PodFailed), gated("e1", "e2")[0], gated("e1", "e2")[1]},
		want: []string{"e1→", "e2→"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub := tt.sub
			if sub == "" {
				sub = "s1"
			}
			q := schedv1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
			if tt.quota != "" {
				q.Spec.Quota = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(tt.quota)}
			}
			w := world{Nodes: []corev1.Node{node("n1"), node("n2")}, Pods: tt.pods,
				Workloads: gangApps([]v1beta2.SparkApplication{app("a", sub, v1beta2.ApplicationStateRunning, 2, res)}), Queues: []schedv1alpha1.Queue{q}}
			o := snapshotOptions{ReservationTimeout: time.Minute, Now: now.Add(tt.age)}
			snap, err := snapshot(w, o)
			if err != nil {
				t.Fatal(err)
			}
			if tt.n2CPU != "" {
				for _, n := range snap.Nodes {
					if used := n.Used[corev1.ResourceCPU]; n.Name == "n2" && used.String() != tt.n2CPU {
						t.Errorf("n2 cpu used %s, want %s", used.String(), tt.n2CPU)
					}
				}
			}
			out := core.Schedule(snap, core.Options{})
			var got []string
			for _, r := range executorsToUngate(w, out.Ungated, o) {
				got = append(got, r.pod.Name+"→"+r.node)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("releases (-want +got):\n%s", diff)
			}
			cpu := out.Usage["default"][corev1.ResourceCPU]
			if got := cpu.String(); tt.queueCPU != "" && got != tt.queueCPU {
				t.Errorf("queue cpu admitted %s, want %s", got, tt.queueCPU)
			}
		})
	}
}

func TestUnrecordedApplications(t *testing.T) {
	suspended := app("suspended", "", v1beta2.ApplicationStateNew, 1, nil)
	suspended.Spec.Suspend = ptr.To(true)
	apps := []v1beta2.SparkApplication{
		app("new", "", v1beta2.ApplicationStateNew, 1, nil),
		app("rerun", "", v1beta2.ApplicationStatePendingRerun, 1, nil),
		app("recorded", "s1", v1beta2.ApplicationStateNew, 1, nil),
		app("done", "", v1beta2.ApplicationStateCompleted, 1, nil),
		suspended,
	}
	snap, err := snapshot(world{Workloads: gangApps(apps)}, snapshotOptions{Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, w := range snap.Workloads {
		got[w.Key.Name] = w.Unrecorded
	}
	want := map[string]bool{"new": true, "rerun": true, "recorded": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("workloads in the cycle → unrecorded (-want +got):\n%s", diff)
	}
}

// TestSnapshotQueues: a Queue object reads as the cycle's queue: parent, priority and quota as
// given, borrowing.policy Never keeping it within its quota, borrowing.limit capping the rest.
func TestSnapshotQueues(t *testing.T) {
	cpu := func(s string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(s)}
	}
	queues := []schedv1alpha1.Queue{
		{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}, Spec: schedv1alpha1.QueueSpec{Parent: "org", Priority: 3, Quota: cpu("16"),
			Borrowing: &schedv1alpha1.Borrowing{Policy: schedv1alpha1.BorrowingAllowed, Limit: cpu("4")}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "strict"}, Spec: schedv1alpha1.QueueSpec{Parent: "org", Quota: cpu("8"),
			Borrowing: &schedv1alpha1.Borrowing{Policy: schedv1alpha1.BorrowingNever}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "org"}, Spec: schedv1alpha1.QueueSpec{Quota: cpu("32")}},
	}
	snap, err := snapshot(world{Queues: queues}, snapshotOptions{Now: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*core.Queue{
		"team-a": {Name: "team-a", Parent: "org", Priority: 3, Quota: cpu("16"), BorrowingLimit: cpu("4"), Usage: corev1.ResourceList{}},
		"strict": {Name: "strict", Parent: "org", Quota: cpu("8"), NoBorrowing: true, Usage: corev1.ResourceList{}},
		"org":    {Name: "org", Quota: cpu("32"), Usage: corev1.ResourceList{}},
	}
	if diff := cmp.Diff(want, snap.Queues, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("queues (-want +got):\n%s", diff)
	}
}

// BenchmarkCycleScale: what a cycle of the operator works out at the sizes of the scale
// scenario (docs/benchmarks.md, #25 §5), from the cache's objects on: the workloads read from
// the applications (their demands remembered, as between cycles), the snapshot, and the
// decision. Ten applications a node: a tenth running whole (a 1-CPU driver, 4 executors of 2
// CPU, on the node their reservation planned), the rest waiting. The cache's lists and the
// cycle's API calls are not in it.
func BenchmarkCycleScale(b *testing.B) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, nodes := range []int{100, 300, 1000} {
		b.Run(fmt.Sprintf("nodes=%d,apps=%d", nodes, 10*nodes), func(b *testing.B) {
			var w world
			for i := range nodes {
				w.Nodes = append(w.Nodes, gt.ClusterNode(fmt.Sprintf("node-%04d", i)))
			}
			w.Queues = []schedv1alpha1.Queue{{ObjectMeta: metav1.ObjectMeta{Name: "default"}}}
			var apps []v1beta2.SparkApplication
			reservations := map[types.UID]*Reservation{}
			for i := range 10 * nodes {
				name, sub := fmt.Sprintf("app-%05d", i), fmt.Sprintf("s-%05d", i)
				if i%10 != 0 {
					a := app(name, sub, v1beta2.ApplicationStateNew, 4, nil)
					a.UID = types.UID(name)
					a.CreationTimestamp = metav1.NewTime(now.Add(time.Duration(i) * time.Millisecond))
					apps = append(apps, a)
					continue
				}
				node := w.Nodes[i/10].Name
				a := app(name, sub, v1beta2.ApplicationStateRunning, 4, nil)
				a.UID = types.UID(name)
				apps = append(apps, a)
				reservations[a.UID] = &Reservation{SubmissionID: sub, Queue: "default", Driver: node, Executors: map[string]int32{node: 4}, Admitted: now}
				w.Pods = append(w.Pods, gt.Pod(name, sub, "driver", node, "1", corev1.PodRunning))
				for id := 1; id <= 4; id++ {
					w.Pods = append(w.Pods, given(gt.Numbered(gt.Pod(name, sub, "executor", node, "2", corev1.PodRunning), id), node))
				}
			}
			var memo demandMemo
			read := func() world {
				w := w
				w.Workloads = make([]object, 0, len(apps))
				for i := range apps {
					o := applicationObject(&apps[i])
					o.demand = memo.of(apps[i].UID, apps[i].Generation, o.demand)
					o.res = reservations[apps[i].UID]
					w.Workloads = append(w.Workloads, o)
				}
				memo.keepFor(w.Workloads)
				return w
			}
			opts := snapshotOptions{ReservationTimeout: time.Hour, Now: now}
			if _, err := snapshot(read(), opts); err != nil { // the demands worked out once, as by earlier cycles
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				snap, err := snapshot(read(), opts)
				if err != nil {
					b.Fatal(err)
				}
				core.Schedule(snap, core.Options{})
			}
		})
	}
}
