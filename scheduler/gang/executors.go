/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"maps"
	"slices"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/scheduler/gang/placeholder"
	"github.com/sparkop/spark-operator/scheduler/gang/release"
	"github.com/sparkop/spark-operator/scheduler/reservation"
	"github.com/sparkop/spark-operator/sparkpod"
)

// GateExecutor holds an admitted application's executors back from the kube-scheduler until
// the gang scheduler has chosen each one's node: package release's Gate.
const GateExecutor = release.Gate

// AnnotationNode records the node the gang scheduler gave a gated executor.
const AnnotationNode = reservation.AnnotationNode

// executorPods are one submission's executor pods, as the gang scheduler reads them.
type executorPods struct {
	gated []gatedPod       // waiting for the gang scheduler to give them a node, by id then name
	given map[string]int32 // node → pods given that node (any phase, not being deleted)
	live  map[string]int32 // node → executors alive there: released or bound, not ended
	// present are the executor ids (spark-exec-id) of the pods, in any state; seen those the
	// scheduler saw before (executorIDs), whose pods may since have been deleted. Spark numbers
	// executors from 1 in the order it creates them, but its pods reach the cache in any order:
	// an id never seen is one whose pod is not there yet, not one deleted.
	present, seen map[int]bool
	// unnumbered: some pod has no readable executor id, so planned slots are counted per node
	// (see planSlots) rather than given by id.
	unnumbered bool
	// waiting are the ids of executors neither gated nor on a node yet, nor ended: a variant's
	// executors that kube-scheduler places itself (Placement), on their way to a planned node.
	waiting map[int]bool
}

// executorIDs are executor ids by submission.
type executorIDs map[boundMember]map[int]bool

// seenExecutors remembers the executor ids the scheduler has seen in the cluster cache, per
// current run, so that the slot of an executor whose pod was deleted is told from that of one
// whose pod is not in the cache yet (slotsToGive). It is kept in memory only: after a restart
// the slots of executors deleted before it are kept again, until the reservation timeout at
// most, which wastes capacity for a while but never promises it twice.
//
// Every read takes what is remembered, so it is copy-on-write: ids is never changed in place,
// only replaced, and before hands it out as it is.
type seenExecutors struct {
	mu  sync.Mutex
	ids executorIDs
}

// before returns what is remembered, to be taken before the pods of a world are listed. Every
// id in it was seen in a list of the same cache no newer than the one that follows, which
// shows that pod too unless it has been deleted since. Taken after, it could hold the id of a
// pod created after the world's list: neither kept as a slot nor counted as a pod. The result
// is shared: read it, never change it.
func (s *seenExecutors) before() executorIDs {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ids
}

// remember adds the ids of w's executor pods and forgets the runs that are no longer a
// workload's current one, replacing what is remembered only when that changes it.
func (s *seenExecutors) remember(w world) {
	s.mu.Lock()
	defer s.mu.Unlock()
	current := make(map[boundMember]bool, len(w.Workloads))
	for i := range w.Workloads {
		current[boundMember{w.Workloads[i].Key, w.Workloads[i].Run, v1beta2.SparkRoleExecutor}] = true
	}
	var next executorIDs             // a copy of s.ids, once something changes
	cloned := map[boundMember]bool{} // the runs whose ids next holds a copy of
	change := func() {
		if next == nil {
			next = make(executorIDs, len(s.ids))
			for m, ids := range s.ids {
				if current[m] {
					next[m] = ids
				}
			}
		}
	}
	for m := range s.ids {
		if !current[m] {
			change()
			break
		}
	}
	for i := range w.Pods {
		p := &w.Pods[i]
		m, ok := memberOf(p)
		if !ok || m.role != v1beta2.SparkRoleExecutor || !current[m] {
			continue
		}
		id, numbered := sparkpod.ExecutorID(p.Name, p.Labels)
		if !numbered || s.ids[m][id] || next[m][id] {
			continue
		}
		change()
		if !cloned[m] {
			next[m] = maps.Clone(next[m])
			if next[m] == nil {
				next[m] = map[int]bool{}
			}
			cloned[m] = true
		}
		next[m][id] = true
	}
	if next != nil {
		s.ids = next
	}
}

// gatedPod is a gated executor pod: its name and executor id (0 when unreadable).
type gatedPod struct {
	name string
	id   int
}

