/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/scheduler/gang/placeholder"
	"github.com/sparkop/spark-operator/scheduler/gang/release"
	"github.com/sparkop/spark-operator/sparkpod"
)

// A preemptor is admitted into room its victims still take while their pods terminate (a
// kubelet's grace period). Were its driver created then, kube-scheduler would find no room on
// the planned node and preempt pods there itself, by pod priority: pods of applications the
// gang scheduler did not choose, a part of one at a time. So an admitted workload starts (is
// woken, and admitted by Admit) only once its driver fits its planned node by the pods on it
// now, terminating ones included, as kube-scheduler counts them. Its executors need no such
// wait: they are gated until released onto free capacity.
//
// That wait is bounded. Pods that never end (a finalizer nobody removes, a kubelet that stopped
// answering) would hold the preemptor for ever, its quota and planned node taken. So a driver
// held for room longer than the room wait (Config.PreemptionWait) since its admission is
// planned again: its reservation is removed, and the next cycle places it where there is room
// now, or preempts other applications, the pods that did not end counted where they are; until
// admitted again it shows why (replanReason).

// Pacing. When many workloads are admitted at once (the first cycle over a long queue, or one
// after a large application ends), their drivers start together and soon create hundreds of
// gated executors, each released by its own API call. On a busy API server those calls queue,
// and the last executors wait long enough for their drivers to run without them: partial
// starts in all but name. So drivers start at the pace their executors are released: while
// the executors owed to drivers started recently (planned, and not yet released) number the
// start backlog or more, further drivers wait, their capacity still reserved for them. An
// executor is owed from its driver's creation for at most owedFor, so a driver that never asks
// for its executors holds up the others no longer than that; and a gate with nothing owed lets
// any workload start, however large.
const owedFor = 30 * time.Second

// DefaultStartBacklog is the start backlog (Config.StartBacklog) an operator uses unless told
// otherwise. With placeholders it is smaller: an owed executor is let go by a swap of three
// writes in sequence (nomination, placeholder deleted, gate removed), not by one or none, so
// the same backlog makes the last executors of a burst wait longer. At 256, executors of the
// 1,000-application benchmark waited past 10 s and dozens of applications ran in part at once;
// at 96, 0–1, for up to a tenth less CPU at work (docs/benchmarks.md, "Pacing with
// placeholders").
func DefaultStartBacklog(e Enforcement) int {
	if e == EnforcementPlaceholders {
		return 96
	}
	return 256
}

// pacedReason is what a workload held back by pacing shows, should its status be written.
const pacedReason = "admitted; starting once the executors of applications started just before it are placed"

// startGate decides which admitted workloads may start their driver now.
type startGate struct {
	room    map[string]corev1.ResourceList   // node → allocatable minus what its pods request
	drivers map[core.Key]corev1.ResourceList // workload → what its driver takes on its node
	held    map[core.Key]string              // workloads that may not start yet → why
	created map[boundMember]bool             // drivers whose pod exists, placed or not
	// let are the drivers an earlier cycle let start whose pods the cache does not show yet;
	// letNow those this gate lets start.
	let, letNow map[boundMember]bool
	// owed are the executors owed to drivers started recently, backlog the most owed at which
	// another driver may start (0: no pacing).
	owed, backlog int32
	// placing are the workloads whose placeholders do not all hold their nodes yet, with why;
	// taken those one of whose placeholders found its node taken (placeholdersHold), with the
	// node. Nil without placeholders.
	placing, taken map[core.Key]string
}

