/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package core_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
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

// TestDeterministic shuffles a random snapshot's slices: the outcome stays the same.
func TestDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	snap := randomSnapshot(rng, 20, 200)
	for _, opts := range []core.Options{{}, {Backfill: true}, {Preemption: true, Backfill: true}} {
		want := core.Schedule(snap, opts)
		if len(want.Admitted) == 0 || len(want.Waiting) == 0 {
			for k, r := range want.Waiting {
				t.Log(k, r)
			}
			t.Fatalf("the random snapshot admits %d and holds %d: make it busier", len(want.Admitted), len(want.Waiting))
		}
		for range 5 {
			shuffled := snap
			shuffled.Nodes = slices.Clone(snap.Nodes)
			shuffled.Workloads = slices.Clone(snap.Workloads)
			rng.Shuffle(len(shuffled.Nodes), func(i, j int) { shuffled.Nodes[i], shuffled.Nodes[j] = shuffled.Nodes[j], shuffled.Nodes[i] })
			rng.Shuffle(len(shuffled.Workloads), func(i, j int) {
				shuffled.Workloads[i], shuffled.Workloads[j] = shuffled.Workloads[j], shuffled.Workloads[i]
			})
			if diff := cmp.Diff(want, core.Schedule(shuffled, opts), quantityEqual); diff != "" {
				t.Fatalf("options %+v: the outcome changed with the order of the snapshot (-first +shuffled):\n%s", opts, diff)
			}
		}
	}
}

var quantityEqual = cmp.Comparer(func(a, b apiresource.Quantity) bool { return a.Cmp(b) == 0 })

// randomSnapshot: nodes of 16 cpu and 64Gi, a tenth of them GPU nodes (tainted), half of
// them partly used; 4 queues under a parent; workloads of mixed sizes, one in 20 admitted.
func randomSnapshot(rng *rand.Rand, nodes, workloads int) core.Snapshot {
	snap := core.Snapshot{Queues: gt.Queues(
		gt.MakeQueue("org").Quota("cpu", strconv.Itoa(nodes*16)).Obj(),
		gt.MakeQueue("default").Parent("org").Obj(),
		gt.MakeQueue("etl").Parent("org").Priority(5).Quota("cpu", strconv.Itoa(nodes*4)).Obj(),
		gt.MakeQueue("ml").Parent("org").Quota("cpu", strconv.Itoa(nodes*4)).Quota(gpu, "8").BorrowingLimit("cpu", "16").Obj(),
		gt.MakeQueue("adhoc").Parent("org").Priority(-1).Quota("cpu", "32").NoBorrowing().Obj(),
	)}
	for i := range nodes {
		n := gt.MakeNode(fmt.Sprintf("node-%03d", i)).Label("zone", []string{"a", "b", "c"}[i%3])
		if i%10 == 0 {
			n.Resource(gpu, "4").Taint("nvidia.com/gpu", "present", corev1.TaintEffectNoSchedule)
		}
		if i%2 == 0 {
			n.Used(strconv.Itoa(rng.IntN(12)), fmt.Sprintf("%dGi", rng.IntN(40)))
		}
		snap.Nodes = append(snap.Nodes, n.Obj())
	}
	queues := []string{"default", "etl", "ml", "adhoc"}
	for i := range workloads {
		q := queues[rng.IntN(len(queues))]
		w := gt.MakeWorkload(fmt.Sprintf("app-%04d", i)).Queue(q).Priority(int32(rng.IntN(3))).
			Created(time.Duration(rng.IntN(1000))*time.Second).
			Driver("1", "1408Mi").Executors(int32(1+rng.IntN(8)), strconv.Itoa(1+rng.IntN(4)), fmt.Sprintf("%dMi", 1024+rng.IntN(8)*512))
		if q == "ml" && rng.IntN(2) == 0 {
			w.ExecutorResource(gpu, "1").Toleration("nvidia.com/gpu", "present")
		}
		if rng.IntN(5) == 0 {
			w.NodeSelector("zone", []string{"a", "b", "c"}[rng.IntN(3)])
		}
		if i%20 == 0 {
			w.Admitted(fmt.Sprintf("node-%03d", rng.IntN(nodes)), map[string]int32{fmt.Sprintf("node-%03d", rng.IntN(nodes)): 1})
			w.Asking(int32(rng.IntN(6)), int32(rng.IntN(2)))
		}
		snap.Workloads = append(snap.Workloads, w.Obj())
	}
	return snap
}