// executorsOf groups the executor pods of applications and sessions by submission, with the
// ids seen of each.
func executorsOf(pods []corev1.Pod, seen executorIDs) map[boundMember]*executorPods {
	out := map[boundMember]*executorPods{}
	for i := range pods {
		p := &pods[i]
		m, ok := memberOf(p)
		if !ok || m.role != v1beta2.SparkRoleExecutor {
			continue
		}
		ep := out[m]
		if ep == nil {
			ep = &executorPods{given: map[string]int32{}, live: map[string]int32{}, present: map[int]bool{}, seen: seen[m]}
			out[m] = ep
		}
		id, numbered := sparkpod.ExecutorID(p.Name, p.Labels)
		if numbered {
			ep.present[id] = true
		}
		ep.unnumbered = ep.unnumbered || !numbered
		if release.Gated(p) {
			if p.DeletionTimestamp.IsZero() {
				ep.gated = append(ep.gated, gatedPod{name: p.Name, id: id})
			}
			continue
		}
		if n := p.Annotations[AnnotationNode]; n != "" && p.DeletionTimestamp.IsZero() {
			ep.given[n]++
		}
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			on := placedOn(p)
			ep.live[on]++
			if on == "" && numbered && p.DeletionTimestamp.IsZero() {
				if ep.waiting == nil {
					ep.waiting = map[int]bool{}
				}
				ep.waiting[id] = true
			}
		}
	}
	for _, ep := range out {
		sort.Slice(ep.gated, func(i, j int) bool {
			a, b := ep.gated[i], ep.gated[j]
			return a.id < b.id || a.id == b.id && a.name < b.name
		})
	}
	return out
}

// placedOn is the node a pod takes capacity on: the one it is bound to, else the one the gang
// scheduler released it to ("" if neither, or if it is still gated).
func placedOn(p *corev1.Pod) string {
	if p.Spec.NodeName != "" || release.Gated(p) {
		return p.Spec.NodeName
	}
	return p.Annotations[AnnotationNode]
}

// plannedSlots lists res's planned executor slots in order: nodes by name, a node planned for
// k executors k times. The executor of id i (from 1) is the plan's i-th: Spark numbers
// executors in the order it creates them, so ids 1 to the plan's count are the initial gang,
// and any later id (a replacement, or one dynamic allocation added) is beyond the plan.
func plannedSlots(res Reservation) []string {
	var slots []string
	for _, n := range slices.Sorted(maps.Keys(res.Executors)) {
		for range res.Executors[n] {
			slots = append(slots, n)
		}
	}
	return slots
}

// planSlots gives each of ep's gated executors its planned node, "" for one beyond the plan
// (aligned with ep.gated). An executor of id i up to the plan's count gets the i-th planned
// slot, which stops being kept for anyone once it was given, even when its pod is deleted
// later (Spark replaces it with a higher id). Without readable ids (ep.unnumbered) slots are
// counted per node: a node planned for k executors has a slot while fewer than k pods were
// given it, so a deleted pod's slot opens again. A plan has slots only while its reservation
// keeps node capacity (keepsNodes): once that lapsed, the planned nodes' capacity may have gone
// to others, and a slot given there would leave the executor unschedulable; so every gated
// executor is then beyond the plan, released by a cycle onto free capacity.
func planSlots(res Reservation, ep *executorPods, o snapshotOptions) []string {
	nodes := make([]string, len(ep.gated))
	if !res.keepsNodes(o) {
		return nodes
	}
	slots := plannedSlots(res)
	if !ep.unnumbered {
		for i, g := range ep.gated {
			if g.id <= len(slots) {
				nodes[i] = slots[g.id-1]
			}
		}
		return nodes
	}
	given := maps.Clone(ep.given)
	i := 0
	for _, n := range slots {
		if given[n] > 0 {
			given[n]--
			continue
		}
		if i == len(nodes) {
			break
		}
		nodes[i] = n
		i++
	}
	return nodes
}

// slotsToGive lists the planned nodes of res's slots not given yet, once per slot: those of
// executor ids still gated, not gated but on no node yet (a variant's executors, which
// kube-scheduler places: see Placement), or never seen (not created yet, or created and not in
// the cache yet); false when ep's executors are unnumbered (the caller then counts the pods given each
// node). A slot whose executor was seen released stays taken when the pod ends or is deleted,
// so it is never kept twice. Judging "not created yet" by the highest id seen instead left
// the slots of executors created side by side, whose pods reach the cache out of order,
// counted nowhere for a moment: long enough for a cycle to admit another application there.
func slotsToGive(res Reservation, ep *executorPods) ([]string, bool) {
	ids, ok := slotIDsToGive(res, ep)
	if !ok {
		return nil, false
	}
	slots := plannedSlots(res)
	nodes := make([]string, 0, len(ids))
	for _, id := range ids {
		nodes = append(nodes, slots[id-1])
	}
	return nodes, true
}

