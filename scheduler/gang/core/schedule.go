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

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
)

// Schedule runs one admission cycle over a snapshot. Pure and deterministic: the same
// snapshot gives the same outcome, whatever the order of its slices and maps.
//
// Waiting workloads are considered in order: queue priority (higher first), then application
// priority (higher first), then creation time (older first), then key. Each is checked, in
// this order:
//
//   - Rejected, and taken out of the order, if it can never be admitted as it is: its gang
//     needs more of a resource than its queue or an ancestor allows even when idle, or a member
//     is bigger than every node it may use, or the gang cannot be placed on the cluster even
//     when every node is empty.
//   - Left out of the outcome if it is Unrecorded (its submission not recorded yet): no verdict
//     can be acted on before that, but it blocks its queue as a head that could not be admitted
//     would (unless it could never be admitted, or may use no node), so that those behind it
//     do not go first.
//   - Behind N applications, if an earlier workload of its queue could not be admitted: the
//     head of a queue blocks those behind it (with Options.Backfill, see backfill below). A
//     workload with a member that may use none of the schedulable nodes (by its node selector,
//     affinity and tolerations) waits without blocking: nothing behind it takes what it waits
//     for.
//   - Over quota, if its queue or an ancestor has no room for the whole gang (see queue).
//   - No node fits, unless the whole gang can be placed on the nodes' free capacity now,
//     member by member, driver first (see capacity.place).
//
// Otherwise it is admitted: its usage counts against its queues and its placement against the
// nodes for the rest of the cycle. With Options.Preemption, a queue's head that does not fit
// may evict admitted workloads (see preempt).
//
// Then the executors admitted workloads ask for beyond their plan (dynamic allocation) are
// released where capacity and quota allow (see grow).
//
// Backfill: a workload behind its queue's blocked head H is admitted only if that cannot delay
// H: it is placed only on nodes no member of H could ever use (H's node selector, affinity
// and tolerations exclude them, or H's pods are bigger than their allocatable), and H's
// whole gang still fits its queues' quotas with it admitted. Only the head is protected.
func Schedule(snap Snapshot, opts Options) Outcome {
	c := newCycle(&snap)
	c.run(opts)
	return c.out
}

// cycle is one run of Schedule.
type cycle struct {
	res        *resources
	nodes      []*node
	live       capacity // the nodes' free capacity now, as the cycle changes it
	empty      capacity // the nodes' allocatable, for the can-it-ever-fit check
	queues     map[string]*queue
	queueNames []string
	admitted   []*workload // admitted before or during the cycle, preemption candidates
	waiting    []*workload
	out        Outcome

	eligibility map[string]eligibility // by member.rules
	neverFit    map[string]string      // neverFits by gang shape (see shapeKey)
}

// workload is a Workload in a cycle.
type workload struct {
	w                *Workload
	queueName        string
	queue            *queue
	driver, executor member
	need             vec           // the whole gang: Demand.Total()
	use              vec           // what it takes of its queues: the gang and its extra executors
	placed           *placement    // for admitted workloads, where their members are
	extra            map[int]int64 // admitted: executors beyond the gang per node (Dynamic.Extra)
	fresh            bool          // admitted by this cycle: never its victim
	victim           bool
}

func (w *workload) key() Key { return w.w.Key }

func newCycle(snap *Snapshot) *cycle {
	seen := map[corev1.ResourceName]bool{}
	for i := range snap.Nodes {
		collectNames(seen, snap.Nodes[i].Allocatable)
		collectNames(seen, snap.Nodes[i].Used)
	}
	for _, q := range snap.Queues {
		if q != nil {
			collectNames(seen, q.Quota)
			collectNames(seen, q.BorrowingLimit)
		}
	}
	for i := range snap.Workloads {
		collectNames(seen, snap.Workloads[i].Demand.Driver.Requests)
		collectNames(seen, snap.Workloads[i].Demand.Executor.Requests)
	}
	c := &cycle{res: newResources(seen), eligibility: map[string]eligibility{}, neverFit: map[string]string{}, out: Outcome{
		Waiting:  map[Key]Reason{},
		Rejected: map[Key]string{},
		Order:    map[string][]Key{},
		Usage:    map[string]corev1.ResourceList{},
		Inactive: map[string]string{},
		Ungated:  map[Key][]string{},
	}}

	nodes := make([]*Node, len(snap.Nodes))
	for i := range snap.Nodes {
		nodes[i] = &snap.Nodes[i]
	}
	sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	byName := make(map[string]int, len(nodes))
	for _, n := range nodes {
		byName[n.Name] = len(c.nodes)
		c.nodes = append(c.nodes, newNode(n, c.res))
	}
	c.live, c.empty = c.liveCapacity(), c.emptyCapacity()
	c.buildQueues(snap.Queues)

	ws := make([]*Workload, len(snap.Workloads))
	for i := range snap.Workloads {
		ws[i] = &snap.Workloads[i]
	}
	sort.SliceStable(ws, func(i, j int) bool { return LessKey(ws[i].Key, ws[j].Key) })
	for i, w := range ws {
		if i > 0 && ws[i-1].Key == w.Key {
			continue // one workload per key
		}
		c.addWorkload(w, byName)
	}
	sort.SliceStable(c.waiting, func(i, j int) bool { return c.before(c.waiting[i], c.waiting[j]) })
	return c
}