// BenchmarkSchedule: one cycle over 1,000 queued applications of mixed sizes on 100 nodes.
// decisions/s counts every waiting application decided (admitted, held or rejected).
func BenchmarkSchedule(b *testing.B) {
	for _, opts := range []core.Options{{}, {Backfill: true}, {Backfill: true, Preemption: true}} {
		b.Run(fmt.Sprintf("backfill=%t,preemption=%t", opts.Backfill, opts.Preemption), func(b *testing.B) {
			snap := randomSnapshot(rand.New(rand.NewPCG(3, 4)), 100, 1000)
			waiting := 0
			for _, w := range snap.Workloads {
				if w.Admission == nil {
					waiting++
				}
			}
			b.ResetTimer()
			for b.Loop() {
				core.Schedule(snap, opts)
			}
			b.ReportMetric(float64(waiting)*float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
		})
	}
}

// BenchmarkScheduleScale: one cycle at the sizes of the scale scenario (docs/benchmarks.md, #25
// §5), ten queued applications per node, up to 1,000 nodes and 10,000 applications: how the
// decision core's rate grows with the cluster, apart from any API server.
func BenchmarkScheduleScale(b *testing.B) {
	for _, nodes := range []int{100, 300, 1000} {
		b.Run(fmt.Sprintf("nodes=%d,apps=%d", nodes, 10*nodes), func(b *testing.B) {
			snap := randomSnapshot(rand.New(rand.NewPCG(3, 4)), nodes, 10*nodes)
			waiting := 0
			for _, w := range snap.Workloads {
				if w.Admission == nil {
					waiting++
				}
			}
			b.ResetTimer()
			for b.Loop() {
				core.Schedule(snap, core.Options{})
			}
			b.ReportMetric(float64(waiting)*float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
		})
	}
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

// TestInvariants checks, over random snapshots, what every outcome must satisfy: each waiting
// workload is decided once; admitted gangs are whole, on nodes their selectors allow, and
// never overcommit a node; queues end within their limits; victims are whole admitted
// workloads the rules allow to evict.
func TestInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	released := 0
	for round := range 30 {
		snap := randomSnapshot(rng, 10+rng.IntN(30), 50+rng.IntN(300))
		for _, opts := range []core.Options{{}, {Backfill: true}, {Preemption: true}, {Backfill: true, Preemption: true}} {
			out := core.Schedule(snap, opts)
			checkInvariants(t, fmt.Sprintf("round %d, options %+v", round, opts), snap, out)
			for _, nodes := range out.Ungated {
				released += len(nodes)
			}
		}
	}
	if released == 0 {
		t.Error("no executor released beyond a plan: the invariants of dynamic allocation went unchecked")
	}
}

func checkInvariants(t *testing.T, name string, snap core.Snapshot, out core.Outcome) {
	t.Helper()
	byKey := map[string]core.Workload{}
	for _, w := range snap.Workloads {
		byKey[w.Key.String()] = w
	}
	decided := map[string]int{}
	for _, a := range out.Admitted {
		decided[a.Key.String()]++
	}
	for k := range out.Waiting {
		decided[k.String()]++
	}
	for k := range out.Rejected {
		decided[k.String()]++
	}
	for k, w := range byKey {
		want := 1
		if w.Admission != nil {
			want = 0
		}
		if decided[k] != want {
			t.Fatalf("%s: %s decided %d times, want %d", name, k, decided[k], want)
		}
	}

	// Node capacity: used + admitted − evicted within allocatable, for cpu, memory and GPUs.
	used := map[string]map[corev1.ResourceName]int64{}
	alloc := map[string]corev1.ResourceList{}
	for _, n := range snap.Nodes {
		alloc[n.Name] = n.Allocatable
		used[n.Name] = map[corev1.ResourceName]int64{}
		for r, q := range n.Used {
			used[n.Name][r] = q.MilliValue()
		}
	}
	apply := func(w core.Workload, a core.Admission, sign int64) {
		for r, q := range w.Demand.Driver.Requests {
			used[a.Driver][r] += sign * q.MilliValue()
		}
		var execs int32
		for n, k := range a.Executors {
			execs += k
			for r, q := range w.Demand.Executor.Requests {
				used[n][r] += sign * int64(k) * q.MilliValue()
			}
		}
		if sign > 0 && execs != w.Demand.Executor.Count {
			t.Fatalf("%s: %s admitted with %d of %d executors", name, w.Key, execs, w.Demand.Executor.Count)
		}
	}
	for _, a := range out.Admitted {
		w := byKey[a.Key.String()]
		apply(w, a.Admission, 1)
		for _, n := range append([]string{a.Admission.Driver}, slices.Collect(maps.Keys(a.Admission.Executors))...) {
			node := nodeNamed(snap, n)
			if zone, ok := w.Demand.Driver.NodeSelector["zone"]; ok && node.Labels["zone"] != zone {
				t.Fatalf("%s: %s placed on %s in zone %s, selects zone %s", name, w.Key, n, node.Labels["zone"], zone)
			}
		}
	}
	// Executors released beyond a plan: no more than asked for, on nodes they may use.
	for k, nodes := range out.Ungated {
		w := byKey[k.String()]
		if w.Admission == nil || int32(len(nodes)) > w.Dynamic.Asking {
			t.Fatalf("%s: %s released %d executors beyond its plan, asked %d (admitted: %v)", name, k, len(nodes), w.Dynamic.Asking, w.Admission != nil)
		}
		for _, n := range nodes {
			for r, q := range w.Demand.Executor.Requests {
				used[n][r] += q.MilliValue()
			}
			if zone, ok := w.Demand.Executor.NodeSelector["zone"]; ok && nodeNamed(snap, n).Labels["zone"] != zone {
				t.Fatalf("%s: %s's executor released to %s, selects zone %s", name, k, n, zone)
			}
		}
	}
	preempted := map[string]bool{}
	for _, p := range out.Preempted {
		v, ok := byKey[p.Key.String()]
		if !ok || v.Admission == nil || preempted[p.Key.String()] {
			t.Fatalf("%s: %s preempted, but it was not admitted before the cycle or is preempted twice", name, p.Key)
		}
		preempted[p.Key.String()] = true
		by := byKey[p.By.String()]
		if v.Queue == by.Queue && v.Priority >= by.Priority {
			t.Fatalf("%s: %s (priority %d) preempted by %s (priority %d) of its queue", name, p.Key, v.Priority, p.By, by.Priority)
		}
		apply(v, *v.Admission, -1)
	}
	// Quotas: a queue that admitted into its subtree ends within its limit.
	subtree := func(q string, f func(string)) {
		for name := range snap.Queues {
			for a := name; a != ""; a = snap.Queues[a].Parent {
				if a == q {
					f(name)
					break
				}
				if snap.Queues[a] == nil {
					break
				}
			}
		}
	}
	for qname, q := range snap.Queues {
		admittedHere := false
		subtree(qname, func(d string) {
			for _, a := range out.Admitted {
				admittedHere = admittedHere || a.Admission.Queue == d
			}
			for k, nodes := range out.Ungated {
				w := byKey[k.String()]
				admittedHere = admittedHere || (w.Admission.Queue == d && int32(len(nodes)) > w.Dynamic.Spare)
			}
		})
		if !admittedHere {
			continue
		}
		for r, quota := range q.Quota {
			limit := quota.MilliValue()
			if q.Parent != "" && !q.NoBorrowing {
				b, ok := q.BorrowingLimit[r]
				if !ok {
					continue
				}
				limit += b.MilliValue()
			}
			var total int64
			subtree(qname, func(d string) { total += milli(out.Usage[d], r) })
			if total > limit {
				t.Fatalf("%s: queue %s ends over its limit: %s %dm of %dm", name, qname, r, total, limit)
			}
		}
	}

	for n, res := range used {
		for r, x := range res {
			if a, ok := alloc[n][r]; ok && x > a.MilliValue() && x > milli(nodeNamed(snap, n).Used, r) {
				t.Fatalf("%s: node %s overcommitted: %s %dm requested of %dm", name, n, r, x, a.MilliValue())
			}
		}
	}
}

func milli(l corev1.ResourceList, r corev1.ResourceName) int64 {
	q := l[r]
	return q.MilliValue()
}

func nodeNamed(snap core.Snapshot, name string) core.Node {
	for _, n := range snap.Nodes {
		if n.Name == name {
			return n
		}
	}
	return core.Node{}
}

// TestDynamicAllocation: executors beyond an admitted gang's plan are released only onto
// capacity neither used nor reserved (after the cycle's admissions), on nodes their placement
// rules allow, and only within their queue's quota (and every ancestor's, borrowing as
// admission does); once started they count against the quota, and preempting their
// application frees them too.
func TestDynamicAllocation(t *testing.T) {
	// a: driver 1 cpu on n1, 2 executors of 2 cpu on n1: 5 cpu, 3Gi (n1's Used shows them).
	running := func() *gt.WorkloadWrapper {
		return gt.MakeWorkload("a").Executors(2, "2", "1Gi").Admitted("n1", map[string]int32{"n1": 2})
	}
	usedByA := gt.MakeNode("n1").Used("5", "3Gi").UsedResource(corev1.ResourcePods, "3")
	run(t, []scenario{{
		name:      "released best-fit onto any node with free capacity, beyond the planned ones",
		nodes:     []*gt.NodeWrapper{usedByA, gt.MakeNode("n2").Used("15", "1Gi")},
		workloads: []*gt.WorkloadWrapper{running().Asking(3, 0)},
		want:      summary{Ungated: map[string][]string{"a": {"n1", "n1", "n1"}}},
	}, {
		name:      "capacity kept for a gang admitted in the same cycle is never taken",
		nodes:     []*gt.NodeWrapper{gt.MakeNode("n1").Capacity("16", "64Gi").Used("5", "3Gi")},
		workloads: []*gt.WorkloadWrapper{running().Asking(3, 0), gt.MakeWorkload("b").Executors(4, "2", "1Gi")},
		want: summary{Admitted: []string{"b: n1 [n1×4]"},
			Ungated: map[string][]string{"a": {"n1"}}},
	}, {
		name:      "an executor's placement rules hold: no release onto a node it may not use",
		nodes:     []*gt.NodeWrapper{gt.MakeNode("n1").Label("pool", "a").Used("15", "3Gi"), gt.MakeNode("n2")},
		workloads: []*gt.WorkloadWrapper{running().NodeSelector("pool", "a").Asking(1, 0)},
	}, {
		name:      "within the queue's quota only",
		nodes:     []*gt.NodeWrapper{usedByA},
		queues:    []*gt.QueueWrapper{gt.MakeQueue("default").Quota(corev1.ResourceCPU, "7")},
		workloads: []*gt.WorkloadWrapper{running().Asking(3, 0)},
		want:      summary{Ungated: map[string][]string{"a": {"n1"}}},
	}, {
		name:      "replacements within the gang's count need no more quota",
		nodes:     []*gt.NodeWrapper{usedByA},
		queues:    []*gt.QueueWrapper{gt.MakeQueue("default").Quota(corev1.ResourceCPU, "5")},
		workloads: []*gt.WorkloadWrapper{running().Asking(3, 2)},
		want:      summary{Ungated: map[string][]string{"a": {"n1", "n1"}}},
	}, {
		name:  "a child borrows its parent's unused quota within its borrowing limit",
		nodes: []*gt.NodeWrapper{usedByA},
		queues: []*gt.QueueWrapper{gt.MakeQueue("org").Quota(corev1.ResourceCPU, "20"),
			gt.MakeQueue("team").Parent("org").Quota(corev1.ResourceCPU, "5").BorrowingLimit(corev1.ResourceCPU, "2")},
		workloads: []*gt.WorkloadWrapper{running().Queue("team").Admitted("n1", map[string]int32{"n1": 2}).Asking(3, 0)},
		want:      summary{Ungated: map[string][]string{"a": {"n1"}}},
	}, {
		name:  "a child that never borrows stays within its own quota",
		nodes: []*gt.NodeWrapper{usedByA},
		queues: []*gt.QueueWrapper{gt.MakeQueue("org").Quota(corev1.ResourceCPU, "20"),
			gt.MakeQueue("team").Parent("org").Quota(corev1.ResourceCPU, "5").NoBorrowing()},
		workloads: []*gt.WorkloadWrapper{running().Queue("team").Admitted("n1", map[string]int32{"n1": 2}).Asking(3, 0)},
	}, {
		name:  "the parent's quota binds, whatever the child's",
		nodes: []*gt.NodeWrapper{gt.MakeNode("n1").Used("7", "4Gi")},
		queues: []*gt.QueueWrapper{gt.MakeQueue("org").Quota(corev1.ResourceCPU, "8"),
			gt.MakeQueue("team").Parent("org"), gt.MakeQueue("other").Parent("org")},
		workloads: []*gt.WorkloadWrapper{running().Queue("team").Admitted("n1", map[string]int32{"n1": 2}).Asking(1, 0),
			gt.MakeWorkload("b").Queue("other").Driver("2", "1Gi").Admitted("n1", nil)},
	}, {
		name:   "extra executors running count against the quota: the next gang waits",
		nodes:  []*gt.NodeWrapper{gt.MakeNode("n1").Used("9", "5Gi")},
		queues: []*gt.QueueWrapper{gt.MakeQueue("default").Quota(corev1.ResourceCPU, "10")},
		workloads: []*gt.WorkloadWrapper{running().Extra(map[string]int32{"n1": 2}),
			gt.MakeWorkload("b").Driver("2", "1Gi")},
		want: summary{Waiting: map[string]string{"b": "over quota in queue default: needs 2 cpu, 1 cpu free (quota 10 cpu, 9 cpu in use)"},
			Order: map[string][]string{"default": {"b"}}},
	}, {
		name:   "preempting an application frees its extra executors' quota and nodes too",
		nodes:  []*gt.NodeWrapper{gt.MakeNode("n1").Capacity("10", "64Gi").Used("9", "5Gi")},
		queues: []*gt.QueueWrapper{gt.MakeQueue("default").Quota(corev1.ResourceCPU, "10")},
		workloads: []*gt.WorkloadWrapper{running().Extra(map[string]int32{"n1": 2}),
			gt.MakeWorkload("b").Priority(10).Executors(3, "2", "1Gi")},
		opts: core.Options{Preemption: true},
		want: summary{Admitted: []string{"b: n1 [n1×3]"},
			Preempted: []string{"a by b: preempted by ns/b (priority 10) in queue default: its priority 0 is lower"}},
	}})
}
