/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package core_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"

	"github.com/sparkop/spark-operator/scheduler/gang/core"
	gt "github.com/sparkop/spark-operator/scheduler/gang/gangtest"
)

const gpu = corev1.ResourceName("nvidia.com/gpu")

// summary is an Outcome in a form a test table can state: keys by name (all in namespace
// gangtest.Namespace), admissions as "name: driver-node [node×executors ...]".
type summary struct {
	Admitted  []string
	Preempted []string // "victim by preemptor: reason"
	Waiting   map[string]string
	Rejected  map[string]string
	Order     map[string][]string
	Ungated   map[string][]string // executors released beyond the plan: name → their nodes
}

func summarize(o core.Outcome) summary {
	s := summary{Waiting: map[string]string{}, Rejected: map[string]string{}, Order: map[string][]string{}}
	for _, a := range o.Admitted {
		var execs []string
		for n, k := range a.Admission.Executors {
			execs = append(execs, fmt.Sprintf("%s×%d", n, k))
		}
		sort.Strings(execs)
		s.Admitted = append(s.Admitted, fmt.Sprintf("%s: %s [%s]", a.Key.Name, a.Admission.Driver, strings.Join(execs, " ")))
	}
	for _, p := range o.Preempted {
		s.Preempted = append(s.Preempted, fmt.Sprintf("%s by %s: %s", p.Key.Name, p.By.Name, p.Reason))
	}
	for k, r := range o.Waiting {
		s.Waiting[k.Name] = r.Message
	}
	for k, r := range o.Rejected {
		s.Rejected[k.Name] = r
	}
	for q, keys := range o.Order {
		for _, k := range keys {
			s.Order[q] = append(s.Order[q], k.Name)
		}
	}
	for k, nodes := range o.Ungated {
		if s.Ungated == nil {
			s.Ungated = map[string][]string{}
		}
		s.Ungated[k.Name] = nodes
	}
	return s
}

type scenario struct {
	name      string
	nodes     []*gt.NodeWrapper
	queues    []*gt.QueueWrapper // default: one queue "default" without quota
	workloads []*gt.WorkloadWrapper
	opts      core.Options
	want      summary
}

func (sc scenario) snapshot() core.Snapshot {
	snap := core.Snapshot{Queues: map[string]*core.Queue{}}
	for _, n := range sc.nodes {
		snap.Nodes = append(snap.Nodes, n.Obj())
	}
	queues := sc.queues
	if queues == nil {
		queues = []*gt.QueueWrapper{gt.MakeQueue("default")}
	}
	for _, q := range queues {
		obj := q.Obj()
		snap.Queues[obj.Name] = obj
	}
	for _, w := range sc.workloads {
		snap.Workloads = append(snap.Workloads, w.Obj())
	}
	return snap
}