func (c *cycle) addWorkload(in *Workload, byName map[string]int) {
	w := &workload{w: in, queueName: in.Queue}
	if in.Admission != nil && in.Admission.Queue != "" {
		w.queueName = in.Admission.Queue
	}
	if w.queueName == "" {
		w.queueName = v1alpha1.DefaultQueueName
	}
	w.queue = c.queues[w.queueName]
	w.driver = c.newMember(&in.Demand.Driver)
	w.driver.count = 1
	w.executor = c.newMember(&in.Demand.Executor)
	w.need = c.res.zero()
	w.need.add(w.driver.req, w.driver.count)
	w.need.add(w.executor.req, w.executor.count)
	w.use = w.need.clone()
	if in.Admission == nil {
		c.waiting = append(c.waiting, w)
		return
	}
	p := placement{driver: -1, executors: map[int]int64{}}
	if i, ok := byName[in.Admission.Driver]; ok {
		p.driver = i
	}
	for name, k := range in.Admission.Executors {
		if i, ok := byName[name]; ok {
			p.executors[i] += int64(k)
		}
	}
	w.placed = &p
	for name, k := range in.Dynamic.Extra {
		w.use.add(w.executor.req, int64(k))
		if i, ok := byName[name]; ok {
			if w.extra == nil {
				w.extra = map[int]int64{}
			}
			w.extra[i] += int64(k)
		}
	}
	if w.queue != nil {
		w.queue.charge(w.use, 1)
	}
	c.admitted = append(c.admitted, w)
}

