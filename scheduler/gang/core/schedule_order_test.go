/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package core_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkop/spark-operator/scheduler/gang/core"
	gt "github.com/sparkop/spark-operator/scheduler/gang/gangtest"
)

func TestOrder(t *testing.T) {
	nodes := []*gt.NodeWrapper{gt.MakeNode("n1").Used("12", "1Gi")}
	run(t, []scenario{{
		name:   "queue priority, then application priority, then creation time, then key",
		nodes:  []*gt.NodeWrapper{gt.MakeNode("n1").Capacity("3", "16Gi")},
		queues: []*gt.QueueWrapper{gt.MakeQueue("low"), gt.MakeQueue("high").Priority(10)},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("low-queue-urgent").Queue("low").Priority(100),
			gt.MakeWorkload("old").Queue("high"),
			gt.MakeWorkload("urgent").Queue("high").Priority(5).Created(time.Hour),
			gt.MakeWorkload("b-new").Queue("high").Created(time.Minute),
			gt.MakeWorkload("a-new").Queue("high").Created(time.Minute),
		},
		want: summary{
			Admitted: []string{"urgent: n1 []", "old: n1 []", "a-new: n1 []"},
			Waiting: map[string]string{
				"b-new":            "no node fits: driver needs 1 cpu, 1Gi; no node has it free",
				"low-queue-urgent": "no node fits: driver needs 1 cpu, 1Gi; no node has it free",
			},
			Order: map[string][]string{"high": {"b-new"}, "low": {"low-queue-urgent"}},
		},
	}, {
		name:  "an older application whose submission is not recorded yet keeps its place: nothing behind it goes first",
		nodes: []*gt.NodeWrapper{gt.MakeNode("n1").Capacity("2", "16Gi")},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("older").Unrecorded(),
			gt.MakeWorkload("newer").Created(time.Second),
		},
		want: summary{
			Waiting: map[string]string{"newer": "behind 1 application in queue default; needs 1 cpu, 1Gi"},
			Order:   map[string][]string{"default": {"newer"}},
		},
	}, {
		name:  "an unrecorded application that can never be admitted, or behind the head, holds nothing back",
		nodes: []*gt.NodeWrapper{gt.MakeNode("n1").Capacity("2", "16Gi")},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("too-big").Driver("64", "1Gi").Unrecorded(),
			gt.MakeWorkload("first").Created(time.Second),
			gt.MakeWorkload("later").Created(time.Minute).Unrecorded(),
		},
		want: summary{Admitted: []string{"first: n1 []"}},
	}, {
		name:   "strict order: the head of a queue blocks the smaller workloads behind it; other queues go on",
		nodes:  []*gt.NodeWrapper{gt.MakeNode("n1").Capacity("8", "16Gi").Used("4", "1Gi")},
		queues: []*gt.QueueWrapper{gt.MakeQueue("default"), gt.MakeQueue("other")},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("head").Driver("1", "1Gi").Executors(2, "2", "1Gi"),
			gt.MakeWorkload("small").Created(time.Second),
			gt.MakeWorkload("smaller").Driver("500m", "1Gi").Created(2 * time.Second),
			gt.MakeWorkload("elsewhere").Queue("other").Created(time.Hour),
		},
		want: summary{
			Admitted: []string{"elsewhere: n1 []"},
			Waiting: map[string]string{
				"head":    "no node fits: 2 executors need 2 cpu, 1Gi each; room for 1 of 2 next to the driver",
				"small":   "behind 1 application in queue default; needs 1 cpu, 1Gi",
				"smaller": "behind 2 applications in queue default; needs 500m cpu, 1Gi",
			},
			Order: map[string][]string{"default": {"head", "small", "smaller"}},
		},
	}, {
		name:  "a workload that may use no node waits without blocking its queue",
		nodes: nodes,
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("nowhere").Executors(1, "1", "1Gi").RequireNodeLabelIn("zone", "z"),
			gt.MakeWorkload("next").Created(time.Second),
		},
		want: summary{
			Admitted: []string{"next: n1 []"},
			Waiting:  map[string]string{"nowhere": "no schedulable node matches the driver's node selector, affinity and tolerations"},
			Order:    map[string][]string{"default": {"nowhere"}},
		},
	}, {
		name:  "a rejected workload leaves the order and blocks nobody",
		nodes: nodes,
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("oversized").Driver("64", "1Gi"),
			gt.MakeWorkload("next").Created(time.Second),
		},
		want: summary{
			Admitted: []string{"next: n1 []"},
			Rejected: map[string]string{"oversized": "the driver needs 64 cpu, 1Gi: more than any matching node's allocatable"},
		},
	}, {
		name:   "admissions count against the capacity and quota of the cycle's later decisions",
		nodes:  []*gt.NodeWrapper{gt.MakeNode("n1").Used("12", "1Gi"), gt.MakeNode("n2").Capacity("4", "16Gi")},
		queues: []*gt.QueueWrapper{gt.MakeQueue("default").Quota("memory", "2Gi")},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("first").Driver("3", "1Gi"),
			gt.MakeWorkload("second").Driver("1", "1Gi").Queue("default").Created(time.Second),
			gt.MakeWorkload("third").Driver("1", "1Gi").Created(2 * time.Second),
		},
		want: summary{
			Admitted: []string{"first: n1 []", "second: n1 []"}, // second fills n1: the tightest fit
			Waiting:  map[string]string{"third": "over quota in queue default: needs 1Gi, 0 free (quota 2Gi, 2Gi in use)"},
			Order:    map[string][]string{"default": {"third"}},
		},
	}})
}

