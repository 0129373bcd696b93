/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

// Enforcement: how reserved capacity is kept from pods the gang scheduler did not admit.
//
// Advisory: not at all. The gang scheduler counts its reservations when it admits, but
// kube-scheduler does not know them, and any other pod (a Deployment's, an application of
// another scheduler) can take the room planned for an admitted run's members.
//
// Placeholders (as YuniKorn's gang scheduling holds room): for each reserved member whose pod
// is not created yet, or is created and still gated, an ordinary pod of the same requests,
// pinned by a required node affinity to the member's planned node, owned by the reservation.
// kube-scheduler places it like any pod (its fit checks, quotas and admission apply) and then
// counts it as used capacity, so no other pod can take the room. A run's driver starts only
// once all its placeholders hold their nodes; a placeholder that cannot (its node taken before
// it got there) has its run planned again at once.
//
// The swap: a member's pod is created gated (GateExecutor; the driver too) and takes its
// placeholder's place in three writes: (1) its status.nominatedNodeName is set to the planned
// node, which kube-scheduler honours at once for a pod it knows, gated or not: it counts the
// pod's requests on that node against every pod of lower or equal priority; (2) the
// placeholder is deleted with no grace period, so it is gone at once; (3) the gate is removed
// (and the node affinity narrowed to the node, for an executor). Between (2) and (3) the room
// is held by the nomination, so kube-scheduler cannot give it to another pending pod of lower
// or equal priority; a pod of higher priority could take it, as it could preempt the member
// itself. Pod events reach kube-scheduler in the order they were written, so it knows the
// nomination before it sees the placeholder gone.
//
// Placeholders take the workload's priority: not a lower one (any pod of a higher priority
// preempts a lower one, so ordinary pods would evict them and take the room) nor a higher one
// (which would let Spark preempt what it could not as itself). They take it through a class of
// their own that never preempts (placeholderclass.go).
//
// Placeholders are never counted twice: while their reservation keeps node capacity the
// reservation counts the member (snapshot skips its placeholders); once it stops (the run
// ended or was released, or the reservation timed out), they are deleted, and count as the
// pods they are until they are gone.
//
// A run's executors planned onto one node share one placeholder (nodeGroups): it holds the
// room of them all, and they take its place together, in one swap, once they all exist (Spark
// asks for its executors in batches moments apart). An executor of the group that is not there
// groupWait after the first one arrived does not hold the others back: the swap that lets them
// go gives each missing member a placeholder of its own first, created gated and nominated to
// the node beside the members, so the group's room stays held while its placeholder goes; the
// latecomer later takes its own placeholder's place, as above.
//
// Cost, per application of N initial executors on K nodes: K+1 placeholder creations and K+1
// deletions (each placeholder also bound, started and reported by kube-scheduler and the
// kubelet), and one nomination per member swapped in (up to N+1 status writes), on top of
// advisory's one ungating write per executor; a missing member costs a placeholder of its own.

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/sparkpod"
)

// Enforcement is how the gang scheduler keeps reserved capacity (--gang-enforcement).
type Enforcement string

const (
	// EnforcementAdvisory keeps nothing from pods it did not admit.
	EnforcementAdvisory Enforcement = schedv1alpha1.EnforcementAdvisory
	// EnforcementPlaceholders holds room with placeholder pods.
	EnforcementPlaceholders Enforcement = schedv1alpha1.EnforcementPlaceholders
	// EnforcementPlugin leaves holding room to the scheduler that places pods: spark-scheduler
	// (cmd/spark-scheduler), kube-scheduler with the SparkReservations plugin, which reads the
	// Reservation objects. The gang scheduler itself then acts as with advisory: it writes
	// reservations, gates executors and lets them go onto their planned nodes.
	EnforcementPlugin Enforcement = schedv1alpha1.EnforcementPlugin
)

// ParseEnforcement reads an enforcement's name.
func ParseEnforcement(s string) (Enforcement, error) {
	switch e := Enforcement(s); e {
	case EnforcementAdvisory, EnforcementPlaceholders, EnforcementPlugin:
		return e, nil
	}
	return "", fmt.Errorf("unknown enforcement %q; use %q, %q or %q", s, EnforcementPlaceholders, EnforcementPlugin, EnforcementAdvisory)
}

// DefaultPlaceholderImage is the image placeholder pods run: it does nothing, at no cost.
const DefaultPlaceholderImage = "registry.k8s.io/pause:3.10"

// Labels of placeholder pods.
const (
	// LabelPlaceholder marks a placeholder pod; its value is its Reservation's name.
	LabelPlaceholder = "scheduling.sparkop.dev/placeholder"
	// LabelRun is the run (submission id) the placeholder holds room for.
	LabelRun = "scheduling.sparkop.dev/run"
	// LabelMember is the member of the reservation it holds room for: driver, executor-<id>.
	LabelMember = "scheduling.sparkop.dev/member"
)

var placeholderWritesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "spark_operator_gang_placeholder_writes_total",
	Help: "API writes the placeholders enforcement makes: placeholder pods created and deleted, members nominated to their node.",
}, []string{"verb"})

func init() { ctrlmetrics.Registry.MustRegister(placeholderWritesTotal) }

// placeholderName names the placeholder of member of the reservation resName.
func placeholderName(resName, member string) string { return resName + "-ph-" + member }

