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
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"

	"github.com/sparkop/spark-operator/scheduler/gang/core"
	gt "github.com/sparkop/spark-operator/scheduler/gang/gangtest"
)

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
