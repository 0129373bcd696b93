/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package core

import (
	"fmt"
	"sort"
)

// preempt tries to make room for w, the head of its queue, by evicting whole admitted
// workloads. A candidate is either
//   - in w's queue with a lower priority than w's, or
//   - in another queue of the same hierarchy that borrows (uses more than its own quota of
//     some resource), while w's queue, with w admitted, stays within its own quota: a queue
//     takes back its own quota, never borrows by evicting.
//
// Candidates are taken lowest priority first (then newest first, the reverse of the admission
// order) until w's whole gang fits its
// quotas and the nodes; then each victim, highest priority first, is spared if w still fits
// without evicting it. So the victims are few and of the lowest priority. On success it
// returns w's placement (capacity taken) and records the victims in the outcome; otherwise it
// changes nothing.
func (c *cycle) preempt(w *workload) (placement, bool) {
	var candidates []*workload
	reclaim := w.queue.within(w.need)
	for _, v := range c.admitted {
		if v.victim || v.fresh || v.queue == nil || v.placed == nil {
			continue
		}
		same := v.queue == w.queue && v.w.Priority < w.w.Priority
		borrowed := v.queue != w.queue && reclaim && v.queue.borrowing() && root(v.queue) == root(w.queue)
		if same || borrowed {
			candidates = append(candidates, v)
		}
	}
	if len(candidates) == 0 {
		return placement{}, false
	}
	sort.SliceStable(candidates, func(i, j int) bool {
		a, b := candidates[i].w, candidates[j].w
		if a.Priority != b.Priority {
			return a.Priority < b.Priority
		}
		if !a.Created.Equal(b.Created) {
			return a.Created.After(b.Created)
		}
		return LessKey(b.Key, a.Key) // the reverse of the admission order's tie-break
	})

	var victims []*workload
	fits := false
	for _, v := range candidates {
		c.evict(v, true)
		victims = append(victims, v)
		if fits = c.fitsNow(w); fits {
			break
		}
	}
	if !fits {
		for _, v := range victims {
			c.evict(v, false)
		}
		return placement{}, false
	}
	kept := make([]*workload, 0, len(victims))
	for i := len(victims) - 1; i >= 0; i-- {
		v := victims[i]
		c.evict(v, false)
		if c.fitsNow(w) {
			continue // spared
		}
		c.evict(v, true)
		kept = append(kept, v)
	}
	p, reason := c.try(w, nil)
	if !reason.none() { // fitsNow said it fits: cannot happen, but never evict for nothing
		for _, v := range kept {
			c.evict(v, false)
		}
		return placement{}, false
	}
	sort.SliceStable(kept, func(i, j int) bool { return LessKey(kept[i].key(), kept[j].key()) })
	for _, v := range kept {
		c.out.Preempted = append(c.out.Preempted, Preemption{Key: v.key(), By: w.key(), Reason: c.preemptReason(v, w)})
	}
	return p, true
}

// evict takes v's usage off its queues and its pods off its nodes (or, with out false, puts
// them back).
func (c *cycle) evict(v *workload, out bool) {
	times := int64(1)
	if !out {
		times = -1
	}
	v.victim = out
	v.queue.charge(v.use, -times)
	if v.placed.driver >= 0 {
		c.live.free[v.placed.driver].add(v.driver.req, times)
	}
	for i, k := range v.placed.executors {
		c.live.free[i].add(v.executor.req, k*times)
	}
	for i, k := range v.extra {
		c.live.free[i].add(v.executor.req, k*times)
	}
}

// fitsNow reports whether w would be admitted now, without taking anything.
func (c *cycle) fitsNow(w *workload) bool {
	p, reason := c.try(w, nil)
	if !reason.none() {
		return false
	}
	p.giveBack(w, c.live.free)
	return true
}

func (c *cycle) preemptReason(v, w *workload) string {
	if v.queue == w.queue {
		return fmt.Sprintf("preempted by %s (priority %d) in queue %s: its priority %d is lower",
			w.key(), w.w.Priority, w.queue.name, v.w.Priority)
	}
	return fmt.Sprintf("preempted by %s: queue %s takes back its own quota that queue %s borrowed",
		w.key(), w.queue.name, v.queue.name)
}

func root(q *queue) *queue {
	for q.parent != nil {
		q = q.parent
	}
	return q
}