// GatePlaceholder holds back a placeholder created for a member of a node group that was not
// there when the others took the group's place, until the group's placeholder is gone.
const GatePlaceholder = "scheduling.sparkop.dev/placeholder"

// nodeGroup is the executor slots a plan gives one node: ids lo to hi (plannedSlots fills the
// nodes one after the other).
type nodeGroup struct {
	node   string
	lo, hi int
}

// member names the placeholder member holding the group's room.
func (g nodeGroup) member() string { return fmt.Sprintf("executors-%d-%d", g.lo, g.hi) }

func (g nodeGroup) size() int { return g.hi - g.lo + 1 }

// nodeGroups are the node groups of r's executor slots, in slot order.
func nodeGroups(r Reservation) []nodeGroup {
	var out []nodeGroup
	for i, node := range plannedSlots(r) {
		if n := len(out); n > 0 && out[n-1].node == node {
			out[n-1].hi = i + 1
			continue
		}
		out = append(out, nodeGroup{node: node, lo: i + 1, hi: i + 1})
	}
	return out
}

func isPlaceholder(p *corev1.Pod) bool { return p.Labels[LabelPlaceholder] != "" }

// placeholderConditions keeps of a placeholder's conditions whether it was found unschedulable
// (its node was taken), for trimPod; nothing of other pods.
func placeholderConditions(p *corev1.Pod) []corev1.PodCondition {
	if !isPlaceholder(p) {
		return nil
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return []corev1.PodCondition{{Type: c.Type, Status: c.Status, Reason: c.Reason, LastTransitionTime: c.LastTransitionTime}}
		}
	}
	return nil
}

// unschedulableSince is when kube-scheduler first found no room for p, in its current verdict;
// false when it has not.
func unschedulableSince(p *corev1.Pod) (time.Time, bool) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// takenAfter is how long kube-scheduler must have found no room for a placeholder before its
// room counts as taken. A verdict may be stale: kube-scheduler may have tried the placeholder
// just before it saw pods leave that the gang scheduler saw leave already, and tries again,
// after a backoff of a second or more, when it sees them go.
const takenAfter = 5 * time.Second

// placeholderPod is the placeholder of one member of r, the reservation of workload key.
func placeholderPod(key core.Key, r Reservation, member, node string, requests corev1.ResourceList, image string) *corev1.Pod {
	resName := ReservationName(key)
	reqs := requests.DeepCopy()
	delete(reqs, corev1.ResourcePods)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: placeholderName(resName, member),
			Labels: map[string]string{LabelPlaceholder: resName, LabelRun: r.SubmissionID, LabelMember: member, LabelQueue: r.Queue},
			// Its node while it is not bound yet: it takes its room there (placedOn).
			Annotations: map[string]string{AnnotationNode: node},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: schedv1alpha1.GroupVersion.String(), Kind: "Reservation",
				Name: resName, UID: r.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{
			// Through kube-scheduler, not nodeName: its fit checks apply, and it counts the
			// placeholder as it binds it. Tolerating every taint is safe: the node was chosen
			// for the member, whose tolerations the gang scheduler checked.
			Affinity:    nodeAffinity(node),
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			// The workload's, until writePlaceholders gives it the placeholders' class of the
			// same value.
			PriorityClassName:             r.PriorityClassName,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			AutomountServiceAccountToken:  ptr.To(false),
			EnableServiceLinks:            ptr.To(false),
			Containers: []corev1.Container{{Name: "placeholder", Image: image,
				Resources: corev1.ResourceRequirements{Requests: reqs}}},
		},
	}
}

func nodeAffinity(node string) *corev1.Affinity {
	spec := &corev1.PodSpec{}
	sparkpod.RequireNodes(spec, node)
	return spec.Affinity
}

// wantedPlaceholder is a placeholder that should exist.
type wantedPlaceholder struct {
	key    core.Key
	res    Reservation
	member string
	node   string
	// requests are one member's, count how many members it holds room for.
	requests corev1.ResourceList
	count    int
	// first orders a reservation's placeholders: 0 for the driver's, else its first
	// executor's id.
	first int
}

// before orders placeholders: by workload, then the driver's, then by first executor.
func (w wantedPlaceholder) before(o wantedPlaceholder) bool {
	if w.key != o.key {
		return core.LessKey(w.key, o.key)
	}
	return w.first < o.first || w.first == o.first && w.member < o.member
}

// driverPlaceholder is the placeholder of r's driver.
func driverPlaceholder(key core.Key, r Reservation) wantedPlaceholder {
	return wantedPlaceholder{key: key, res: r, member: schedv1alpha1.MemberRoleDriver, node: r.Driver, requests: r.DriverRequests, count: 1}
}

// groupPlaceholder is the placeholder shared by the executors of r's node group g.
func groupPlaceholder(key core.Key, r Reservation, g nodeGroup) wantedPlaceholder {
	return wantedPlaceholder{key: key, res: r, member: g.member(), node: g.node, requests: r.ExecutorRequests, count: g.size(), first: g.lo}
}

// executorPlaceholder is the placeholder of r's executor id alone, on node.
func executorPlaceholder(key core.Key, r Reservation, id int, node string) wantedPlaceholder {
	return wantedPlaceholder{key: key, res: r, member: executorMember(id), node: node, requests: r.ExecutorRequests, count: 1, first: id}
}