func run(t *testing.T, scenarios []scenario) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			got := summarize(core.Schedule(sc.snapshot(), sc.opts))
			if diff := cmp.Diff(sc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReasonKinds: every reason to wait gets its kind where it is made, which says what it
// means without its numbers: behind others in a queue (whatever follows the semicolon, even a
// "no node fits" of its own), over quota in the queue it names (an ancestor's, not the
// workload's own), no node fits; a reason without numbers is its own kind.
func TestReasonKinds(t *testing.T) {
	type got struct {
		Message string
		Kind    core.ReasonKind
	}
	org := []*gt.QueueWrapper{gt.MakeQueue("org").Quota("cpu", "4"), gt.MakeQueue("team").Parent("org"),
		gt.MakeQueue("orphan").Parent("gone"), gt.MakeQueue("default")}
	tests := []struct {
		name      string
		nodes     []*gt.NodeWrapper
		workloads []*gt.WorkloadWrapper
		opts      core.Options
		key       string
		want      got
	}{{
		name:  "over quota in an ancestor: its queue, not the workload's",
		nodes: []*gt.NodeWrapper{gt.MakeNode("n1")},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("running").Queue("team").Executors(1, "1", "1Gi").Admitted("n1", map[string]int32{"n1": 1}),
			gt.MakeWorkload("big").Queue("team").Executors(2, "1", "1Gi")},
		key: "big",
		want: got{"over quota in queue org: needs 3 cpu, 2 cpu free (quota 4 cpu, 2 cpu in use)",
			core.ReasonKind{Is: core.KindOverQuota, Queue: "org"}},
	}, {
		name:      "no node fits the driver",
		nodes:     []*gt.NodeWrapper{gt.MakeNode("n1").Used("15", "1Gi")},
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("a").Driver("2", "1Gi")},
		key:       "a",
		want:      got{"no node fits: driver needs 2 cpu, 1Gi; no node has it free", core.ReasonKind{Is: core.KindNoNodeFits}},
	}, {
		name:      "no node fits the executors",
		nodes:     []*gt.NodeWrapper{gt.MakeNode("n1").Used("12", "1Gi")},
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("a").Executors(4, "1", "1Gi")},
		key:       "a",
		want: got{"no node fits: 4 executors need 1 cpu, 1Gi each; room for 3 of 4 next to the driver",
			core.ReasonKind{Is: core.KindNoNodeFits}},
	}, {
		name:  "behind the head in strict order",
		nodes: []*gt.NodeWrapper{gt.MakeNode("n1").Used("12", "1Gi")},
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("head").Executors(4, "1", "1Gi"),
			gt.MakeWorkload("next").Created(time.Second)},
		key:  "next",
		want: got{"behind 1 application in queue default; needs 1 cpu, 1Gi", core.ReasonKind{Is: core.KindBehind, Queue: "default"}},
	}, {
		name:  "behind the head with backfill, whose own reason names no node",
		nodes: []*gt.NodeWrapper{gt.MakeNode("n1").Used("12", "1Gi")},
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("head").Executors(4, "1", "1Gi"),
			gt.MakeWorkload("next").Driver("8", "1Gi").Created(time.Second)},
		opts: core.Options{Backfill: true},
		key:  "next",
		want: got{"behind 1 application in queue default; cannot go first: no schedulable node matches the driver's node selector, affinity and tolerations on nodes the head cannot use; needs 8 cpu, 1Gi",
			core.ReasonKind{Is: core.KindBehind, Queue: "default"}},
	}, {
		name:      "no node matches: no numbers, its own kind",
		nodes:     []*gt.NodeWrapper{gt.MakeNode("n1")},
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("a").NodeSelector("disk", "ssd")},
		key:       "a",
		want: got{"no schedulable node matches the driver's node selector, affinity and tolerations",
			core.ReasonKind{Is: "no schedulable node matches the driver's node selector, affinity and tolerations"}},
	}, {
		name:      "a queue that does not exist",
		nodes:     []*gt.NodeWrapper{gt.MakeNode("n1")},
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("a").Queue("nowhere")},
		key:       "a",
		want:      got{"queue nowhere does not exist", core.ReasonKind{Is: "queue nowhere does not exist"}},
	}, {
		name:      "a broken queue",
		nodes:     []*gt.NodeWrapper{gt.MakeNode("n1")},
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("a").Queue("orphan")},
		key:       "a",
		want:      got{"queue orphan's parent gone does not exist", core.ReasonKind{Is: "queue orphan's parent gone does not exist"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := scenario{nodes: tt.nodes, queues: org, workloads: tt.workloads}
			out := core.Schedule(sc.snapshot(), tt.opts)
			var reason got
			for k, r := range out.Waiting {
				if k.Name == tt.key {
					reason = got{r.Message, r.Kind}
				}
			}
			if diff := cmp.Diff(tt.want, reason); diff != "" {
				t.Errorf("reason of %s (-want +got):\n%s", tt.key, diff)
			}
		})
	}
}

