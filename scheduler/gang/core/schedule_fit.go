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
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/sparkop/spark-operator/sparkpod"
)

// node is a Node in a cycle: its capacity as vectors, and the object the Kubernetes
// placement helpers match against.
type node struct {
	name          string
	obj           *corev1.Node // labels and name, for node affinity
	taints        []corev1.Taint
	unschedulable bool
	alloc         vec // allocatable; "pods" plenty when the node does not list it
	free          vec // alloc − used, as the cycle's admissions and preemptions change it
	// plain says the node has no NoSchedule/NoExecute taint, so a member with no placement
	// rules is eligible without running the matchers.
	plain bool
}

func newNode(n *Node, r *resources) *node {
	nd := &node{
		name:          n.Name,
		obj:           &corev1.Node{},
		taints:        n.Taints,
		unschedulable: n.Unschedulable,
		alloc:         r.vector(n.Allocatable, 0),
		plain:         true,
	}
	nd.obj.Name, nd.obj.Labels = n.Name, n.Labels
	if _, ok := n.Allocatable[corev1.ResourcePods]; !ok {
		nd.alloc[r.pods] = plenty
	}
	nd.free = nd.alloc.clone()
	nd.free.sub(r.vector(n.Used, 0), 1)
	for _, t := range n.Taints {
		if blocking(&t) {
			nd.plain = false
		}
	}
	return nd
}

// plenty stands for a node capacity that does not run out (pods, on a node that does not list
// them); unlike unlimited it leaves room for arithmetic.
const plenty = 1 << 40

// blocking taints keep pods that do not tolerate them off a node.
func blocking(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

// member is one role of a workload's gang: count pods, each requesting req, allowed on the
// nodes marked in eligible (by node selector, required node affinity and tolerations; whether
// a node is cordoned is checked separately, as it is a passing state).
type member struct {
	role     sparkpod.Role
	count    int64
	req      vec // one pod's requests, with 1 pod
	eligible []bool
	// rules identifies the placement rules eligible was computed from ("" for none): members
	// with equal rules share one eligible slice, and the empty-cluster check is remembered by
	// it.
	rules string
	// invalid is set when the member's required node affinity cannot be parsed.
	invalid error
}

// eligibility is which nodes one set of placement rules allows, shared by the members that
// have those rules. At ten applications a node, matching every member against every node
// was a quarter of a cycle; most applications share a handful of rule sets.
type eligibility struct {
	nodes []bool
	err   error // the required node affinity cannot be parsed
}

func (c *cycle) newMember(d *sparkpod.PodDemand) member {
	m := member{role: d.Role, count: int64(d.Count), req: c.res.vector(d.Requests, 0)}
	m.req[c.res.pods] = 1
	m.rules = rulesKey(d)
	e, ok := c.eligibility[m.rules]
	if !ok {
		e = c.eligible(d)
		c.eligibility[m.rules] = e
	}
	m.eligible = e.nodes
	if e.err != nil {
		m.invalid = fmt.Errorf("the %s's required node affinity is invalid: %v", d.Role, e.err)
	}
	return m
}

// eligible matches d's placement rules against every node. Never written to after: members
// share the slice.
func (c *cycle) eligible(d *sparkpod.PodDemand) eligibility {
	e := eligibility{nodes: make([]bool, len(c.nodes))}
	if !hasRules(d) {
		for i, n := range c.nodes {
			e.nodes[i] = n.plain
		}
		return e
	}
	affinity := nodeaffinity.NewRequiredNodeAffinity(d.NodeSelector, d.Affinity)
	for i, n := range c.nodes {
		ok, err := affinity.Match(n.obj)
		if err != nil {
			return eligibility{nodes: make([]bool, len(c.nodes)), err: err}
		}
		if !ok {
			continue
		}
		_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(logr.Discard(), n.taints, d.Tolerations, blocking, true)
		e.nodes[i] = !untolerated
	}
	return e
}

func hasRules(d *sparkpod.PodDemand) bool {
	return len(d.NodeSelector) > 0 || len(d.Tolerations) > 0 || requiredAffinity(d) != nil
}

func requiredAffinity(d *sparkpod.PodDemand) *corev1.NodeSelector {
	if d.Affinity == nil || d.Affinity.NodeAffinity == nil {
		return nil
	}
	return d.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
}

// rulesKey is d's placement rules as a string, equal for equal rules (rules written apart that
// happen to allow the same nodes get keys of their own, and are matched once each):
// the node selector in key order, the required node affinity and the tolerations as written.
func rulesKey(d *sparkpod.PodDemand) string {
	if !hasRules(d) {
		return ""
	}
	var b strings.Builder
	keys := make([]string, 0, len(d.NodeSelector))
	for k := range d.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%q=%q,", k, d.NodeSelector[k])
	}
	b.WriteString("|")
	if a := requiredAffinity(d); a != nil {
		b.WriteString(a.String())
	}
	for i := range d.Tolerations {
		b.WriteString("|")
		b.WriteString(d.Tolerations[i].String())
	}
	return b.String()
}