// need is what the placeholder takes of its node: its members' requests and a pod slot each.
func (w wantedPlaceholder) need() corev1.ResourceList {
	need := corev1.ResourceList{}
	add(need, memberRequests(sparkpod.PodDemand{Requests: w.requests}), int64(w.count))
	return need
}

// pod is the placeholder pod.
func (w wantedPlaceholder) pod(image string) *corev1.Pod {
	return placeholderPod(w.key, w.res, w.member, w.node, w.need(), image)
}

// placeholdersOf lists the placeholders the live reservations of w want, by pod: for the
// members whose pods are not placed yet (not created, or gated), while the reservation keeps
// node capacity and its run has not ended: exactly the members reserveUnbound counts. The
// driver has one of its own, the executors one per node group (nodeGroups) until one of the
// group was given its slot, then one each. Executors without readable ids get none (their
// slots are counted per node).
func placeholdersOf(w world, o snapshotOptions, existing map[types.NamespacedName]*corev1.Pod) map[types.NamespacedName]wantedPlaceholder {
	out := map[types.NamespacedName]wantedPlaceholder{}
	placed := map[boundMember]bool{}
	for i := range w.Pods {
		if m, ok := memberOf(&w.Pods[i]); ok && m.role == v1beta2.SparkRoleDriver && placedOn(&w.Pods[i]) != "" {
			placed[m] = true
		}
	}
	ended := endedRuns(w.Pods)
	executors := executorsOf(w.Pods, w.Seen)
	for i := range w.Workloads {
		wo := &w.Workloads[i]
		r, ok := wo.liveReservation()
		if !ok || r.UID == "" || !r.keepsNodes(o) || wo.ownPlacement {
			continue
		}
		exec := boundMember{wo.Key, r.SubmissionID, v1beta2.SparkRoleExecutor}
		if ended[exec] {
			continue
		}
		resName := ReservationName(wo.Key)
		want := func(w wantedPlaceholder) {
			out[types.NamespacedName{Namespace: wo.Key.Namespace, Name: placeholderName(resName, w.member)}] = w
		}
		if !placed[boundMember{wo.Key, r.SubmissionID, v1beta2.SparkRoleDriver}] {
			want(driverPlaceholder(wo.Key, r))
		}
		ids, ok := slotIDsToGive(r, executors[exec])
		if !ok {
			continue
		}
		toGive := make(map[int]bool, len(ids))
		for _, id := range ids {
			toGive[id] = true
		}
		for _, g := range nodeGroups(r) {
			// The group's placeholder while none of its slots was given or has a placeholder
			// of its own; after that each slot still to give has its own.
			whole := true
			for id := g.lo; id <= g.hi && whole; id++ {
				own := existing[types.NamespacedName{Namespace: wo.Key.Namespace, Name: placeholderName(resName, executorMember(id))}]
				whole = toGive[id] && (own == nil || own.Labels[LabelRun] != r.SubmissionID)
			}
			if whole {
				want(groupPlaceholder(wo.Key, r, g))
				continue
			}
			for id := g.lo; id <= g.hi; id++ {
				if toGive[id] {
					want(executorPlaceholder(wo.Key, r, id, g.node))
				}
			}
		}
	}
	return out
}

// placeholderBook remembers the placeholders created and deleted until the cluster cache
// shows it, so that a lagging cache does not have them created or deleted twice; and those
// being swapped or swapped, for bookLag whatever the cache shows: a cycle must neither delete
// such a placeholder before the swap has nominated its member (it sees the member given from
// the moment the swap is chosen) nor, having read the world before the swap began, create it
// again.
//
// It keeps time by clock, the scheduler's (the wall clock if nil). Every field is read and
// written under mu: the write goroutines note and forget while a cycle asks.
type placeholderBook struct {
	mu    sync.Mutex
	clock clock.PassiveClock
	// ledgers holds, for each ledger, the placeholders noted in it and when.
	ledgers [ledgers]map[types.NamespacedName]time.Time
	// arrived holds when the first member of a node group was seen waiting for the others to
	// take the group's placeholder's place (takeGroups), by that placeholder.
	arrived map[types.NamespacedName]time.Time
	// nodes holds the swap running onto each node (swapOnto).
	nodes map[string]*nodeSwap
	// classes are the placeholders' PriorityClasses.
	classes placeholderClasses
}

// pendingSwap is a member waiting to take its placeholder's place, with what lets it go once
// the placeholder is gone (or says why it could not be).
type pendingSwap struct {
	rel    toUngate
	finish func(toUngate, error)
}

// nodeSwap is the swap running onto one node: first its members make room (makeRoom), then,
// all together, they are let go and awaited bound. Members that arrive while it makes room
// join it; those that arrive while its members are let go wait for the next swap.
type nodeSwap struct {
	letting bool           // its members are being let go: arrivals wait for the next
	making  sync.WaitGroup // groups of it still making room
	members []pendingSwap
	errs    []error // what failed making room, aligned with members
	next    []pendingSwap
}

// swapTurn is what a group arriving for a node does (queueSwaps).
type swapTurn int

const (
	// swapLead: it starts the swap onto the node; the caller makes its room and lets the swap's
	// members go.
	swapLead swapTurn = iota
	// swapJoin: it joins the swap making room there; the caller makes its room, and the swap's
	// lead lets it go with the others.
	swapJoin
	// swapWait: it waits for the next swap, which the lead of the one there runs.
	swapWait
)