func TestPlacement(t *testing.T) {
	run(t, []scenario{{
		name: "driver and executors go best-fit: tightest node first",
		nodes: []*gt.NodeWrapper{
			gt.MakeNode("big").Capacity("16", "64Gi"),
			gt.MakeNode("small").Capacity("8", "32Gi"),
		},
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("a").Driver("1", "4Gi").Executors(9, "1", "4Gi")},
		want:      summary{Admitted: []string{"a: small [big×2 small×7]"}},
	}, {
		name: "taints: only tolerating workloads use a NoSchedule or NoExecute node; PreferNoSchedule does not keep anyone off",
		nodes: []*gt.NodeWrapper{
			gt.MakeNode("gpu").Taint("dedicated", "gpu", corev1.TaintEffectNoSchedule),
			gt.MakeNode("evict").Taint("dedicated", "batch", corev1.TaintEffectNoExecute),
			gt.MakeNode("soft").Capacity("4", "16Gi").Taint("busy", "yes", corev1.TaintEffectPreferNoSchedule),
		},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("plain").Executors(2, "1", "1Gi"),
			gt.MakeWorkload("tolerant").Toleration("dedicated", "gpu").Executors(4, "1", "1Gi").Created(time.Second),
			gt.MakeWorkload("needs-room").Executors(1, "3", "1Gi").Created(2 * time.Second),
		},
		want: summary{
			// soft has 1 cpu left after plain: the tightest fit for tolerant's driver, which
			// leaves none for needs-room's.
			Admitted: []string{"plain: soft [soft×2]", "tolerant: soft [gpu×4]"},
			Waiting:  map[string]string{"needs-room": "no node fits: driver needs 1 cpu, 1Gi; no node has it free"},
			Order:    map[string][]string{"default": {"needs-room"}},
		},
	}, {
		name: "node selector and required node affinity",
		nodes: []*gt.NodeWrapper{
			gt.MakeNode("a1").Label("zone", "a"),
			gt.MakeNode("b1").Label("zone", "b").Label("disk", "ssd"),
			gt.MakeNode("c1").Label("zone", "c").Label("disk", "ssd"),
		},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("selector").NodeSelector("disk", "ssd").NodeSelector("zone", "c").Executors(2, "1", "1Gi"),
			gt.MakeWorkload("affinity").RequireNodeLabelIn("zone", "b").Executors(2, "1", "1Gi").Created(time.Second),
			gt.MakeWorkload("nowhere").RequireNodeLabelIn("zone", "z").Queue("other"),
		},
		queues: []*gt.QueueWrapper{gt.MakeQueue("default"), gt.MakeQueue("other")},
		want: summary{
			Admitted: []string{"selector: c1 [c1×2]", "affinity: b1 [b1×2]"},
			Waiting:  map[string]string{"nowhere": "no schedulable node matches the driver's node selector, affinity and tolerations"},
			Order:    map[string][]string{"other": {"nowhere"}},
		},
	}, {
		name: "cordoned nodes take nothing new, and a gang that fits only there waits",
		nodes: []*gt.NodeWrapper{
			gt.MakeNode("cordoned").Unschedulable(),
			gt.MakeNode("open").Capacity("4", "16Gi"),
		},
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("a").Executors(2, "1", "1Gi"), gt.MakeWorkload("b").Queue("big").Driver("8", "1Gi")},
		queues:    []*gt.QueueWrapper{gt.MakeQueue("default"), gt.MakeQueue("big")},
		want: summary{
			Admitted: []string{"a: open [open×2]"},
			Waiting:  map[string]string{"b": "no node fits: driver needs 8 cpu, 1Gi; no node has it free"},
			Order:    map[string][]string{"big": {"b"}},
		},
	}, {
		name: "fragmentation: enough cpu in total, no single node fits the driver",
		nodes: []*gt.NodeWrapper{
			gt.MakeNode("n1").Used("13", "8Gi"), gt.MakeNode("n2").Used("13", "8Gi"),
			gt.MakeNode("n3").Used("13", "8Gi"), gt.MakeNode("n4").Used("13", "8Gi"),
		},
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("a").Driver("4", "1408Mi")},
		want: summary{
			Waiting: map[string]string{"a": "no node fits: driver needs 4 cpu, 1408Mi; no node has it free"},
			Order:   map[string][]string{"default": {"a"}},
		},
	}, {
		name: "the whole gang or nothing: executors that do not all fit hold the driver back",
		nodes: []*gt.NodeWrapper{
			gt.MakeNode("n1").Capacity("8", "16Gi").Used("6", "1Gi"), gt.MakeNode("n2").Capacity("8", "16Gi").Used("6", "1Gi"),
		},
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("a").Executors(4, "2", "1Gi")},
		want: summary{
			Waiting: map[string]string{"a": "no node fits: 4 executors need 2 cpu, 1Gi each; room for 1 of 4 next to the driver"},
			Order:   map[string][]string{"default": {"a"}},
		},
	}, {
		name: "the driver moves to another node when its best fit leaves no room for the executors",
		nodes: []*gt.NodeWrapper{
			gt.MakeNode("n1").Used("12", "1Gi"), gt.MakeNode("n2").Capacity("5", "16Gi"),
		},
		// Best fit puts the 1-cpu driver on n1 (3 cpu left there, 5 on n2): room for one 4-cpu
		// executor only. With the driver on n2, both executors fit (one per node).
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("a").Driver("1", "1Gi").Executors(2, "4", "1Gi")},
		want:      summary{Admitted: []string{"a: n2 [n1×1 n2×1]"}},
	}, {
		name: "extended resources: GPU executors only where GPUs are free",
		nodes: []*gt.NodeWrapper{
			gt.MakeNode("cpu1"),
			gt.MakeNode("gpu1").Resource(gpu, "4").UsedResource(gpu, "2"),
			gt.MakeNode("gpu2").Resource(gpu, "4"),
		},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("a").Executors(5, "1", "1Gi").ExecutorResource(gpu, "1"),
			gt.MakeWorkload("b").Executors(2, "1", "1Gi").ExecutorResource(gpu, "1").Created(time.Second),
		},
		want: summary{
			Admitted: []string{"a: cpu1 [gpu1×2 gpu2×3]"},
			Waiting:  map[string]string{"b": "no node fits: 2 executors need 1 cpu, 1Gi, 1 nvidia.com/gpu each; room for 1 of 2 next to the driver"},
			Order:    map[string][]string{"default": {"b"}},
		},
	}, {
		name: "every pod counts against the node's pod capacity",
		nodes: []*gt.NodeWrapper{
			gt.MakeNode("few-pods").Capacity("4", "16Gi").Resource(corev1.ResourcePods, "2"),
			gt.MakeNode("roomy"),
		},
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("a").Driver("100m", "100Mi").Executors(3, "100m", "100Mi")},
		want:      summary{Admitted: []string{"a: few-pods [few-pods×1 roomy×2]"}},
	}})
}

