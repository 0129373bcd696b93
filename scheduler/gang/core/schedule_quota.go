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

// queue is a Queue in a cycle.
//
// Quota rules: a workload needs, in every queue from its own up to the top, that the queue's
// usage (its own workloads' and all its descendants') plus the whole gang stays within the
// queue's limit, resource by resource. A top-level queue's limit is its quota. A child queue's
// limit is its quota plus what it may borrow of its parent's unused quota: nothing with
// NoBorrowing, at most BorrowingLimit where that lists the resource, else without bound of its
// own (the parent's check then caps it at the parent's unused quota). A resource a queue's
// quota does not list is not limited by that queue. So a child never exceeds its parent, and
// siblings share the parent's unused quota first come, first served, in admission order.
type queue struct {
	name     string
	parent   *queue
	priority int32
	quota    vec // unlimited where not listed
	limit    vec // quota plus what the queue may borrow
	usage    vec // the queue's own admitted workloads plus its descendants'
	own      vec // the queue's own admitted workloads
	// broken says why the queue admits nothing (a missing parent, a cycle of parents).
	broken string
	// The cycle's bookkeeping of the queue's waiting line.
	waiting int       // waiting workloads met so far in order
	head    *workload // the first workload that could not be admitted; it blocks the rest
	order   []*workload
}

func (c *cycle) buildQueues(in map[string]*Queue) {
	c.queues = make(map[string]*queue, len(in))
	names := make([]string, 0, len(in))
	for name := range in {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		q := in[name]
		if q == nil {
			continue
		}
		qs := &queue{name: name, priority: q.Priority, quota: c.res.vector(q.Quota, unlimited),
			usage: c.res.zero(), own: c.res.zero()}
		c.queues[name] = qs
		c.queueNames = append(c.queueNames, name)
	}
	for _, name := range c.queueNames {
		q, qs := in[name], c.queues[name]
		qs.limit = qs.quota.clone()
		if q.Parent == "" {
			continue
		}
		qs.parent = c.queues[q.Parent]
		if qs.parent == nil {
			qs.broken = fmt.Sprintf("queue %s's parent %s does not exist", name, q.Parent)
			continue
		}
		if q.NoBorrowing {
			continue
		}
		borrow := c.res.vector(q.BorrowingLimit, unlimited)
		for i, x := range qs.limit {
			if x != unlimited && borrow[i] != unlimited {
				qs.limit[i] = x + borrow[i]
			} else {
				qs.limit[i] = unlimited
			}
		}
	}
	// A cycle of parents breaks every queue on it, and a broken queue its descendants.
	for _, name := range c.queueNames {
		qs := c.queues[name]
		seen := map[*queue]bool{}
		for a := qs; a != nil; a = a.parent {
			if seen[a] {
				qs.broken = fmt.Sprintf("queue %s's parents form a cycle", name)
				break
			}
			seen[a] = true
			if a.broken != "" && a != qs {
				qs.broken = fmt.Sprintf("queue %s's ancestor: %s", name, a.broken)
				break
			}
		}
		if qs.broken != "" {
			qs.parent = nil // nothing walks a broken chain
		}
	}
}

// charge adds (times = 1) or removes (times = −1) need to q's usage and its ancestors'.
func (q *queue) charge(need vec, times int64) {
	q.own.add(need, times)
	for a := q; a != nil; a = a.parent {
		a.usage.add(need, times)
	}
}

// quotaFailure names the queue and resource that have no room for a gang.
type quotaFailure struct {
	queue *queue
	res   int
	need  int64
}

// overQuota returns the first queue from q upwards without room for need, or nil.
func (q *queue) overQuota(need vec) *quotaFailure {
	for a := q; a != nil; a = a.parent {
		for i, x := range need {
			if x > 0 && a.limit[i] != unlimited && a.usage[i]+x > a.limit[i] {
				return &quotaFailure{queue: a, res: i, need: x}
			}
		}
	}
	return nil
}

// neverInQuota returns the first queue from q upwards whose limit is below need even when it
// is idle, or nil.
func (q *queue) neverInQuota(need vec) *quotaFailure {
	for a := q; a != nil; a = a.parent {
		for i, x := range need {
			if x > 0 && a.limit[i] != unlimited && x > a.limit[i] {
				return &quotaFailure{queue: a, res: i, need: x}
			}
		}
	}
	return nil
}

// borrowing reports whether q uses more than its own quota of some resource.
func (q *queue) borrowing() bool {
	for i, x := range q.usage {
		if q.quota[i] != unlimited && x > q.quota[i] {
			return true
		}
	}
	return false
}

// within reports whether q, with need added, stays within its own quota (borrows nothing).
func (q *queue) within(need vec) bool {
	for i, x := range need {
		if x > 0 && q.quota[i] != unlimited && q.usage[i]+x > q.quota[i] {
			return false
		}
	}
	return true
}

func (c *cycle) limitText(q *queue, i int) string {
	if q.limit[i] == q.quota[i] {
		return "quota " + c.res.one(i, q.quota[i])
	}
	return fmt.Sprintf("quota %s plus %s borrowed", c.res.one(i, q.quota[i]), c.res.one(i, q.limit[i]-q.quota[i]))
}

func (c *cycle) quotaReason(f *quotaFailure) Reason {
	q, i := f.queue, f.res
	free := max(q.limit[i]-q.usage[i], 0)
	return Reason{Kind: ReasonKind{Is: KindOverQuota, Queue: q.name}, Message: fmt.Sprintf("over quota in queue %s: needs %s, %s free (%s, %s in use)",
		q.name, c.res.one(i, f.need), c.res.one(i, free), c.limitText(q, i), c.res.one(i, q.usage[i]))}
}

func (c *cycle) neverQuotaReason(f *quotaFailure) string {
	return fmt.Sprintf("needs %s, more than queue %s ever allows (%s)",
		c.res.one(f.res, f.need), f.queue.name, c.limitText(f.queue, f.res))
}