// queueSwaps adds group to the swap onto node: it starts one, joins the one making room there,
// or waits for the next (swapTurn). A lead or joiner gets the offset of its members in the
// swap's, for doneMaking.
func (b *placeholderBook) queueSwaps(node string, group []pendingSwap) (*nodeSwap, int, swapTurn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.nodes == nil {
		b.nodes = map[string]*nodeSwap{}
	}
	st := b.nodes[node]
	switch {
	case st == nil:
		st = &nodeSwap{}
		b.nodes[node] = st
		return st, st.joinLocked(group), swapLead
	case st.letting:
		st.next = append(st.next, group...)
		return st, 0, swapWait
	default:
		return st, st.joinLocked(group), swapJoin
	}
}

func (st *nodeSwap) joinLocked(group []pendingSwap) int {
	off := len(st.members)
	st.members = append(st.members, group...)
	st.errs = append(st.errs, make([]error, len(group))...)
	st.making.Add(1)
	return off
}

// doneMaking records what failed making room for the members of st from off.
func (b *placeholderBook) doneMaking(st *nodeSwap, off int, errs []error) {
	b.mu.Lock()
	copy(st.errs[off:], errs)
	b.mu.Unlock()
	st.making.Done()
}

// letGo closes st to arrivals and returns its members, with what failed making room, once all
// have made theirs.
func (b *placeholderBook) letGo(st *nodeSwap) ([]pendingSwap, []error) {
	b.mu.Lock()
	st.letting = true
	b.mu.Unlock()
	st.making.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	return st.members, st.errs
}

// nextSwap starts the next swap onto node after st, with the members that waited for it, or
// ends the swaps there when none did (nil).
func (b *placeholderBook) nextSwap(node string, st *nodeSwap) (*nodeSwap, []pendingSwap) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(st.next) == 0 {
		delete(b.nodes, node)
		return nil, nil
	}
	next := &nodeSwap{}
	next.joinLocked(st.next)
	b.nodes[node] = next
	return next, st.next
}

// bookLag bounds how long the book trusts itself over the cache.
const bookLag = 30 * time.Second

// ledger is one of the book's lists of placeholders.
type ledger int

const (
	bookCreated ledger = iota // created, until the cache shows them
	bookDeleted               // deleted, until the cache lacks them
	bookSwapped               // being swapped or swapped, for bookLag
	ledgers
)

// now is the book's clock's time.
func (b *placeholderBook) now() time.Time {
	if b.clock == nil {
		return time.Now()
	}
	return b.clock.Now()
}

// note records key in l, now.
func (b *placeholderBook) note(l ledger, key types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ledgers[l] == nil {
		b.ledgers[l] = map[types.NamespacedName]time.Time{}
	}
	b.ledgers[l][key] = b.now()
}

// sync forgets what the cache shows: created placeholders it holds, deleted ones it lacks.
func (b *placeholderBook) sync(existing map[types.NamespacedName]*corev1.Pod) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	old := func(at time.Time) bool { return now.Sub(at) > bookLag }
	for key, at := range b.ledgers[bookCreated] {
		if existing[key] != nil || old(at) {
			delete(b.ledgers[bookCreated], key)
		}
	}
	for key, at := range b.ledgers[bookDeleted] {
		if existing[key] == nil || old(at) {
			delete(b.ledgers[bookDeleted], key)
		}
	}
	for key, at := range b.ledgers[bookSwapped] {
		if old(at) {
			delete(b.ledgers[bookSwapped], key)
		}
	}
	for key, at := range b.arrived {
		if old(at) {
			delete(b.arrived, key)
		}
	}
}

// arrivedAt is when a member of the node group held by placeholder was first seen waiting:
// now, when none was before.
func (b *placeholderBook) arrivedAt(placeholder types.NamespacedName, now time.Time) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	if at, ok := b.arrived[placeholder]; ok {
		return at
	}
	if b.arrived == nil {
		b.arrived = map[types.NamespacedName]time.Time{}
	}
	b.arrived[placeholder] = now
	return now
}

// forget takes key out of l.
func (b *placeholderBook) forget(l ledger, key types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.ledgers[l], key)
}

// has reports whether key is in l.
func (b *placeholderBook) has(l ledger, key types.NamespacedName) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.ledgers[l][key]
	return ok
}

// existingPlaceholders are the placeholder pods of w's workloads, by pod.
func existingPlaceholders(w world) map[types.NamespacedName]*corev1.Pod {
	names := map[types.NamespacedName]bool{}
	for i := range w.Workloads {
		names[types.NamespacedName{Namespace: w.Workloads[i].Key.Namespace, Name: ReservationName(w.Workloads[i].Key)}] = true
	}
	out := map[types.NamespacedName]*corev1.Pod{}
	for i := range w.Pods {
		p := &w.Pods[i]
		if isPlaceholder(p) && names[types.NamespacedName{Namespace: p.Namespace, Name: p.Labels[LabelPlaceholder]}] {
			out[client.ObjectKeyFromObject(p)] = p
		}
	}
	return out
}