// newStartGate reads w at now, with releasing executors being released (their calls in
// flight; w shows them released), and let the drivers earlier cycles let start, with when.
// Until its driver's pod or its submission reaches the cache, a workload let start still looks
// like one waiting to: judged again, it could be held after it started, and the workloads
// after it let start as if its executors were owed to no one.
func newStartGate(w world, snap core.Snapshot, now time.Time, releasing, backlog int, let map[boundMember]time.Time) *startGate {
	g := &startGate{room: map[string]corev1.ResourceList{}, drivers: map[core.Key]corev1.ResourceList{}, held: map[core.Key]string{},
		created: map[boundMember]bool{}, let: map[boundMember]bool{}, letNow: map[boundMember]bool{},
		owed: int32(releasing), backlog: int32(backlog)}
	for i := range w.Nodes {
		g.room[w.Nodes[i].Name] = w.Nodes[i].Status.Allocatable.DeepCopy()
	}
	recent := map[boundMember]bool{}    // drivers created less than owedFor ago
	released := map[boundMember]int32{} // executor pods not gated, by run
	for i := range w.Pods {
		p := &w.Pods[i]
		if m, ok := memberOf(p); ok && m.role == v1beta2.SparkRoleDriver {
			g.created[m] = true
			recent[m] = now.Sub(p.CreationTimestamp.Time) < owedFor
		} else if ok && !release.Gated(p) {
			released[m]++
		}
		room, ok := g.room[placedOn(p)]
		// A placeholder's room is the reservation's, which the decision core counts; the gate
		// waits only for pods that are ending.
		if !ok || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || placeholder.Is(p) {
			continue
		}
		sparkpod.AddTimes(room, requestsOf(p), -1)
	}
	for i := range snap.Workloads {
		g.drivers[snap.Workloads[i].Key] = memberRequests(snap.Workloads[i].Demand.Driver)
	}
	for i := range w.Workloads {
		o := &w.Workloads[i]
		r, ok := o.liveReservation()
		if !ok {
			continue
		}
		driver := boundMember{app: o.Key, submission: r.SubmissionID, role: v1beta2.SparkRoleDriver}
		switch {
		case g.created[driver]:
			if !recent[driver] {
				continue
			}
		case now.Sub(let[driver]) < owedFor:
			// Its driver is being created: it takes its room as it will.
			g.let[driver] = true
			if room, ok := g.room[r.Driver]; ok && g.drivers[o.Key] != nil {
				sparkpod.AddTimes(room, g.drivers[o.Key], -1)
			}
		case o.waits():
			continue // not started: owed once the gate lets it start
		case now.Sub(r.Admitted) >= owedFor:
			continue
		}
		// Its driver was created lately, or is being created: let start by an earlier cycle,
		// or its submission recorded, and the driver pod not in the cluster cache yet.
		g.owed += max(plannedExecutors(r.Executors)-released[boundMember{app: o.Key, submission: r.SubmissionID, role: v1beta2.SparkRoleExecutor}], 0)
	}
	return g
}

// plannedExecutors is how many executors a plan places.
func plannedExecutors(plan map[string]int32) int32 {
	var n int32
	for _, k := range plan {
		n += k
	}
	return n
}

// start reports whether the driver of run of key, planned on node with executors planned as
// plan, may be created: it fits there now and pacing lets it (its room is then taken, and its
// executors owed), or it exists already (counted among the pods), or an earlier cycle let it
// start (its executors owed already). A node or workload the gate does not know is no reason
// to wait for room.
func (g *startGate) start(key core.Key, run, node string, plan map[string]int32) bool {
	driver := boundMember{app: key, submission: run, role: v1beta2.SparkRoleDriver}
	if g.created[driver] || g.let[driver] {
		return true
	}
	room, ok := g.room[node]
	need, known := g.drivers[key]
	if ok && known {
		for name, q := range need {
			// Only what the node lists: the decision core has judged the rest.
			if free, ok := room[name]; ok && free.Cmp(q) < 0 {
				g.held[key] = roomReason(node)
				return false
			}
		}
	}
	if node, ok := g.taken[key]; ok {
		g.held[key] = takenReason(node)
		return false
	}
	if why, ok := g.placing[key]; ok {
		g.held[key] = why
		return false
	}
	if g.backlog > 0 && g.owed > 0 && g.owed >= g.backlog {
		g.held[key] = pacedReason
		return false
	}
	if ok && known {
		sparkpod.AddTimes(room, need, -1)
	}
	g.owed += plannedExecutors(plan)
	g.letNow[driver] = true
	return true
}

// holdForPlaceholders makes the gate hold the drivers of w's runs until all their placeholders
// hold their nodes (with the placeholders enforcement). It returns when to look again, if a
// placeholder kube-scheduler found no room for may soon count as taken (0: no need).
func (g *startGate) holdForPlaceholders(w world, o snapshotOptions) time.Duration {
	var recheck time.Duration
	g.placing, g.taken, recheck = placeholdersHold(w, o)
	return recheck
}

// nodeTaken reports whether key is held because a placeholder of its run found its node taken:
// then it is planned again at once, rather than after the room wait.
func (g *startGate) nodeTaken(key core.Key) (string, bool) {
	node, ok := g.taken[key]
	return node, ok && g.held[key] == takenReason(node)
}

// overdue reports whether the driver of key, admitted at admitted and held for room (not for
// pacing) by this gate, has waited for it wait or longer at now: then it is to be planned
// again. A wait of 0 waits for ever.
func (g *startGate) overdue(key core.Key, admitted, now time.Time, wait time.Duration) bool {
	why, held := g.held[key]
	return held && why != pacedReason && wait > 0 && now.Sub(admitted) >= wait
}

// replanReason is what a workload planned again after waiting for room shows, before the
// cycle's reason for waiting.
func replanReason(node string, wait time.Duration) string {
	return fmt.Sprintf("planned again: pods on %s, of the applications it preempted, did not end within %s", node, wait)
}

// roomReason is what a workload the start gate holds back shows.
func roomReason(node string) string {
	return fmt.Sprintf("admitted; waiting for room for the driver on %s, where pods of the applications it preempted are ending", node)
}