func TestRejection(t *testing.T) {
	run(t, []scenario{{
		name:  "members bigger than any node they may use, or a gang bigger than the empty cluster, are rejected and do not block the queue",
		nodes: []*gt.NodeWrapper{gt.MakeNode("n1").Used("15", "1Gi"), gt.MakeNode("n2").Resource(gpu, "1")},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("huge-driver").Driver("1", "100Gi"),
			gt.MakeWorkload("huge-executor").Executors(1, "32", "1Gi"),
			gt.MakeWorkload("too-many").Executors(40, "1", "1Gi"),
			gt.MakeWorkload("too-many-gpus").Executors(2, "1", "1Gi").ExecutorResource(gpu, "1"),
			gt.MakeWorkload("bad-affinity").RequireNode(corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpGt, Values: []string{"x"}}),
			gt.MakeWorkload("fits").Executors(2, "1", "1Gi").Created(time.Hour),
		},
		want: summary{
			Admitted: []string{"fits: n1 [n2×2]"}, // n1's last free cpu is the tightest fit for the driver
			Rejected: map[string]string{
				"huge-driver":   "the driver needs 1 cpu, 100Gi: more than any matching node's allocatable",
				"huge-executor": "each executor needs 32 cpu, 1Gi: more than any matching node's allocatable",
				"too-many":      "the gang (driver 1 cpu, 1Gi, 40 executors of 1 cpu, 1Gi) does not fit on the whole cluster even when empty: room for 31 executors",
				"too-many-gpus": "the gang (driver 1 cpu, 1Gi, 2 executors of 1 cpu, 1Gi, 1 nvidia.com/gpu) does not fit on the whole cluster even when empty: room for 1 executor",
				"bad-affinity":  `the driver's required node affinity is invalid: nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer`,
			},
		},
	}, {
		// A cycle judges each gang shape once (requests, counts and placement rules): gangs
		// that differ in their rules alone must still get verdicts of their own.
		name: "gangs of the same size are judged apart by their placement rules",
		nodes: []*gt.NodeWrapper{
			gt.MakeNode("big"),
			gt.MakeNode("small").Capacity("4", "16Gi").Label("zone", "small"),
			gt.MakeNode("dedicated").Label("pool", "spark").Taint("dedicated", "spark", corev1.TaintEffectNoSchedule),
		},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("small-zone").Driver("1", "1Gi").Executors(6, "2", "1Gi").NodeSelector("zone", "small"),
			gt.MakeWorkload("small-zone-fewer").Driver("1", "1Gi").Executors(1, "2", "1Gi").NodeSelector("zone", "small").Created(time.Second / 2),
			gt.MakeWorkload("anywhere").Driver("1", "1Gi").Executors(6, "2", "1Gi").Created(time.Second),
			gt.MakeWorkload("pool-untolerated").Driver("1", "1Gi").Executors(6, "2", "1Gi").NodeSelector("pool", "spark").Created(2 * time.Second),
			gt.MakeWorkload("pool-tolerated").Driver("1", "1Gi").Executors(6, "2", "1Gi").NodeSelector("pool", "spark").Toleration("dedicated", "spark").Created(3 * time.Second),
			gt.MakeWorkload("small-zone-again").Driver("1", "1Gi").Executors(6, "2", "1Gi").NodeSelector("zone", "small").Created(4 * time.Second),
			gt.MakeWorkload("bad-affinity").Driver("1", "1Gi").Executors(6, "2", "1Gi").
				RequireNode(corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpGt, Values: []string{"x"}}).Created(6 * time.Second),
		},
		want: summary{
			Admitted: []string{"small-zone-fewer: small [small×1]", "anywhere: small [big×6]", "pool-tolerated: dedicated [dedicated×6]"},
			Waiting:  map[string]string{"pool-untolerated": "no schedulable node matches the driver's node selector, affinity and tolerations"},
			Order:    map[string][]string{"default": {"pool-untolerated"}},
			Rejected: map[string]string{
				"small-zone":       "the gang (driver 1 cpu, 1Gi, 6 executors of 2 cpu, 1Gi) does not fit on the whole cluster even when empty: room for 1 executor",
				"small-zone-again": "the gang (driver 1 cpu, 1Gi, 6 executors of 2 cpu, 1Gi) does not fit on the whole cluster even when empty: room for 1 executor",
				"bad-affinity":     `the driver's required node affinity is invalid: nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer`,
			},
		},
	}, {
		name:      "no nodes known: nothing is rejected for size",
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("a").Driver("100", "1Ti")},
		want: summary{
			Waiting: map[string]string{"a": "no schedulable node matches the driver's node selector, affinity and tolerations"},
			Order:   map[string][]string{"default": {"a"}},
		},
	}})
}