// reconcilePlaceholders creates the placeholders w wants that do not exist and deletes those of
// its workloads it does not want (their member placed, their run over or planned again, their
// reservation timed out). Placeholders of workloads not in w (another operator's namespaces,
// or a workload deleted) are left to the garbage collector, which deletes them with their
// reservation.
func (s *Scheduler) reconcilePlaceholders(ctx context.Context, w world, o snapshotOptions) error {
	if s.cfg.Enforcement != EnforcementPlaceholders {
		return nil
	}
	existing := existingPlaceholders(w)
	wanted := placeholdersOf(w, o, existing)
	s.placeholders.sync(existing)
	room := podRoom(w)
	var missing []wantedPlaceholder
	for key, want := range wanted {
		if p := existing[key]; p != nil && p.Labels[LabelRun] == want.res.SubmissionID && p.DeletionTimestamp.IsZero() {
			continue
		}
		if existing[key] != nil || s.placeholders.has(bookCreated, key) || s.placeholders.has(bookSwapped, key) {
			// An earlier run's, being deleted; created and not in the cache yet; or just
			// deleted for its member, which the cache may not show let go yet.
			continue
		}
		missing = append(missing, want)
	}
	sort.Slice(missing, func(i, j int) bool { return missing[i].before(missing[j]) })
	var create []*corev1.Pod
	for _, want := range missing {
		// Only into room that is free by the pods there now, as kube-scheduler counts them:
		// where the pods of the applications a run preempted are ending, its placeholders wait
		// for them, so that kube-scheduler never preempts pods itself for a placeholder.
		need := want.need()
		if !fits(room[want.node], need) {
			continue
		}
		add(room[want.node], need, -1)
		create = append(create, want.pod(s.cfg.PlaceholderImage))
	}
	var remove []types.NamespacedName
	for key, p := range existing {
		if want, ok := wanted[key]; (ok && p.Labels[LabelRun] == want.res.SubmissionID) || !p.DeletionTimestamp.IsZero() ||
			s.placeholders.has(bookDeleted, key) || s.placeholders.has(bookSwapped, key) {
			continue
		}
		remove = append(remove, key)
	}
	return s.writePlaceholders(ctx, create, remove)
}

// podRoom is each node's allocatable minus what its pods request (terminating ones included,
// placeholders too, bound or on their way to their node), as kube-scheduler counts it.
func podRoom(w world) map[string]corev1.ResourceList {
	room := make(map[string]corev1.ResourceList, len(w.Nodes))
	for i := range w.Nodes {
		room[w.Nodes[i].Name] = w.Nodes[i].Status.Allocatable.DeepCopy()
	}
	for i := range w.Pods {
		p := &w.Pods[i]
		r, ok := room[placedOn(p)]
		if !ok || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		add(r, requestsOf(p), -1)
	}
	return room
}

// fits reports whether need fits room, by the resources room lists (a node that is not known
// has room: kube-scheduler judges it).
func fits(room, need corev1.ResourceList) bool {
	if room == nil {
		return true
	}
	for name, q := range need {
		if free, ok := room[name]; ok && free.Cmp(q) < 0 {
			return false
		}
	}
	return true
}

// sharedRoom is podRoom shared by the reservations a cycle stores side by side.
type sharedRoom struct {
	mu   sync.Mutex
	room map[string]corev1.ResourceList
}

// take takes need on node if it fits there.
func (r *sharedRoom) take(node string, need corev1.ResourceList) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !fits(r.room[node], need) {
		return false
	}
	if n := r.room[node]; n != nil {
		add(n, need, -1)
	}
	return true
}

// createPlaceholders creates the placeholders of a reservation just stored, nothing of whose run
// exists yet: every member's that fits room now, driver first (reconcilePlaceholders creates
// the others once there is room).
func (s *Scheduler) createPlaceholders(ctx context.Context, key core.Key, r Reservation, room *sharedRoom) error {
	if s.cfg.Enforcement != EnforcementPlaceholders || room == nil {
		return nil
	}
	wanted := []wantedPlaceholder{driverPlaceholder(key, r)}
	for _, g := range nodeGroups(r) {
		wanted = append(wanted, groupPlaceholder(key, r, g))
	}
	var pods []*corev1.Pod
	for _, want := range wanted {
		if room.take(want.node, want.need()) {
			pods = append(pods, want.pod(s.cfg.PlaceholderImage))
		}
	}
	return s.writePlaceholders(ctx, pods, nil)
}

// writePlaceholders creates and deletes placeholders, side by side.
func (s *Scheduler) writePlaceholders(ctx context.Context, create []*corev1.Pod, remove []types.NamespacedName) error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	calls := make(chan struct{}, storeCalls)
	run := func(f func() error) {
		wg.Add(1)
		calls <- struct{}{}
		go func() {
			defer func() { <-calls; wg.Done() }()
			if err := f(); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	classes := map[string]string{}
	for _, p := range create {
		if s.cluster != nil {
			class, ok := classes[p.Spec.PriorityClassName]
			if !ok {
				class = s.placeholders.classes.of(ctx, s.cluster, s.client, p.Spec.PriorityClassName)
				classes[p.Spec.PriorityClassName] = class
			}
			p.Spec.PriorityClassName = class
		}
		run(func() error {
			err := s.client.Create(ctx, p)
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("creating placeholder %s/%s: %w", p.Namespace, p.Name, err)
			}
			placeholderWritesTotal.WithLabelValues("create").Inc()
			s.placeholders.note(bookCreated, client.ObjectKeyFromObject(p))
			return nil
		})
	}
	for _, key := range remove {
		run(func() error { return s.deletePlaceholder(ctx, key) })
	}
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("placeholders: %w (and %d more)", errs[0], len(errs)-1)
	}
	return nil
}