// fits reports whether k pods of m fit in free.
func (m *member) fits(free vec, k int64) bool {
	for i, x := range m.req {
		if x != 0 && free[i] < x*k {
			return false
		}
	}
	return true
}

// room is how many pods of m fit in free (at most limit).
func (m *member) room(free vec, limit int64) int64 {
	n := limit
	for i, x := range m.req {
		if x > 0 {
			n = min(n, max(free[i], 0)/x)
		}
	}
	return n
}

// leftover scores how tightly one pod of m fills a node with free capacity: the sum, over the
// resources m requests, of the share of the node's allocatable left free after it. Lower is
// tighter.
func (m *member) leftover(free, alloc vec) float64 {
	var s float64
	for i, x := range m.req {
		if x > 0 && alloc[i] > 0 {
			s += float64(free[i]-x) / float64(alloc[i])
		}
	}
	return s
}

// placement is where a gang's members go: the driver's node and executors per node, by index.
type placement struct {
	driver    int
	executors map[int]int64
}

// fitFailure says which member did not fit, and how far it got.
type fitFailure struct {
	member  *member
	placed  int64 // executors placed before the failure
	driver  int   // the driver's node when executors failed, else -1
	noMatch bool  // no node (schedulable now, for a placement now) matches its placement rules
}

// capacity is the per-node capacity placement works on: the live free vectors for a placement
// now, or copies of the allocatable for the empty cluster.
type capacity struct {
	free      []vec
	cordoned  bool // cordoned nodes take part (the empty-cluster check)
	nodes     []*node
	forbidden []bool // nodes this placement must not use (backfill: what the head can use)
}

func (c *cycle) liveCapacity() capacity {
	free := make([]vec, len(c.nodes))
	for i, n := range c.nodes {
		free[i] = n.free
	}
	return capacity{free: free, nodes: c.nodes}
}

func (c *cycle) emptyCapacity() capacity {
	free := make([]vec, len(c.nodes))
	for i, n := range c.nodes {
		free[i] = n.alloc.clone()
	}
	return capacity{free: free, nodes: c.nodes, cordoned: true}
}

func (cp *capacity) usable(m *member, i int) bool {
	return m.eligible[i] && (cp.cordoned || !cp.nodes[i].unschedulable) && (cp.forbidden == nil || !cp.forbidden[i])
}

// place puts w's gang on cp: the driver first, then the executors. It takes the capacity it
// uses from cp.free when it succeeds, and leaves cp unchanged when it fails.
//
// Both roles go best-fit: each pod goes to the usable node it fills most tightly. Packing
// pods tightly leaves whole nodes free for the drivers and large executors that come later,
// which is what limits fragmentation (enough CPU in total, no single node with room). Because
// the node an executor fills most tightly stays the tightest after it, executors are placed a
// node at a time, as many as fit. If the executors do not fit next to the best-fit driver,
// the other nodes that could take the driver are tried, tightest first.
func (cp *capacity) place(w *workload) (placement, *fitFailure) {
	d, e := &w.driver, &w.executor
	var candidates []scored
	matched := false
	for i := range cp.free {
		if !cp.usable(d, i) {
			continue
		}
		matched = true
		if d.fits(cp.free[i], 1) {
			candidates = append(candidates, scored{i, d.leftover(cp.free[i], cp.nodes[i].alloc)})
		}
	}
	if len(candidates) == 0 {
		return placement{}, &fitFailure{member: d, driver: -1, noMatch: !matched}
	}
	// The tightest node first (the first of equal scores, in the nodes' name order); the
	// others, sorted, only if the executors do not fit next to it: most gangs that fit at all
	// fit there, and sorting every candidate was a tenth of a cycle.
	first := 0
	for i, c := range candidates {
		if c.score < candidates[first].score {
			first = i
		}
	}
	order := func(yield func(scored) bool) {
		if !yield(candidates[first]) {
			return
		}
		rest := append(candidates[:first:first], candidates[first+1:]...)
		// Stable, so equal scores keep the nodes' (name) order.
		sort.SliceStable(rest, func(i, j int) bool { return rest[i].score < rest[j].score })
		for _, c := range rest {
			if !yield(c) {
				return
			}
		}
	}
	var worst *fitFailure
	for c := range order {
		dn := c.node
		cp.free[dn].sub(d.req, 1)
		execs, f := cp.placeExecutors(e, dn)
		if f == nil {
			return placement{driver: dn, executors: execs}, nil
		}
		cp.free[dn].add(d.req, 1)
		if worst == nil || f.placed > worst.placed {
			worst = f
		}
		if f.noMatch {
			break // no node matches the executors' rules: another driver node changes nothing
		}
	}
	return placement{}, worst
}

type scored struct {
	node  int
	score float64
}