func TestBackfill(t *testing.T) {
	gpuHead := func() *gt.WorkloadWrapper {
		return gt.MakeWorkload("head").NodeSelector("gpu", "true").Driver("1", "1Gi").Executors(2, "2", "1Gi")
	}
	nodes := func() []*gt.NodeWrapper {
		return []*gt.NodeWrapper{gt.MakeNode("gpu1").Label("gpu", "true").Used("14", "1Gi"), gt.MakeNode("cpu1")}
	}
	run(t, []scenario{{
		name:      "without backfill the blocked head holds back a workload that fits",
		nodes:     nodes(),
		workloads: []*gt.WorkloadWrapper{gpuHead(), gt.MakeWorkload("small").Created(time.Second)},
		want: summary{
			Waiting: map[string]string{
				"head":  "no node fits: 2 executors need 2 cpu, 1Gi each; room for 0 of 2 next to the driver",
				"small": "behind 1 application in queue default; needs 1 cpu, 1Gi",
			},
			Order: map[string][]string{"default": {"head", "small"}},
		},
	}, {
		name:  "backfill protects an unrecorded head as any other: the small one goes only where the head can never go",
		nodes: nodes(),
		opts:  core.Options{Backfill: true},
		workloads: []*gt.WorkloadWrapper{gpuHead().Unrecorded(), gt.MakeWorkload("small").Created(time.Second),
			gt.MakeWorkload("gpu-small").NodeSelector("gpu", "true").Created(time.Minute)},
		want: summary{
			Admitted: []string{"small: cpu1 []"},
			Waiting: map[string]string{
				"gpu-small": "behind 1 application in queue default; cannot go first: no schedulable node matches the driver's node selector, affinity and tolerations on nodes the head cannot use; needs 1 cpu, 1Gi",
			},
			Order: map[string][]string{"default": {"gpu-small"}},
		},
	}, {
		name:      "backfill goes on nodes the head can never use, even where another node fits tighter",
		nodes:     nodes(),
		opts:      core.Options{Backfill: true},
		workloads: []*gt.WorkloadWrapper{gpuHead(), gt.MakeWorkload("small").Created(time.Second)},
		want: summary{
			Admitted: []string{"small: cpu1 []"},
			Waiting:  map[string]string{"head": "no node fits: 2 executors need 2 cpu, 1Gi each; room for 0 of 2 next to the driver"},
			Order:    map[string][]string{"default": {"head"}},
		},
	}, {
		name: "backfill never takes capacity the head could use",
		nodes: []*gt.NodeWrapper{
			gt.MakeNode("n1").Used("14", "1Gi"), gt.MakeNode("n2").Used("14", "1Gi"),
			// Too small for any member of the head: free for others.
			gt.MakeNode("tiny").Capacity("1", "16Gi"),
		},
		opts: core.Options{Backfill: true},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("head").Driver("2", "1Gi").Executors(2, "2", "1Gi"),
			gt.MakeWorkload("small").Driver("2", "1Gi").Created(time.Second),
			gt.MakeWorkload("smaller").Driver("1", "1Gi").Created(2 * time.Second),
		},
		want: summary{
			Admitted: []string{"smaller: tiny []"},
			Waiting: map[string]string{
				"head":  "no node fits: 2 executors need 2 cpu, 1Gi each; room for 1 of 2 next to the driver",
				"small": "behind 1 application in queue default; cannot go first: no node fits: driver needs 2 cpu, 1Gi; no node has it free on nodes the head cannot use; needs 2 cpu, 1Gi",
			},
			Order: map[string][]string{"default": {"head", "small"}},
		},
	}, {
		name:   "backfill never takes quota the head needs",
		nodes:  nodes(),
		queues: []*gt.QueueWrapper{gt.MakeQueue("default").Quota("cpu", "6")},
		opts:   core.Options{Backfill: true},
		workloads: []*gt.WorkloadWrapper{
			gpuHead(),
			gt.MakeWorkload("small").Driver("2", "1Gi").Created(time.Second),
			gt.MakeWorkload("tiny").Driver("1", "1Gi").Created(2 * time.Second),
		},
		want: summary{
			Admitted: []string{"tiny: cpu1 []"},
			Waiting: map[string]string{
				"head":  "no node fits: 2 executors need 2 cpu, 1Gi each; room for 0 of 2 next to the driver",
				"small": "behind 1 application in queue default; cannot go first: it would take quota the head ns/head needs; needs 2 cpu, 1Gi",
			},
			Order: map[string][]string{"default": {"head", "small"}},
		},
	}})
}