// deletePlaceholder deletes a placeholder with no grace period: it is gone from the API server,
// and its room free, when the call returns.
func (s *Scheduler) deletePlaceholder(ctx context.Context, key types.NamespacedName) error {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	err := s.client.Delete(ctx, p, client.GracePeriodSeconds(0))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting placeholder %s: %w", key, err)
	}
	placeholderWritesTotal.WithLabelValues("delete").Inc()
	s.placeholders.note(bookDeleted, key)
	return nil
}

// swaps reports whether rel, a gated member about to be let go, takes a placeholder's place
// first (see the top of this file): with placeholders, onto its planned node, when its
// placeholder exists (hasPlaceholder: in the cluster cache) or was just created. Without a
// placeholder (none was wanted, or the reservation no longer keeps nodes) it is simply let go.
func (s *Scheduler) swaps(rel toUngate, hasPlaceholder bool) bool {
	if s.cfg.Enforcement != EnforcementPlaceholders || rel.placeholder.Name == "" || rel.node == "" {
		return false
	}
	return hasPlaceholder || s.placeholders.has(bookCreated, rel.placeholder)
}

// makeRoom makes room for the members of group, to be let go onto one node, in their
// placeholders' places: each nominated to the node, then its placeholder deleted, and it
// returns once this process's watch shows their placeholders gone, with what failed for each
// member (aligned with group). The caller then removes the gates: none of the members of a
// swap is let go while a placeholder of another still stands and is counted with that
// member's nomination. Members sharing a placeholder (a node group's) are all nominated before
// it goes; should one nomination fail, it stays, and so do they all, to be tried again.
func (s *Scheduler) makeRoom(ctx context.Context, group []toUngate, calls chan struct{}) []error {
	errs := make([]error, len(group))
	call := func(f func() error) error {
		calls <- struct{}{}
		defer func() { <-calls }()
		return f()
	}
	sharing := map[types.NamespacedName][]int{}
	for i, rel := range group {
		sharing[rel.placeholder] = append(sharing[rel.placeholder], i)
	}
	var wg sync.WaitGroup
	for placeholder, members := range sharing {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var nominated sync.WaitGroup
			for _, i := range members {
				nominated.Add(1)
				go func() {
					defer nominated.Done()
					errs[i] = call(func() error { return s.nominate(ctx, group[i]) })
				}()
			}
			nominated.Wait()
			var failed error
			for _, i := range members {
				if errs[i] != nil {
					failed = errs[i]
				}
			}
			if failed == nil {
				if failed = call(func() error { return s.deletePlaceholder(ctx, placeholder) }); failed == nil {
					s.awaitGone(ctx, placeholder)
				}
			}
			if failed != nil {
				// Its members are tried again, in its place again.
				s.placeholders.forget(bookSwapped, placeholder)
				for _, i := range members {
					errs[i] = failed
				}
			}
		}()
	}
	wg.Wait()
	return errs
}

// nominate sets rel's status.nominatedNodeName to its node (a member gone needs no room).
func (s *Scheduler) nominate(ctx context.Context, rel toUngate) error {
	patch := []byte(fmt.Sprintf(`{"status":{"nominatedNodeName":%q}}`, rel.node))
	err := s.client.Status().Patch(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: rel.pod.Namespace, Name: rel.pod.Name}},
		client.RawPatch(types.MergePatchType, patch))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("nominating %s to node %s: %w", rel.pod, rel.node, err)
	}
	placeholderWritesTotal.WithLabelValues("nominate").Inc()
	s.placeholders.note(bookSwapped, rel.placeholder)
	return nil
}

// groupWait is how long the executors of a node group that arrived wait for the rest of the
// group before they take its placeholder's place without them. Spark creates a run's executors
// in batches a second apart (spark.kubernetes.allocation.batch.delay).
const groupWait = 2 * time.Second

