/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package core is the gang scheduler's decision core: Schedule (and ScheduleExternal) take a
// Snapshot of the cluster (nodes, queues, workloads) and return an Outcome (who is admitted
// where, who waits and why, who is rejected or preempted, which extra executors start where).
//
// It owns the admission rules: queue order, quota and borrowing, placement on nodes, backfill,
// preemption, and checking an external scheduler's proposals. It must not talk to the cluster
// or read a clock: it imports no Kubernetes client, keeps no state between calls, and the same
// snapshot always gives the same outcome. Building snapshots, storing reservations and acting
// on an outcome belong to package gang and the packages beside it.
package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/scheduler/key"
	"github.com/sparkop/spark-operator/sparkpod"
)

// Node is a schedulable node as the cycle sees it.
type Node struct {
	Name          string
	Labels        map[string]string
	Taints        []corev1.Taint
	Unschedulable bool
	Allocatable   corev1.ResourceList
	// Used: requests of non-terminal pods bound to it, plus the reservations of admitted
	// applications' members not yet bound (their pods not yet on the node).
	Used corev1.ResourceList
}

// Queue is one Queue object with its admitted usage.
type Queue struct {
	Name, Parent string
	Priority     int32
	// Quota limits what the queue's applications (and its children's) may use at once. A
	// resource absent from it is not limited by this queue.
	Quota corev1.ResourceList
	// BorrowingLimit caps, per resource, how far beyond its own quota the queue may use its
	// parent's unused quota. nil (or a resource absent) = it may borrow all the parent's unused.
	BorrowingLimit corev1.ResourceList
	// NoBorrowing: the queue never uses more than its own quota.
	NoBorrowing bool
	// Usage is what the queue's own admitted workloads use (children's are summed by the core).
	// Schedule does not read it: it sums the admitted workloads of the snapshot itself (so a
	// runtime need not fill it), and returns each queue's usage after the cycle in
	// Outcome.Usage.
	Usage corev1.ResourceList
}

// Key names a workload: its kind (application or session), namespace and name.
type Key = key.Workload

// Workload is one application or session in the scheduler: waiting, or admitted (Admission
// set).
type Workload struct {
	Key      Key
	Queue    string
	Priority int32     // its pods' (priorityOf): their PriorityClass's value, else the global default's, else 0
	Created  time.Time // creationTimestamp (queue order tie-break)
	Demand   sparkpod.Demand
	// Admission is set for an admitted workload: its reservation, which counts against its
	// queue and (for members not yet bound) the planned nodes' Used.
	Admission *Admission
	// Dynamic is, for an admitted workload, what its executors do beyond the plan (dynamic
	// allocation).
	Dynamic Dynamic
	// Unrecorded marks a waiting application whose controller has not yet recorded the
	// submission it will ask admission for. It cannot be admitted before that, but it keeps
	// its place in its queue's order: the controller records submissions in no particular
	// order, and an application created later must not go first because its submission was
	// recorded sooner.
	Unrecorded bool
}

// Dynamic is what an admitted workload's executors do beyond its admission's plan: Spark's
// dynamic allocation asking for more executors than the gang, or replacing ones that ended.
type Dynamic struct {
	// Extra is, per node, the executors started beyond the gang's count (released to a node,
	// bound or running). They count against the workload's queue (and its ancestors) like the
	// gang, and on their nodes through their pods (Node.Used).
	Extra map[string]int32
	// Spare is how many executors may start without taking more quota: the gang's count minus
	// the executors alive, when positive (Spark replacing executors that ended).
	Spare int32
	// Asking is how many executors wait for a node that the plan has no slot left for. Each
	// is released (Outcome.Ungated) only onto a node it may use with free capacity that is
	// neither used nor reserved, and, beyond Spare, only if its queue and every ancestor have
	// quota for one more executor, by the same rules as admission.
	Asking int32
}

// Admission is an admitted workload's reservation: its queue and the node planned for
// each member. It is what gang-runtime stores in the API and turns into pod settings.
type Admission struct {
	Queue     string
	Driver    string           // node of the driver
	Executors map[string]int32 // node → executors planned there
}

// Snapshot is everything one admission cycle decides on.
type Snapshot struct {
	Nodes     []Node
	Queues    map[string]*Queue
	Workloads []Workload // admitted and waiting
}

// Options tune an admission cycle.
type Options struct {
	// Backfill lets a workload behind its queue's blocked head go first when that cannot delay
	// the head (the rule is in Schedule's documentation).
	Backfill bool
	// Preemption lets a queue's blocked head evict whole admitted workloads of lower priority
	// in its queue, or of queues borrowing beyond their quota (see preempt). Off by default.
	Preemption bool
}

// Outcome is the result of one admission cycle.
type Outcome struct {
	Admitted  []Admitted // in admission order
	Preempted []Preemption
	// Waiting says why each waiting workload waits: over quota, no node fits, behind N
	// applications in its queue; and what it needs.
	Waiting map[Key]Reason
	// Rejected says why a workload can never be admitted as it is: bigger than any node
	// arrangement, or than its queue's (or an ancestor's) quota.
	Rejected map[Key]string
	// Order is, per queue, the waiting workloads in admission order (for Queue status).
	Order map[string][]Key
	// Usage is, per queue, what its own admitted workloads request after the cycle (whole
	// gangs, admissions and preemptions included): the Queue's status.admitted.
	Usage map[string]corev1.ResourceList
	// Inactive lists the queues that admit nothing, with why: a missing parent, a cycle of
	// parents, or a broken ancestor (the Queue's Active condition).
	Inactive map[string]string
	// Ungated is, per admitted workload asking for executors beyond its plan
	// (Dynamic.Asking), the node given to each executor released this cycle, in order; the
	// others keep waiting.
	Ungated map[Key][]string
}

// Reason says why a workload waits: the message it shows, and what that message means.
type Reason struct {
	Message string
	// Kind is what the reason means without the numbers that change whenever others are
	// admitted or end (a place in the queue, amounts free, executors with room). It is given
	// where the reason is made: two reasons of one kind say the same thing, more or less up to
	// date (the runtime refreshes a shown reason sooner when its kind changes).
	Kind ReasonKind
}

// ReasonKind is what a Reason means.
type ReasonKind struct {
	// Is is KindBehind, KindOverQuota or KindNoNodeFits; for a reason with no such numbers
	// (a queue that does not exist, a member no node matches), its message itself.
	Is string
	// Queue is the queue a KindBehind or KindOverQuota reason names.
	Queue string
}

// The kinds of reasons whose message has numbers in it.
const (
	// KindBehind: behind N applications in Queue, whatever else it says.
	KindBehind = "behind"
	// KindOverQuota: Queue (the workload's own or an ancestor) has no room for its gang.
	KindOverQuota = "over quota"
	// KindNoNodeFits: the gang does not fit on the nodes now.
	KindNoNodeFits = "no node fits"
)

// PlainReason is a reason with no numbers in it: its message is its kind.
func PlainReason(message string) Reason {
	return Reason{Message: message, Kind: ReasonKind{Is: message}}
}

// none reports whether r is no reason at all (what succeeded).
func (r Reason) none() bool { return r == Reason{} }

// Admitted is one workload admitted by the cycle, with its reservation.
type Admitted struct {
	Key       Key
	Admission Admission
}

// Preemption is an admitted workload the cycle evicts (whole) so By can be admitted.
type Preemption struct {
	Key    Key
	By     Key
	Reason string
}