func TestPreemption(t *testing.T) {
	// n1 holds c (priority 0, 2 cpu) and f (priority 20, 6 cpu); n2 holds d (priority 1, 8 cpu).
	full := func() []*gt.NodeWrapper {
		return []*gt.NodeWrapper{gt.MakeNode("n1").Capacity("8", "32Gi").Used("8", "2Gi"), gt.MakeNode("n2").Capacity("8", "32Gi").Used("8", "1Gi")}
	}
	running := func() []*gt.WorkloadWrapper {
		return []*gt.WorkloadWrapper{
			gt.MakeWorkload("c").Driver("2", "1Gi").Admitted("n1", nil),
			gt.MakeWorkload("f").Priority(20).Driver("6", "1Gi").Admitted("n1", nil),
			gt.MakeWorkload("d").Priority(1).Driver("1", "1Gi").Executors(1, "7", "0").Admitted("n2", map[string]int32{"n2": 1}),
		}
	}
	with := func(ws ...*gt.WorkloadWrapper) []*gt.WorkloadWrapper { return append(running(), ws...) }
	run(t, []scenario{{
		name:      "off by default",
		nodes:     full(),
		workloads: with(gt.MakeWorkload("h").Priority(10).Driver("8", "1Gi")),
		want: summary{
			Waiting: map[string]string{"h": "no node fits: driver needs 8 cpu, 1Gi; no node has it free"},
			Order:   map[string][]string{"default": {"h"}},
		},
	}, {
		name:      "evicts the fewest whole lower-priority applications that make the gang fit",
		nodes:     full(),
		opts:      core.Options{Preemption: true},
		workloads: with(gt.MakeWorkload("h").Priority(10).Driver("8", "1Gi")),
		// c (lowest) alone frees too little; with d the gang fits, and then c is spared.
		want: summary{
			Admitted:  []string{"h: n2 []"},
			Preempted: []string{"d by h: preempted by ns/h (priority 10) in queue default: its priority 1 is lower"},
		},
	}, {
		name:      "never evicts applications of the same or a higher priority",
		nodes:     full(),
		opts:      core.Options{Preemption: true},
		workloads: with(gt.MakeWorkload("h").Priority(1).Driver("8", "1Gi")),
		want: summary{
			Waiting: map[string]string{"h": "no node fits: driver needs 8 cpu, 1Gi; no node has it free"},
			Order:   map[string][]string{"default": {"h"}},
		},
	}, {
		name:      "never evicts lower-priority applications of other queues that do not borrow",
		nodes:     full(),
		opts:      core.Options{Preemption: true},
		queues:    []*gt.QueueWrapper{gt.MakeQueue("default"), gt.MakeQueue("vip")},
		workloads: with(gt.MakeWorkload("h").Queue("vip").Priority(10).Driver("8", "1Gi")),
		want: summary{
			Waiting: map[string]string{"h": "no node fits: driver needs 8 cpu, 1Gi; no node has it free"},
			Order:   map[string][]string{"vip": {"h"}},
		},
	}, {
		// Creation times have a resolution of a second: among equals created in the same one,
		// the application last in admission order (by key) is the newest.
		name:  "among equals created in the same second, the last in admission order is evicted",
		nodes: []*gt.NodeWrapper{gt.MakeNode("n1").Capacity("4", "32Gi").Used("4", "2Gi")},
		opts:  core.Options{Preemption: true},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("low-1").Driver("2", "1Gi").Admitted("n1", nil),
			gt.MakeWorkload("low-2").Driver("2", "1Gi").Admitted("n1", nil),
			gt.MakeWorkload("high").Priority(10).Driver("2", "1Gi"),
		},
		want: summary{
			Admitted:  []string{"high: n1 []"},
			Preempted: []string{"low-2 by high: preempted by ns/high (priority 10) in queue default: its priority 0 is lower"},
		},
	}, {
		name:  "a queue takes back its own quota from a borrowing sibling, whatever the priorities",
		nodes: []*gt.NodeWrapper{gt.MakeNode("n1").Capacity("32", "64Gi").Used("14", "2Gi")},
		opts:  core.Options{Preemption: true},
		queues: []*gt.QueueWrapper{
			gt.MakeQueue("org").Quota("cpu", "16"),
			gt.MakeQueue("a").Parent("org").Quota("cpu", "8"),
			gt.MakeQueue("b").Parent("org").Quota("cpu", "8"),
		},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("b-big").Queue("b").Priority(100).Driver("1", "1Gi").Executors(1, "11", "0").Admitted("n1", map[string]int32{"n1": 1}),
			gt.MakeWorkload("b-small").Queue("b").Driver("2", "1Gi").Admitted("n1", nil),
			gt.MakeWorkload("a-head").Queue("a").Driver("2", "1Gi").Executors(3, "2", "1Gi"),
		},
		want: summary{
			Admitted:  []string{"a-head: n1 [n1×3]"},
			Preempted: []string{"b-big by a-head: preempted by ns/a-head: queue a takes back its own quota that queue b borrowed"},
		},
	}})
}