// takeGroups decides, of the executors chosen to be let go, those whose room their node
// group's placeholder holds (they have none of their own: toUngate.shared): they take its place
// together, once all of the group is among them, or groupWait after the first of them was seen
// waiting (seen, not created: the cluster cache may show pods late), the group's missing
// members then given placeholders of their own, gated (missing, by node: made in the same
// swap, see the top of this file). Until then they wait, left out of the executors returned,
// and the ungating loop runs again when the wait is over. The caller holds the ungating lock,
// so no two passes take one group.
func (s *Scheduler) takeGroups(chosen []toUngate, placeholders map[types.NamespacedName]*corev1.Pod, now time.Time) ([]toUngate, map[string][]standIn) {
	if s.cfg.Enforcement != EnforcementPlaceholders {
		return chosen, nil
	}
	arrivals := map[*sharedSlots][]int{} // group → its members among chosen
	for i, rel := range chosen {
		if rel.shared == nil || placeholders[rel.placeholder] != nil || s.placeholders.has(bookCreated, rel.placeholder) {
			continue
		}
		g := placeholders[rel.shared.placeholder]
		if g == nil || g.Labels[LabelRun] != rel.shared.res.SubmissionID || !g.DeletionTimestamp.IsZero() ||
			s.placeholders.has(bookSwapped, rel.shared.placeholder) {
			continue
		}
		arrivals[rel.shared] = append(arrivals[rel.shared], i)
	}
	if len(arrivals) == 0 {
		return chosen, nil
	}
	waiting := map[int]bool{}
	var missing map[string][]standIn
	var recheck time.Duration
	for shared, members := range arrivals {
		here := map[int]bool{}
		for _, i := range members {
			here[chosen[i].id] = true
		}
		first := s.placeholders.arrivedAt(shared.placeholder, now)
		var absent []int
		for id := shared.group.lo; id <= shared.group.hi; id++ {
			if !here[id] {
				absent = append(absent, id)
			}
		}
		if left := groupWait - now.Sub(first); len(absent) > 0 && left > 0 {
			for _, i := range members {
				waiting[i] = true
			}
			if recheck == 0 || left < recheck {
				recheck = left
			}
			continue
		}
		s.placeholders.note(bookSwapped, shared.placeholder)
		for _, i := range members {
			chosen[i].placeholder = shared.placeholder
		}
		for _, id := range absent {
			p := executorPlaceholder(shared.key, shared.res, id, shared.group.node).pod(s.cfg.PlaceholderImage)
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: GatePlaceholder}}
			// So that a pass choosing the latecomer before the cache shows its placeholder
			// takes that placeholder's place, not the group's.
			s.placeholders.note(bookCreated, client.ObjectKeyFromObject(p))
			if missing == nil {
				missing = map[string][]standIn{}
			}
			missing[shared.group.node] = append(missing[shared.group.node], standIn{pod: p, group: shared.placeholder})
		}
	}
	if recheck > 0 {
		time.AfterFunc(recheck, s.triggerUngate)
	}
	out := chosen[:0:0]
	for i, rel := range chosen {
		if !waiting[i] {
			out = append(out, rel)
		}
	}
	return out, missing
}

// standIn is the placeholder of a node group's member missing from its swap, and the group's.
type standIn struct {
	pod   *corev1.Pod
	group types.NamespacedName
}

// withStandIns makes the placeholders of the members of node groups missing from a swap onto
// one node (takeGroups), gated, and returns group with them added: each is nominated to the
// node beside the members, and let go once the group's placeholder is gone
// (releaseStandIn). A group one of whose placeholders could not be made is not swapped: its
// members fail, to be tried again.
func (s *Scheduler) withStandIns(ctx context.Context, group []pendingSwap, missing []standIn) []pendingSwap {
	if len(missing) == 0 {
		return group
	}
	failed := map[types.NamespacedName]error{} // group placeholder → why
	for _, m := range missing {
		if err := s.writePlaceholders(ctx, []*corev1.Pod{m.pod}, nil); err != nil {
			s.placeholders.forget(bookCreated, client.ObjectKeyFromObject(m.pod))
			failed[m.group] = err
			continue
		}
		standInsTotal.Inc()
		key := client.ObjectKeyFromObject(m.pod)
		group = append(group, pendingSwap{rel: toUngate{pod: key, node: m.pod.Annotations[AnnotationNode], placeholder: m.group},
			finish: func(_ toUngate, err error) { s.releaseStandIn(ctx, key, err) }})
	}
	if len(failed) == 0 {
		return group
	}
	out := group[:0:0]
	for _, m := range group {
		if err, ok := failed[m.rel.placeholder]; ok {
			m.finish(m.rel, err)
			continue
		}
		out = append(out, m)
	}
	for g := range failed {
		s.placeholders.forget(bookSwapped, g)
	}
	return out
}

// releaseStandIn lets a missing member's placeholder go onto its node once the group's
// placeholder is gone. Should that fail, it stays gated, its room held by its nomination
// until its member takes its place. Made for a swap that failed (swapErr), it is deleted: the
// group's placeholder still stands, and its members try again.
func (s *Scheduler) releaseStandIn(ctx context.Context, key types.NamespacedName, swapErr error) {
	if swapErr != nil {
		logPlaceholderError(ctx, s.deletePlaceholder(ctx, key))
		return
	}
	err := s.client.Patch(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}},
		client.RawPatch(types.JSONPatchType, []byte(`[{"op":"remove","path":"/spec/schedulingGates"}]`)))
	if err != nil && !apierrors.IsNotFound(err) {
		logPlaceholderError(ctx, fmt.Errorf("releasing placeholder %s: %w", key, err))
	}
}