// slotIDsToGive is slotsToGive by executor id (from 1): the ids whose slot is not given yet.
func slotIDsToGive(res Reservation, ep *executorPods) ([]int, bool) {
	if ep == nil {
		ep = &executorPods{}
	}
	if ep.unnumbered {
		return nil, false
	}
	gated := map[int]bool{}
	for _, g := range ep.gated {
		gated[g.id] = true
	}
	var ids []int
	for i := range plannedSlots(res) {
		if id := i + 1; gated[id] || ep.waiting[id] || !ep.present[id] && !ep.seen[id] {
			ids = append(ids, id)
		}
	}
	return ids, true
}

// plannedCount is how many of ep's gated executors planSlots gives a planned node.
func plannedCount(res Reservation, ep *executorPods, o snapshotOptions) int32 {
	var k int32
	for _, n := range planSlots(res, ep, o) {
		if n != "" {
			k++
		}
	}
	return k
}

// dynamicOf says what ep's executors do beyond res's plan, for the decision core: executors
// alive beyond the plan's count (per node; those on no known node under ""), how many more
// may start without more quota, and how many gated executors the plan has no slot for.
func dynamicOf(res Reservation, ep *executorPods, o snapshotOptions) core.Dynamic {
	if ep == nil {
		return core.Dynamic{}
	}
	var planned, alive int32
	for _, k := range res.Executors {
		planned += k
	}
	for _, k := range ep.live {
		alive += k
	}
	slots := plannedCount(res, ep, o)
	d := core.Dynamic{Asking: int32(len(ep.gated)) - slots, Spare: max(planned-alive-slots, 0)}
	extra := alive - planned
	for _, n := range slices.Sorted(maps.Keys(ep.live)) {
		if over := min(ep.live[n]-res.Executors[n], extra); n != "" && over > 0 {
			if d.Extra == nil {
				d.Extra = map[string]int32{}
			}
			d.Extra[n] = over
			extra -= over
		}
	}
	if extra > 0 {
		if d.Extra == nil {
			d.Extra = map[string]int32{}
		}
		d.Extra[""] += extra
	}
	return d
}

// endedRuns are the runs whose driver (a session's server) has ended, named by their
// executors' member: the run is over, whether or not its controller has recorded it yet.
func endedRuns(pods []corev1.Pod) map[boundMember]bool {
	var ended map[boundMember]bool
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			continue
		}
		if m, ok := memberOf(p); ok && m.role == v1beta2.SparkRoleDriver {
			if ended == nil {
				ended = map[boundMember]bool{}
			}
			m.role = v1beta2.SparkRoleExecutor
			ended[m] = true
		}
	}
	return ended
}

// toUngate is one gated executor (or driver) to let go, confined to node (none: ""), in the
// place of placeholder (none: "").
type toUngate struct {
	pod         types.NamespacedName
	node        string
	placeholder types.NamespacedName
	// id is the executor's id (0: none read), shared the node group of its planned slot, whose
	// placeholder holds its room while it has none of its own (nil: not planned by id).
	id     int
	shared *sharedSlots
}

// sharedSlots is one node group of a run's plan (nodeGroups), with its workload and
// reservation, which a placeholder of one of its members is made from.
type sharedSlots struct {
	key         core.Key
	res         Reservation
	group       placeholder.NodeGroup
	placeholder types.NamespacedName
}

// executorsToUngate decides which gated executors to let go, and where: an admitted
// workload's executors take its planned nodes' slots first (while its reservation keeps
// them, at o.Now), then the nodes the cycle released executors beyond the plan to
// (Outcome.Ungated); the rest stay gated. An executor whose workload holds no reservation
// for its submission any more, or whose run's driver has ended (the controller may not have
// recorded it yet), is let go unconfined: a late executor of a run that is over never takes
// the capacity its plan kept, which others may use now.
func executorsToUngate(w world, released map[core.Key][]string, o snapshotOptions) []toUngate {
	reservations := map[core.Key]Reservation{}
	for i := range w.Workloads {
		if r, ok := w.Workloads[i].liveReservation(); ok {
			reservations[w.Workloads[i].Key] = r
		}
	}
	ended := endedRuns(w.Pods)
	var out []toUngate
	for m, ep := range executorsOf(w.Pods, w.Seen) {
		res, ok := reservations[m.app]
		if !ok || res.SubmissionID != m.submission || ended[m] {
			for _, g := range ep.gated {
				out = append(out, toUngate{pod: types.NamespacedName{Namespace: m.app.Namespace, Name: g.name}})
			}
			continue
		}
		beyond := released[m.app]
		var groups []*sharedSlots
		for i, node := range planSlots(res, ep, o) {
			rel := toUngate{pod: types.NamespacedName{Namespace: m.app.Namespace, Name: ep.gated[i].name}, node: node}
			if node == "" {
				if len(beyond) == 0 {
					continue
				}
				rel.node, beyond = beyond[0], beyond[1:]
			} else if id := ep.gated[i].id; !ep.unnumbered && id > 0 {
				resName := ReservationName(m.app)
				rel.id = id
				rel.placeholder = types.NamespacedName{Namespace: m.app.Namespace, Name: placeholder.Name(resName, executorMember(id))}
				if groups == nil {
					for _, g := range nodeGroups(res) {
						groups = append(groups, &sharedSlots{key: m.app, res: res, group: g,
							placeholder: types.NamespacedName{Namespace: m.app.Namespace, Name: placeholder.Name(resName, g.Member())}})
					}
				}
				for _, g := range groups {
					if g.group.Lo <= id && id <= g.group.Hi {
						rel.shared = g
					}
				}
			}
			out = append(out, rel)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return core.LessKey(core.Key{NamespacedName: out[i].pod}, core.Key{NamespacedName: out[j].pod})
	})
	return out
}