// TestIssueScenario is the end-to-end scenario of the gang scheduler's issue, decided in one
// cycle: 4 nodes of 16 cpu, 20 applications of a 1-cpu driver and 8 executors of 2 cpu. Each
// needs 17 cpu, more than a node: 3 fit at once (51 of 64 cpu), the 4th waits at the head.
func TestIssueScenario(t *testing.T) {
	sc := scenario{}
	for i := range 4 {
		sc.nodes = append(sc.nodes, gt.MakeNode(fmt.Sprintf("node-%d", i)).Capacity("16", "64Gi"))
	}
	for i := range 20 {
		sc.workloads = append(sc.workloads, gt.MakeWorkload(fmt.Sprintf("app-%02d", i)).Created(time.Duration(i)*time.Second).
			Driver("1", "1408Mi").Executors(8, "2", "1408Mi"))
	}
	out := core.Schedule(sc.snapshot(), core.Options{})
	got := summarize(out)
	want := []string{
		"app-00: node-0 [node-0×7 node-1×1]",
		"app-01: node-0 [node-1×7 node-2×1]",
		"app-02: node-2 [node-2×6 node-3×2]",
	}
	if diff := cmp.Diff(want, got.Admitted); diff != "" {
		t.Errorf("admitted (-want +got):\n%s", diff)
	}
	if r := got.Waiting["app-03"]; r != "no node fits: 8 executors need 2 cpu, 1408Mi each; room for 6 of 8 next to the driver" {
		t.Errorf("the head waits with %q", r)
	}
	if r := got.Waiting["app-19"]; r != "behind 16 applications in queue default; needs 17 cpu, 12672Mi" {
		t.Errorf("the last waits with %q", r)
	}
	if n := len(out.Order["default"]); n != 17 {
		t.Errorf("%d applications in the queue's order, want 17", n)
	}
}