// placeExecutors places e.count executors best-fit, the driver already on node dn.
func (cp *capacity) placeExecutors(e *member, dn int) (map[int]int64, *fitFailure) {
	execs := map[int]int64{}
	left := e.count
	matched := false
	for left > 0 {
		best, usable := cp.bestFit(e)
		matched = matched || usable
		if best < 0 {
			for i, k := range execs {
				cp.free[i].add(e.req, k)
			}
			return nil, &fitFailure{member: e, placed: e.count - left, driver: dn, noMatch: !matched}
		}
		k := max(e.room(cp.free[best], left), 1) // fits said one does: never loop on none
		cp.free[best].sub(e.req, k)
		execs[best] += k
		left -= k
	}
	return execs, nil
}

// bestFit returns the usable node that one pod of m fits most tightly (-1 if none), and
// whether m may use any node at all.
func (cp *capacity) bestFit(m *member) (best int, matched bool) {
	best, bestScore := -1, 0.0
	for i := range cp.free {
		if !cp.usable(m, i) {
			continue
		}
		matched = true
		if !m.fits(cp.free[i], 1) {
			continue
		}
		if s := m.leftover(cp.free[i], cp.nodes[i].alloc); best < 0 || s < bestScore {
			best, bestScore = i, s
		}
	}
	return best, matched
}

// giveBack gives back what p took from free.
func (p placement) giveBack(w *workload, free []vec) {
	free[p.driver].add(w.driver.req, 1)
	for i, k := range p.executors {
		free[i].add(w.executor.req, k)
	}
}

// admission turns p into the API's form.
func (c *cycle) admission(w *workload, p placement) Admission {
	a := Admission{Queue: w.queueName, Driver: c.nodes[p.driver].name}
	if len(p.executors) > 0 {
		a.Executors = make(map[string]int32, len(p.executors))
		for i, k := range p.executors {
			a.Executors[c.nodes[i].name] = int32(k)
		}
	}
	return a
}

// fitReason explains a failure to place a gang now.
func (c *cycle) fitReason(f *fitFailure) Reason {
	m := f.member
	need := c.res.format(m.req)
	noFit := func(msg string) Reason { return Reason{Kind: ReasonKind{Is: KindNoNodeFits}, Message: msg} }
	if m.role == sparkpod.RoleDriver {
		if f.noMatch {
			return PlainReason("no schedulable node matches the driver's node selector, affinity and tolerations")
		}
		return noFit(fmt.Sprintf("no node fits: driver needs %s; no node has it free", need))
	}
	if f.noMatch {
		return PlainReason("no schedulable node matches the executors' node selector, affinity and tolerations")
	}
	if m.count == 1 {
		return noFit(fmt.Sprintf("no node fits: the executor needs %s; no node has it free next to the driver", need))
	}
	return noFit(fmt.Sprintf("no node fits: %d executors need %s each; room for %d of %d next to the driver",
		m.count, need, f.placed, m.count))
}

// neverFits says why w cannot be placed even on the empty cluster, or "" if it can. A member
// that matches no node at all waits instead (nodes with the labels it selects may join).
// The answer depends only on the gang's shape, so a cycle works it out once per shape: it
// places a whole gang, and a cycle asks it of every waiting application.
func (c *cycle) neverFits(w *workload) string {
	key := shapeKey(w)
	if reason, ok := c.neverFit[key]; ok {
		return reason
	}
	reason := c.neverFitsEmpty(w)
	c.neverFit[key] = reason
	return reason
}

// shapeKey is what the empty-cluster check depends on: each member's requests, count and
// placement rules.
func shapeKey(w *workload) string {
	b := make([]byte, 0, 128)
	for _, m := range []*member{&w.driver, &w.executor} {
		b = strconv.AppendInt(b, m.count, 10)
		for _, x := range m.req {
			b = append(b, ',')
			b = strconv.AppendInt(b, x, 10)
		}
		b = append(b, '|')
		b = append(b, m.rules...)
		b = append(b, 0)
	}
	return string(b)
}

func (c *cycle) neverFitsEmpty(w *workload) string {
	for _, m := range []*member{&w.driver, &w.executor} {
		if m.invalid != nil {
			return m.invalid.Error()
		}
	}
	empty := &c.empty
	for _, m := range []*member{&w.driver, &w.executor} {
		if m.count == 0 {
			continue
		}
		matched, fits := false, false
		for i := range c.nodes {
			if empty.usable(m, i) {
				matched = true
				fits = fits || m.fits(empty.free[i], 1)
			}
		}
		if matched && !fits {
			what := "the driver needs"
			if m.role == sparkpod.RoleExecutor {
				what = "each executor needs"
			}
			return fmt.Sprintf("%s %s: more than any matching node's allocatable", what, c.res.format(m.req))
		}
		if !matched {
			return ""
		}
	}
	p, f := empty.place(w)
	if f == nil {
		p.giveBack(w, empty.free)
		return ""
	}
	if !f.noMatch {
		return fmt.Sprintf("the gang (driver %s, %d executors of %s) does not fit on the whole cluster even when empty: room for %s",
			c.res.format(w.driver.req), w.executor.count, c.res.format(w.executor.req), plural(int(f.placed), "executor", "executors"))
	}
	return ""
}