// PlacePod gives an executor being created its planned node, as a cycle would once it saw the
// pod gated (executorsToUngate), sparing it that wait: the executor of id i of the run a
// reservation is for takes the plan's i-th slot, the same one planSlots gives it, while the
// reservation keeps node capacity. The pod-mutating webhook calls it (scheduler.PodPlacer),
// possibly in another process than the cycles; it reads nothing but pod and owner. Anything
// else keeps its gate for a cycle to decide: no gang gate, a run the owner's reservation is
// not for (or one preempted or being deleted), a run the owner shows over (its driver or
// server ended, the run failed, completed, is suspended or invalidated: a late executor of it
// must not take its plan's capacity), an id beyond the plan or unreadable, a reservation past
// its timeout.
//
// With placeholders it places nothing: an executor takes its placeholder's place in one step
// (swapOnto) that only the gang scheduler's ungating takes.
func (s *Scheduler) PlacePod(pod *corev1.Pod, owner client.Object) bool {
	if s.cfg.Enforcement == EnforcementPlaceholders || !release.Gated(pod) {
		return false
	}
	if m, ok := memberOf(pod); !ok || m.role != v1beta2.SparkRoleExecutor {
		return false
	}
	res, ok := s.reservationForPod(owner)
	if !ok {
		return false
	}
	placed := placeAtCreation(pod, owner, res, snapshotOptions{ReservationTimeout: s.cfg.ReservationTimeout, Now: s.cfg.Clock.Now()})
	if placed {
		placedAtCreationTotal.Inc()
	}
	return placed
}

// reservationForPod reads owner's reservation for the webhook: from the cluster cache where
// the gang scheduler runs in this process, else from the API server (a webhook of its own,
// which reads it only for gated executors), or as the cycle loop just stored it.
func (s *Scheduler) reservationForPod(owner client.Object) (Reservation, bool) {
	key := core.Key{Kind: scheduler.KindApplication, NamespacedName: types.NamespacedName{Namespace: owner.GetNamespace(), Name: owner.GetName()}}
	if _, ok := owner.(*v1alpha1.SparkConnect); ok {
		key.Kind = scheduler.KindSession
	}
	var reader client.Reader = s.cluster
	if s.cluster == nil {
		reader = s.cfg.Reader
	}
	if reader != nil {
		var stored schedv1alpha1.Reservation
		if err := reader.Get(s.reads, client.ObjectKey{Namespace: key.Namespace, Name: ReservationName(key)}, &stored); err == nil {
			if res, ok := reservationFrom(&stored, owner); ok {
				return res, true
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if res, ok := s.stored[key]; ok {
		return res, true
	}
	return legacyReservation(owner)
}

func placeAtCreation(pod *corev1.Pod, owner client.Object, res Reservation, o snapshotOptions) bool {
	if !release.Gated(pod) {
		return false
	}
	node, ok := plannedSlotOf(pod, owner, res, o)
	return ok && release.Ungate(pod, node)
}

// plannedSlotOf is the planned node of the executor pod being created: the plan's i-th slot
// for the executor of id i of the run owner's reservation is for, while that reservation keeps
// node capacity; false for anything else (see PlacePod).
func plannedSlotOf(pod *corev1.Pod, owner client.Object, res Reservation, o snapshotOptions) (string, bool) {
	if !owner.GetDeletionTimestamp().IsZero() || !ownerHolds(owner) {
		return "", false
	}
	m, ok := memberOf(pod)
	if !ok || m.role != v1beta2.SparkRoleExecutor {
		return "", false
	}
	if res.SubmissionID != m.submission || owner.GetAnnotations()[scheduler.AnnotationPreempted] == m.submission || !res.keepsNodes(o) {
		return "", false
	}
	id, numbered := sparkpod.ExecutorID(pod.Name, pod.Labels)
	slots := plannedSlots(res)
	if !numbered || id < 1 || id > len(slots) {
		return "", false
	}
	return slots[id-1], true
}