// LessKey orders keys by kind, namespace and name.
func LessKey(a, b Key) bool {
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// before is the admission order.
func (c *cycle) before(a, b *workload) bool {
	if pa, pb := a.queuePriority(), b.queuePriority(); pa != pb {
		return pa > pb
	}
	if a.w.Priority != b.w.Priority {
		return a.w.Priority > b.w.Priority
	}
	if !a.w.Created.Equal(b.w.Created) {
		return a.w.Created.Before(b.w.Created)
	}
	return LessKey(a.key(), b.key())
}

func (w *workload) queuePriority() int32 {
	if w.queue == nil {
		return 0
	}
	return w.queue.priority
}

func (c *cycle) run(opts Options) {
	c.decide(opts, nil)
	c.grow()
	c.summarise()
}

// decide admits, holds or rejects the waiting workloads, in order, but those outside says
// another decides (nil: none).
func (c *cycle) decide(opts Options, outside func(Key) bool) {
	for _, w := range c.waiting {
		if outside != nil && outside(w.key()) {
			continue
		}
		if w.w.Unrecorded {
			c.holdPlace(w)
			continue
		}
		if reason := c.rejection(w); reason != "" {
			c.out.Rejected[w.key()] = reason
			continue
		}
		q := w.queue
		if q == nil {
			c.wait(w, nil, PlainReason(fmt.Sprintf("queue %s does not exist", w.queueName)))
			continue
		}
		if q.broken != "" {
			c.wait(w, q, PlainReason(q.broken))
			continue
		}
		if q.head != nil && !opts.Backfill {
			c.wait(w, q, c.behind(w, q, ""))
			continue
		}
		var forbidden []bool
		if q.head != nil {
			forbidden = c.usableBy(q.head)
		}
		p, reason := c.try(w, forbidden)
		if reason.none() && q.head != nil {
			if f := c.delaysHead(w, q.head); f != "" {
				p.giveBack(w, c.live.free)
				reason = PlainReason(f)
			}
		}
		if reason.none() {
			c.admit(w, p)
			continue
		}
		if q.head != nil {
			c.wait(w, q, c.behind(w, q, "; cannot go first: "+reason.Message))
			continue
		}
		if c.matchesNoNode(w) {
			// It can use none of the nodes there are now, so nothing behind it can take
			// what it waits for: it waits without holding back its queue.
			c.wait(w, q, reason)
			continue
		}
		if opts.Preemption {
			if p, ok := c.preempt(w); ok {
				c.admit(w, p)
				continue
			}
		}
		q.head = w
		c.wait(w, q, reason)
	}
}

// summarise puts the queues' usage, state and order in the outcome.
func (c *cycle) summarise() {
	for _, name := range c.queueNames {
		q := c.queues[name]
		c.out.Usage[name] = c.res.list(q.own)
		if q.broken != "" {
			c.out.Inactive[name] = q.broken
		}
		for _, w := range q.order {
			c.out.Order[name] = append(c.out.Order[name], w.key())
		}
	}
}

// holdPlace keeps an unrecorded workload's place in its queue: it counts as waiting there and,
// first in line, is its queue's head, so that strict order holds back those behind it and
// backfill protects it. It gets no verdict and no place in the outcome: the runtime could not
// act on one for a submission not recorded yet, and the next cycle judges it once it is.
func (c *cycle) holdPlace(w *workload) {
	q := w.queue
	if q == nil || q.broken != "" || c.rejection(w) != "" || c.matchesNoNode(w) {
		return
	}
	q.waiting++
	if q.head == nil {
		q.head = w
	}
}

// rejection says why w can never be admitted as it is, or "".
func (c *cycle) rejection(w *workload) string {
	if w.queue != nil && w.queue.broken == "" {
		if f := w.queue.neverInQuota(w.need); f != nil {
			return c.neverQuotaReason(f)
		}
	}
	if len(c.nodes) == 0 {
		return "" // no nodes known (yet): nothing to judge by
	}
	return c.neverFits(w)
}

// try checks w's quota and places it on the live nodes (avoiding forbidden ones), taking the
// capacity; it returns why not otherwise (no reason when it did).
func (c *cycle) try(w *workload, forbidden []bool) (placement, Reason) {
	if f := w.queue.overQuota(w.need); f != nil {
		return placement{}, c.quotaReason(f)
	}
	c.live.forbidden = forbidden
	p, f := c.live.place(w)
	c.live.forbidden = nil
	if f != nil {
		reason := c.fitReason(f)
		if forbidden != nil {
			reason.Message += " on nodes the head cannot use"
		}
		return placement{}, reason
	}
	return p, Reason{}
}

// matchesNoNode reports whether a member of w may use none of the schedulable nodes (by its
// node selector, affinity and tolerations).
func (c *cycle) matchesNoNode(w *workload) bool {
	for _, m := range []*member{&w.driver, &w.executor} {
		if m.count == 0 {
			continue
		}
		found := false
		for i := range c.nodes {
			if c.live.usable(m, i) {
				found = true
				break
			}
		}
		if !found {
			return true
		}
	}
	return false
}

func (c *cycle) admit(w *workload, p placement) {
	w.queue.charge(w.need, 1)
	w.placed, w.fresh = &p, true
	c.admitted = append(c.admitted, w)
	c.out.Admitted = append(c.out.Admitted, Admitted{Key: w.key(), Admission: c.admission(w, p)})
}

// grow releases the executors admitted workloads ask for beyond their plan (dynamic
// allocation), in admission order, each onto the usable node it fills most tightly. It runs
// after the cycle's admissions, so an extra executor never takes capacity kept for a gang; and
// beyond the workload's spare count (replacements within the gang's count) each needs room in
// its queue and every ancestor for one more executor, by the quota and borrowing rules of
// admission, and then counts there like the gang. A workload whose queue is missing or broken
// gets replacements only. What waits, waits quietly: the application runs with the executors
// it has.
func (c *cycle) grow() {
	var asking []*workload
	for _, w := range c.admitted {
		if !w.victim && w.w.Dynamic.Asking > 0 {
			asking = append(asking, w)
		}
	}
	sort.SliceStable(asking, func(i, j int) bool { return c.before(asking[i], asking[j]) })
	for _, w := range asking {
		spare := int64(max(w.w.Dynamic.Spare, 0))
		e := &w.executor
		for range w.w.Dynamic.Asking {
			beyond := spare == 0
			if beyond && (w.queue == nil || w.queue.broken != "" || w.queue.overQuota(e.req) != nil) {
				break
			}
			i, _ := c.live.bestFit(e)
			if i < 0 {
				break
			}
			c.live.free[i].sub(e.req, 1)
			if beyond {
				w.queue.charge(e.req, 1)
				w.use.add(e.req, 1)
				if w.extra == nil {
					w.extra = map[int]int64{}
				}
				w.extra[i]++
			} else {
				spare--
			}
			c.out.Ungated[w.key()] = append(c.out.Ungated[w.key()], c.nodes[i].name)
		}
	}
}

func (c *cycle) wait(w *workload, q *queue, reason Reason) {
	c.out.Waiting[w.key()] = reason
	if q == nil {
		c.out.Order[w.queueName] = append(c.out.Order[w.queueName], w.key())
		return
	}
	q.waiting++
	q.order = append(q.order, w)
}

func (c *cycle) behind(w *workload, q *queue, why string) Reason {
	return Reason{Kind: ReasonKind{Is: KindBehind, Queue: q.name}, Message: fmt.Sprintf("behind %s in queue %s%s; needs %s",
		plural(q.waiting, "application", "applications"), q.name, why, c.res.format(w.need))}
}

// usableBy marks the nodes some member of head could use if they were empty: backfill must
// leave them alone.
func (c *cycle) usableBy(head *workload) []bool {
	usable := make([]bool, len(c.nodes))
	for i := range c.nodes {
		for _, m := range []*member{&head.driver, &head.executor} {
			if m.count > 0 && c.empty.usable(m, i) && m.fits(c.nodes[i].alloc, 1) {
				usable[i] = true
			}
		}
	}
	return usable
}

// delaysHead says why admitting w (already charged nowhere) would delay head, or "".
func (c *cycle) delaysHead(w, head *workload) string {
	w.queue.charge(w.need, 1)
	defer w.queue.charge(w.need, -1)
	if f := head.queue.overQuota(head.need); f != nil {
		return fmt.Sprintf("it would take quota the head %s needs", head.key())
	}
	return ""
}