func TestQuota(t *testing.T) {
	org := func() []*gt.QueueWrapper {
		return []*gt.QueueWrapper{
			gt.MakeQueue("org").Quota("cpu", "10"),
			gt.MakeQueue("a").Parent("org").Quota("cpu", "4"),
			gt.MakeQueue("b").Parent("org").Quota("cpu", "6"),
		}
	}
	nodes := []*gt.NodeWrapper{gt.MakeNode("n1"), gt.MakeNode("n2")}
	run(t, []scenario{{
		name:   "a queue admits the whole gang only within its quota",
		nodes:  nodes,
		queues: []*gt.QueueWrapper{gt.MakeQueue("q").Quota("cpu", "8").Quota("memory", "100Gi")},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("running").Queue("q").Driver("1", "1Gi").Executors(2, "2", "1Gi").Admitted("n1", map[string]int32{"n1": 2}),
			gt.MakeWorkload("next").Queue("q").Executors(2, "2", "1Gi"),
		},
		want: summary{
			Waiting: map[string]string{"next": "over quota in queue q: needs 5 cpu, 3 cpu free (quota 8 cpu, 5 cpu in use)"},
			Order:   map[string][]string{"q": {"next"}},
		},
	}, {
		name:   "resources a queue does not list are not limited by it",
		nodes:  nodes,
		queues: []*gt.QueueWrapper{gt.MakeQueue("q").Quota("memory", "4Gi")},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("cpu-heavy").Queue("q").Driver("1", "1Gi").Executors(3, "8", "1Gi"),
		},
		want: summary{Admitted: []string{"cpu-heavy: n1 [n1×1 n2×2]"}},
	}, {
		name:   "a child borrows its parent's unused quota; the parent caps the siblings together",
		nodes:  nodes,
		queues: org(),
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("b-running").Queue("b").Driver("1", "1Gi").Executors(1, "2", "1Gi").Admitted("n1", map[string]int32{"n1": 1}),
			gt.MakeWorkload("a-borrows").Queue("a").Driver("1", "1Gi").Executors(3, "2", "1Gi"),
			gt.MakeWorkload("a-more").Queue("a").Driver("1", "1Gi").Created(time.Second),
		},
		want: summary{
			Admitted: []string{"a-borrows: n1 [n1×3]"},
			Waiting:  map[string]string{"a-more": "over quota in queue org: needs 1 cpu, 0 cpu free (quota 10 cpu, 10 cpu in use)"},
			Order:    map[string][]string{"a": {"a-more"}},
		},
	}, {
		name:  "a borrowing limit caps what a child takes beyond its quota; no borrowing keeps it within",
		nodes: nodes,
		queues: []*gt.QueueWrapper{
			gt.MakeQueue("org").Quota("cpu", "20"),
			gt.MakeQueue("a").Parent("org").Quota("cpu", "4").BorrowingLimit("cpu", "2"),
			gt.MakeQueue("strict").Parent("org").Quota("cpu", "4").NoBorrowing(),
		},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("a-6").Queue("a").Driver("2", "1Gi").Executors(2, "2", "1Gi"),
			gt.MakeWorkload("a-7").Queue("a").Driver("1", "1Gi").Executors(3, "2", "1Gi"),
			gt.MakeWorkload("strict-4").Queue("strict").Driver("2", "1Gi").Executors(1, "2", "1Gi"),
			gt.MakeWorkload("strict-5").Queue("strict").Driver("1", "1Gi").Executors(2, "2", "1Gi"),
		},
		want: summary{
			Admitted: []string{"a-6: n1 [n1×2]", "strict-4: n1 [n1×1]"},
			Rejected: map[string]string{
				"a-7":      "needs 7 cpu, more than queue a ever allows (quota 4 cpu plus 2 cpu borrowed)",
				"strict-5": "needs 5 cpu, more than queue strict ever allows (quota 4 cpu)",
			},
		},
	}, {
		name:   "a child never exceeds its parent: a gang bigger than an ancestor's quota is rejected",
		nodes:  nodes,
		queues: org(),
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("too-big").Queue("b").Driver("1", "1Gi").Executors(5, "2", "1Gi"),
			gt.MakeWorkload("fits").Queue("b").Driver("1", "1Gi").Created(time.Second),
		},
		want: summary{
			Admitted: []string{"fits: n1 []"},
			Rejected: map[string]string{"too-big": "needs 11 cpu, more than queue org ever allows (quota 10 cpu)"},
		},
	}, {
		name:  "a missing queue, a missing parent and a cycle of parents hold their workloads with the reason",
		nodes: nodes,
		queues: []*gt.QueueWrapper{
			gt.MakeQueue("orphan").Parent("gone"),
			gt.MakeQueue("x").Parent("y"), gt.MakeQueue("y").Parent("x"),
		},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("w1").Queue("nope"),
			gt.MakeWorkload("w2").Queue("orphan"),
			gt.MakeWorkload("w3").Queue("x"),
		},
		want: summary{
			Waiting: map[string]string{
				"w1": "queue nope does not exist",
				"w2": "queue orphan's parent gone does not exist",
				"w3": "queue x's parents form a cycle",
			},
			Order: map[string][]string{"nope": {"w1"}, "orphan": {"w2"}, "x": {"w3"}},
		},
	}})
}

