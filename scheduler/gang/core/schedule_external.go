/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package core

// Workloads of an external scheduler (spec.batchScheduler: external) wait in the same queues,
// and their reservations hold capacity the same way, but the order and placement of those
// waiting are decided by another program. A cycle first decides, as always, for the workloads
// the core decides for; then it shows the external scheduler what is left (free capacity per
// node, the queues' usage, its waiting workloads with their gangs and the nodes each member may
// use, the reservations) and takes its answer as proposals, which the core checks one by one
// by its own rules: the workload waits for the external scheduler, the plan places its whole
// gang exactly, each member on a node it may use with room for it, and its queues have quota for
// it. What passes is admitted as the core admits; what fails stays queued, with why. Executors
// beyond the plans are released only after that (grow), so they never take what an admission of
// this cycle planned.

import (
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/scheduler/external"
	"github.com/sparkop/spark-operator/scheduler/key"
)

// ExternalReport is what became of one cycle's question to the external scheduler.
type ExternalReport struct {
	// Asked is whether the external scheduler was asked: it was not if none of its workloads
	// waited (rejected ones aside).
	Asked bool
	// Err is why it gave no usable answer: then it admitted nothing.
	Err error
	// Refused are the admissions of its answer that failed the checks, with why.
	Refused map[Key]string
	// Admitted counts the admissions applied.
	Admitted int
}

// ScheduleExternal is Schedule for a snapshot some of whose waiting workloads (those outside
// reports) are decided by an external scheduler: ask takes the request built after the core's
// own admissions and returns the answer. ask is called at most once, and not at all when no
// such workload can be admitted (none waits, or each is rejected or has no usable queue).
func ScheduleExternal(snap Snapshot, opts Options, outside func(Key) bool, ask func(*external.Request) (*external.Response, error)) (Outcome, ExternalReport) {
	c := newCycle(&snap)
	c.decide(opts, outside)
	report := ExternalReport{Refused: map[Key]string{}}
	var waiting []*workload
	for _, w := range c.waiting {
		if !outside(w.key()) || w.w.Unrecorded {
			continue
		}
		switch {
		case c.rejection(w) != "":
			c.out.Rejected[w.key()] = c.rejection(w)
		case w.queue == nil:
			c.wait(w, nil, PlainReason(fmt.Sprintf("queue %s does not exist", w.queueName)))
		case w.queue.broken != "":
			c.wait(w, w.queue, PlainReason(w.queue.broken))
		default:
			waiting = append(waiting, w)
		}
	}
	if len(waiting) > 0 {
		report.Asked = true
		answer, err := ask(c.externalRequest(waiting))
		said := map[Key]string{}
		if err != nil {
			report.Err = err
		} else {
			report.Admitted = c.applyProposals(waiting, answer.Admit, report.Refused)
			for _, wt := range answer.Waiting {
				said[keyOf(wt.Workload)] = wt.Reason
			}
		}
		for _, w := range waiting {
			if w.placed == nil {
				c.wait(w, w.queue, externalReason(report, said, w.key()))
			}
		}
	}
	c.grow()
	c.summarise()
	return c.out, report
}

// externalReason is why a workload of the external scheduler still waits.
func externalReason(r ExternalReport, said map[Key]string, key Key) Reason {
	switch {
	case r.Err != nil:
		return PlainReason("the external scheduler gave no usable answer, so nothing of it is admitted: " + r.Err.Error())
	case r.Refused[key] != "":
		return PlainReason("the external scheduler's admission was refused: " + r.Refused[key])
	case said[key] != "":
		return PlainReason("the external scheduler: " + said[key])
	}
	return PlainReason("waiting for the external scheduler")
}

// keyOf names the workload an answer names; a kind left out is an application's.
func keyOf(w external.Workload) Key {
	kind := key.Kind(w.Kind)
	if kind == "" {
		kind = key.KindApplication
	}
	k := Key{Kind: kind}
	k.Namespace, k.Name = w.Namespace, w.Name
	return k
}

func wireWorkload(k Key) external.Workload {
	return external.Workload{Kind: string(k.Kind), Namespace: k.Namespace, Name: k.Name}
}

// externalRequest shows the external scheduler the cycle as it stands: nodes' free capacity
// after every admission so far, queues' usage, its waiting workloads in admission order, and
// the reservations.
func (c *cycle) externalRequest(waiting []*workload) *external.Request {
	req := &external.Request{Nodes: []external.Node{}, Queues: []external.Queue{}, Pending: []external.Pending{}, Reservations: []external.Reservation{}}
	for i, n := range c.nodes {
		req.Nodes = append(req.Nodes, external.Node{Name: n.name, Labels: n.obj.Labels, Unschedulable: n.unschedulable,
			Allocatable: c.res.list(n.alloc), Free: c.res.list(nonNegative(c.live.free[i]))})
	}
	for _, name := range c.queueNames {
		q := c.queues[name]
		wq := external.Queue{Name: name, Priority: q.priority, Used: c.res.list(q.own)}
		if q.parent != nil {
			wq.Parent = q.parent.name
		}
		for i, x := range q.quota {
			if x != unlimited {
				if wq.Quota == nil {
					wq.Quota = corev1.ResourceList{}
				}
				wq.Quota[c.res.names[i]] = c.res.quantity(i, x)
			}
		}
		req.Queues = append(req.Queues, wq)
	}
	for _, w := range waiting {
		req.Pending = append(req.Pending, external.Pending{
			Workload: wireWorkload(w.key()), Queue: w.queueName, Priority: w.w.Priority, Created: w.w.Created.UTC(),
			Driver: c.wireMember(&w.driver), Executors: c.wireMember(&w.executor),
		})
	}
	for _, w := range c.admitted {
		if w.victim || w.placed == nil {
			continue
		}
		a := c.admission(w, *w.placed)
		req.Reservations = append(req.Reservations, external.Reservation{Workload: wireWorkload(w.key()), Queue: a.Queue,
			Placement: external.Placement{Driver: a.Driver, Executors: a.Executors}})
	}
	return req
}