// awaitBound waits (at most swapSettle) until the cluster cache shows the members of group that
// were let go (no error) bound to a node.
func (s *Scheduler) awaitBound(ctx context.Context, group []toUngate, errs []error) {
	if s.cluster == nil {
		return
	}
	deadline := time.Now().Add(swapSettle)
	for i := 0; i < len(group) && time.Now().Before(deadline); {
		if errs[i] != nil {
			i++
			continue
		}
		p := &corev1.Pod{}
		err := s.cluster.Get(ctx, group[i].pod, p)
		if apierrors.IsNotFound(err) || p.Spec.NodeName != "" || ctx.Err() != nil {
			i++
			continue
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// swapSettle bounds how long a swap waits for the cluster cache to show the placeholder gone.
const swapSettle = 2 * time.Second

// awaitGone waits (at most swapSettle) until the cluster cache shows pod gone. kube-scheduler
// hears of pods through a watch like the cache's, and takes a deletion into its node
// accounting apart from its queue: a member let go before it counts the deletion is found
// short of room (its nomination then dropped) and tried again after a backoff. Letting it go
// once this process's own watch has delivered the deletion makes that rare.
func (s *Scheduler) awaitGone(ctx context.Context, pod types.NamespacedName) {
	if s.cluster == nil {
		return
	}
	deadline := time.Now().Add(swapSettle)
	for time.Now().Before(deadline) {
		err := s.cluster.Get(ctx, pod, &corev1.Pod{})
		if apierrors.IsNotFound(err) || ctx.Err() != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// driversToUngate lets go the gated drivers (a session's server too) of w, as executorsToUngate
// does executors: a driver of a live reservation's run onto its planned node, in its
// placeholder's place; any other unconfined (its template already names the node it was
// planned on, if any).
func driversToUngate(w world) []toUngate {
	reservations := map[core.Key]Reservation{}
	for i := range w.Workloads {
		if r, ok := w.Workloads[i].liveReservation(); ok {
			reservations[w.Workloads[i].Key] = r
		}
	}
	var out []toUngate
	for i := range w.Pods {
		p := &w.Pods[i]
		m, ok := memberOf(p)
		if !ok || m.role != v1beta2.SparkRoleDriver || !hasGate(p) || !p.DeletionTimestamp.IsZero() {
			continue
		}
		key := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
		r, ok := reservations[m.app]
		if !ok || r.SubmissionID != m.submission {
			out = append(out, toUngate{pod: key})
			continue
		}
		out = append(out, toUngate{pod: key, node: r.Driver,
			placeholder: types.NamespacedName{Namespace: p.Namespace, Name: placeholderName(ReservationName(m.app), schedv1alpha1.MemberRoleDriver)}})
	}
	return out
}

// liveHolding are the live reservations keeping node capacity, by Reservation, with their run:
// their placeholders count through them, not as pods.
func liveHolding(w world, o snapshotOptions) map[types.NamespacedName]string {
	out := map[types.NamespacedName]string{}
	for i := range w.Workloads {
		if r, ok := w.Workloads[i].liveReservation(); ok && r.keepsNodes(o) {
			out[types.NamespacedName{Namespace: w.Workloads[i].Key.Namespace, Name: ReservationName(w.Workloads[i].Key)}] = r.SubmissionID
		}
	}
	return out
}

// countedByReservation reports whether p is a placeholder its reservation counts (liveHolding).
func countedByReservation(p *corev1.Pod, holding map[types.NamespacedName]string) bool {
	if !isPlaceholder(p) {
		return false
	}
	run, ok := holding[types.NamespacedName{Namespace: p.Namespace, Name: p.Labels[LabelPlaceholder]}]
	return ok && run == p.Labels[LabelRun]
}

// placeholdersHold says, for each live reservation keeping nodes whose driver is not created,
// whether all its placeholders hold their nodes (bound there): "" when they do, else why not;
// taken lists those one of whose placeholders kube-scheduler found no room for.
//
// A placeholder kube-scheduler found no room for, on a node where pods are ending (those of the
// applications this run preempted, say), waits for them as a driver does (startgate.go): the
// room is on its way, not taken.
func placeholdersHold(w world, o snapshotOptions) (waiting map[core.Key]string, taken map[core.Key]string, recheck time.Duration) {
	waiting, taken = map[core.Key]string{}, map[core.Key]string{}
	existing := existingPlaceholders(w)
	wanted := placeholdersOf(w, o, existing)
	ending := map[string]bool{}
	for i := range w.Pods {
		if p := &w.Pods[i]; !p.DeletionTimestamp.IsZero() && placedOn(p) != "" {
			ending[placedOn(p)] = true
		}
	}
	for key, want := range wanted {
		p := existing[key]
		if p == nil || p.Labels[LabelRun] != want.res.SubmissionID || p.Spec.NodeName != want.node {
			waiting[want.key] = placeholderReason
		}
		if p == nil || p.Spec.NodeName != "" || ending[want.node] {
			continue
		}
		if since, ok := unschedulableSince(p); ok {
			if left := takenAfter - o.Now.Sub(since); left > 0 {
				if recheck == 0 || left < recheck {
					recheck = left
				}
			} else {
				taken[want.key] = want.node
			}
		}
	}
	return waiting, taken, recheck
}

// placeholderReason is what a workload whose placeholders are not all on their nodes yet shows,
// should its status be written (it is not woken to show it: it lasts moments).
const placeholderReason = "admitted; starting once placeholders hold the room planned for it"

// takenReason is what a workload planned again because room planned for it was taken before it
// was held (by its placeholder, or by the pod scheduler with the plugin enforcement) shows.
func takenReason(node string) string {
	return fmt.Sprintf("planned again: the room planned on %s was taken by other pods before it was held", node)
}

// logPlaceholderError logs a placeholder write that failed; the next cycle tries again.
func logPlaceholderError(ctx context.Context, err error) {
	if err != nil {
		log.FromContext(ctx).Error(err, "placeholders could not all be written; retrying on the next cycle")
	}
}