func TestInactiveQueues(t *testing.T) {
	sc := scenario{queues: []*gt.QueueWrapper{
		gt.MakeQueue("ok"), gt.MakeQueue("orphan").Parent("gone"), gt.MakeQueue("child").Parent("orphan"),
	}}
	want := map[string]string{
		"orphan": "queue orphan's parent gone does not exist",
		"child":  "queue child's ancestor: queue orphan's parent gone does not exist",
	}
	if diff := cmp.Diff(want, core.Schedule(sc.snapshot(), core.Options{}).Inactive); diff != "" {
		t.Errorf("inactive queues (-want +got):\n%s", diff)
	}
}

func TestQueueUsage(t *testing.T) {
	sc := scenario{
		nodes:  []*gt.NodeWrapper{gt.MakeNode("n1")},
		queues: []*gt.QueueWrapper{gt.MakeQueue("org"), gt.MakeQueue("a").Parent("org")},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("old").Queue("a").Driver("1", "1Gi").Executors(1, "2", "2Gi").Admitted("n1", map[string]int32{"n1": 1}),
			gt.MakeWorkload("new").Queue("a").Driver("500m", "1Gi"),
		},
	}
	got := core.Schedule(sc.snapshot(), core.Options{}).Usage
	want := map[string]corev1.ResourceList{
		"org": {},
		"a":   {"cpu": apiresource.MustParse("3500m"), "memory": apiresource.MustParse("4Gi"), "pods": apiresource.MustParse("3")},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmp.Comparer(func(a, b apiresource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("queue usage (-want +got):\n%s", diff)
	}
}