func (c *cycle) wireMember(m *member) external.Member {
	out := external.Member{Count: int32(m.count), Requests: c.res.list(m.req), EligibleNodes: []string{}}
	delete(out.Requests, corev1.ResourcePods)
	for i, n := range c.nodes {
		if c.live.usable(m, i) {
			out.EligibleNodes = append(out.EligibleNodes, n.name)
		}
	}
	return out
}

// applyProposals checks each admission of the answer, in order, and admits those that pass;
// refused collects why the others did not. It returns how many it admitted.
func (c *cycle) applyProposals(waiting []*workload, proposals []external.Admission, refused map[Key]string) int {
	byKey := make(map[Key]*workload, len(waiting))
	for _, w := range waiting {
		byKey[w.key()] = w
	}
	byName := make(map[string]int, len(c.nodes))
	for i, n := range c.nodes {
		byName[n.name] = i
	}
	admitted := 0
	for _, p := range proposals {
		key := keyOf(p.Workload)
		w := byKey[key]
		switch {
		case w == nil:
			refused[key] = fmt.Sprintf("%s %s does not wait for the external scheduler's admission (unknown, admitted already, or another scheduler's)", key.Kind, key.NamespacedName)
			continue
		case w.placed != nil:
			refused[key] = "admitted twice in one answer; the first stands"
			continue
		}
		pl, why := c.checkPlacement(w, p.Placement, byName)
		if why != "" {
			refused[key] = why
			continue
		}
		c.admit(w, pl)
		admitted++
	}
	return admitted
}

// checkPlacement checks that pl puts w's whole gang on nodes its members may use, with room for
// them, within its queues' quota; it takes the capacity when it does, and says why not
// otherwise.
func (c *cycle) checkPlacement(w *workload, pl external.Placement, byName map[string]int) (placement, string) {
	if f := w.queue.overQuota(w.need); f != nil {
		return placement{}, c.quotaReason(f).Message
	}
	p := placement{driver: -1, executors: map[int]int64{}}
	d, ok := byName[pl.Driver]
	if !ok {
		return p, fmt.Sprintf("it puts the driver on %q, which is no schedulable node", pl.Driver)
	}
	p.driver = d
	var total int64
	nodes := make([]string, 0, len(pl.Executors))
	for name, k := range pl.Executors {
		if k < 0 {
			return p, fmt.Sprintf("it puts %d executors on %s", k, name)
		}
		if k > 0 {
			nodes = append(nodes, name)
			total += int64(k)
		}
	}
	if total != w.executor.count {
		return p, fmt.Sprintf("it places %d executors; the gang has %d", total, w.executor.count)
	}
	sort.Strings(nodes)
	take := []struct {
		m *member
		i int
		k int64
	}{{&w.driver, d, 1}}
	for _, name := range nodes {
		i, ok := byName[name]
		if !ok {
			return p, fmt.Sprintf("it puts executors on %q, which is no schedulable node", name)
		}
		p.executors[i] = int64(pl.Executors[name])
		take = append(take, struct {
			m *member
			i int
			k int64
		}{&w.executor, i, p.executors[i]})
	}
	free := make(map[int]vec, len(take))
	for _, t := range take {
		if !c.live.usable(t.m, t.i) {
			return p, fmt.Sprintf("the %s may not run on node %s (its node selector, affinity or tolerations, or the node is cordoned)", t.m.role, c.nodes[t.i].name)
		}
		if free[t.i] == nil {
			free[t.i] = c.live.free[t.i].clone()
		}
		if !t.m.fits(free[t.i], t.k) {
			return p, fmt.Sprintf("node %s has no room for %s: %s each, %s free", c.nodes[t.i].name,
				plural(int(t.k), string(t.m.role), string(t.m.role)+"s"), c.res.format(t.m.req), c.res.format(nonNegative(free[t.i])))
		}
		free[t.i].sub(t.m.req, t.k)
	}
	for i, v := range free {
		copy(c.live.free[i], v) // in place: the nodes share these vectors
	}
	return p, ""
}

// nonNegative is v with what is overcommitted shown as none free.
func nonNegative(v vec) vec {
	out := slices.Clone(v)
	for i, x := range out {
		out[i] = max(x, 0)
	}
	return out
}
