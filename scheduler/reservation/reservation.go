/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package reservation reads the gang scheduler's Reservation objects as a pod scheduler that
// honours them must: which pod is which member of which run, and what room a node still holds
// for members whose pods are not on it yet. The gang scheduler (scheduler/gang) and the
// kube-scheduler plugin (cmd/spark-scheduler) both read pods through it, so they cannot
// disagree on either. It depends on the API types alone, so that the plugin's module stays
// small.
package reservation

import (
	"iter"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// AnnotationNode records the node the gang scheduler released a gated member onto.
const AnnotationNode = "scheduling.sparkop.dev/node"

// LabelQueue is set on the pods of an admitted application, its placeholders included: the
// queue it was admitted from.
const LabelQueue = "scheduling.sparkop.dev/queue"

// The kinds of workload a reservation is for (schedv1alpha1.WorkloadReference.Kind).
const (
	KindApplication = "SparkApplication"
	KindSession     = "SparkConnect"
)

// Held reports whether r says the pod scheduler holds its room: its Held condition is true for
// its current generation (the plan the pod scheduler read is the plan there is).
func Held(r *schedv1alpha1.Reservation) bool {
	c := meta.FindStatusCondition(r.Status.Conditions, schedv1alpha1.ConditionHeld)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == r.Generation
}

// ReasonRoomTaken is the reason of a Held condition that is false because, by the time the pod
// scheduler read the reservation, pods it had placed took room planned on a node: the plan no
// longer fits there, and the gang scheduler plans the run again.
const ReasonRoomTaken = "RoomTaken"

// TakenMessage is the message of a Held condition of reason ReasonRoomTaken about node.
func TakenMessage(node string) string {
	return takenPrefix + node + takenSuffix
}

const (
	takenPrefix = "the room planned on "
	takenSuffix = " was taken by pods placed before the pod scheduler held it"
)

// TakenOn is the node r's Held condition says room was taken on, for its current generation
// (TakenMessage); false when it does not say so.
func TakenOn(r *schedv1alpha1.Reservation) (string, bool) {
	c := meta.FindStatusCondition(r.Status.Conditions, schedv1alpha1.ConditionHeld)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonRoomTaken || c.ObservedGeneration != r.Generation {
		return "", false
	}
	node, ok := strings.CutPrefix(c.Message, takenPrefix)
	if !ok {
		return "", false
	}
	if node, ok = strings.CutSuffix(node, takenSuffix); !ok || node == "" {
		return "", false
	}
	return node, true
}

// Member is what a pod the operator launched is to the gang scheduler: a member of one run of
// one workload, in one role.
type Member struct {
	// Kind and Workload name the SparkApplication or SparkConnect, in the pod's namespace.
	Kind, Workload string
	// Run is the submission the pod belongs to.
	Run string
	// Role is the pod's spark-role: driver (a session's server too) or executor.
	Role string
}

// MemberOf reads p's labels; false for a pod of no application or session.
func MemberOf(p *corev1.Pod) (Member, bool) {
	role := p.Labels[v1beta2.SparkRoleLabel]
	var m Member
	switch {
	case p.Labels[v1alpha1.LabelConnectName] != "":
		m.Kind, m.Workload = KindSession, p.Labels[v1alpha1.LabelConnectName]
		if role == v1alpha1.SparkRoleConnectServer {
			role = v1beta2.SparkRoleDriver
		}
	case p.Labels[v1beta2.LabelAppName] != "":
		m.Kind, m.Workload = KindApplication, p.Labels[v1beta2.LabelAppName]
	default:
		return Member{}, false
	}
	m.Run, m.Role = p.Labels[v1beta2.LabelSubmissionID], role
	return m, true
}

// Name is the name of the Reservation of a workload: an application's own name, a session's
// name with ".sparkconnect" (an application and a session may share a name).
func Name(kind, workload string) string {
	if kind == KindSession {
		return workload + ".sparkconnect"
	}
	return workload
}

// DefaultTimeout is how long after its admission a reservation holds room for members still
// unbound, unless told otherwise: the gang scheduler's --gang-reservation-timeout and the
// plugin's reservationTimeout, which must agree.
const DefaultTimeout = 5 * time.Minute

// Ledger holds the reservations a pod scheduler honours, indexed by node. It is safe for
// concurrent use: an informer writes it while scheduling cycles read it.
type Ledger struct {
	// Timeout is how long after its admission a reservation holds room for members still
	// unbound (the gang scheduler's --gang-reservation-timeout); 0 or less: for ever.
	Timeout time.Duration

	mu     sync.RWMutex
	byName map[types.NamespacedName]*entry
	byNode map[string]map[types.NamespacedName]*entry
	// booked are the member pods placed by the scheduler that reads the ledger (Book), by
	// reservation: they keep their member's place after they end and leave the node.
	booked map[types.NamespacedName]*bookings
}

// bookings are the pods placed into one run's reservation: for each, where, in which role.
type bookings struct {
	run  string
	pods map[types.UID]booking
}

type booking struct{ node, role string }

// entry is one reservation as the ledger keeps it.
type entry struct {
	name       types.NamespacedName
	run        string
	generation int64
	admitted   time.Time
	driver     string                      // the driver's planned node
	slots      map[string]map[string]*slot // node → role → the members planned there
	judged     Judgement
}

// Judgement is what the pod scheduler found of a reservation's plan (its Held condition).
type Judgement int

const (
	// Unjudged: not yet judged. Its room is held from every pod but the members of held
	// reservations: a plan the gang scheduler made from a lagging cache may not fit, and must
	// not keep out the members of plans that were found to fit.
	Unjudged Judgement = iota
	// JudgedHeld: the plan fits; its room is held from every pod but its members.
	JudgedHeld
	// JudgedTaken: the plan did not fit (ReasonRoomTaken); it holds nothing, its run is planned
	// again.
	JudgedTaken
)

// judgementOf reads r's Held condition for its current generation.
func judgementOf(r *schedv1alpha1.Reservation) Judgement {
	if Held(r) {
		return JudgedHeld
	}
	if _, taken := TakenOn(r); taken {
		return JudgedTaken
	}
	return Unjudged
}

// slot is the members of one role planned on one node: what each requests.
type slot struct{ requests []corev1.ResourceList }

// Set records r, or replaces what the ledger had under its name.
func (l *Ledger) Set(r *schedv1alpha1.Reservation) {
	e := &entry{name: types.NamespacedName{Namespace: r.Namespace, Name: r.Name}, run: r.Spec.Run, generation: r.Generation,
		admitted: r.Spec.Admitted.Time, slots: map[string]map[string]*slot{}, judged: judgementOf(r)}
	for _, m := range r.Spec.Members {
		if m.Role == schedv1alpha1.MemberRoleDriver {
			e.driver = m.Node
		}
		roles := e.slots[m.Node]
		if roles == nil {
			roles = map[string]*slot{}
			e.slots[m.Node] = roles
		}
		s := roles[m.Role]
		if s == nil {
			s = &slot{}
			roles[m.Role] = s
		}
		s.requests = append(s.requests, m.Requests)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if old := l.byName[e.name]; old != nil && old.run == e.run && old.generation == e.generation && e.judged == Unjudged {
		// Judged here (Judge) before the object says so.
		e.judged = old.judged
	}
	if old := l.byName[e.name]; old != nil {
		// Replaced, not removed: the pods booked into it keep their places.
		b := l.booked[e.name]
		l.removeLocked(e.name)
		if b != nil {
			l.booked[e.name] = b
		}
	}
	if l.byName == nil {
		l.byName, l.byNode = map[types.NamespacedName]*entry{}, map[string]map[types.NamespacedName]*entry{}
	}
	l.byName[e.name] = e
	if b := l.booked[e.name]; b != nil && b.run != e.run {
		delete(l.booked, e.name) // a new run: the old one's pods take none of its places
	}
	for node := range e.slots {
		if l.byNode[node] == nil {
			l.byNode[node] = map[types.NamespacedName]*entry{}
		}
		l.byNode[node][e.name] = e
	}
}

// Judge records the judgement of the generation of the reservation name, ahead of its object
// saying so; nothing when the ledger holds another generation.
func (l *Ledger) Judge(name types.NamespacedName, generation int64, j Judgement) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.byName[name]; e != nil && e.generation == generation {
		e.judged = j
	}
}

// Judged is the generation of the reservation name the ledger holds, and what was found of it;
// false when it holds none of that name.
func (l *Ledger) Judged(name types.NamespacedName) (int64, Judgement, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if e := l.byName[name]; e != nil {
		return e.generation, e.judged, true
	}
	return 0, Unjudged, false
}

// Remove forgets the reservation of that name.
func (l *Ledger) Remove(name types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.removeLocked(name)
}

func (l *Ledger) removeLocked(name types.NamespacedName) {
	e, ok := l.byName[name]
	if !ok {
		return
	}
	delete(l.byName, name)
	delete(l.booked, name)
	for node := range e.slots {
		delete(l.byNode[node], name)
		if len(l.byNode[node]) == 0 {
			delete(l.byNode, node)
		}
	}
}

// Holding is the room a node holds for members whose pods are not on it.
type Holding struct {
	// Requests is what those members request, summed.
	Requests corev1.ResourceList
	// Reservations names the reservations holding it ("namespace/name"), sorted.
	Reservations []string
	// By is what each of them holds, by name: filled by HeldOnBy only, for messages that
	// explain a refusal.
	By map[string]corev1.ResourceList
}

// claim is the reservation, run and role a pod would take a member's place in.
type claim struct {
	reservation types.NamespacedName
	run, role   string
}

// claimOn is the member's place p takes on node: its run's driver's, or, for an executor the
// gang scheduler released onto node, an executor's there. An executor not released there (one
// beyond the plan, let go anywhere) takes no member's place.
func claimOn(p *corev1.Pod, node string) (claim, bool) {
	m, ok := MemberOf(p)
	if !ok || m.Run == "" || m.Role != v1beta2.SparkRoleDriver && p.Annotations[AnnotationNode] != node {
		return claim{}, false
	}
	return claim{reservation: types.NamespacedName{Namespace: p.Namespace, Name: Name(m.Kind, m.Workload)}, run: m.Run, role: m.Role}, true
}

// Book records that the scheduler reading the ledger placed pod on node (its Reserve): if pod
// takes a member's place there, the place stays taken after the pod ends and leaves the node,
// so its room is not held again. Booking a pod twice counts it once.
func (l *Ledger) Book(pod *corev1.Pod, node string) {
	c, ok := claimOn(pod, node)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.byName[c.reservation]
	if e == nil || e.run != c.run {
		return
	}
	if l.booked == nil {
		l.booked = map[types.NamespacedName]*bookings{}
	}
	b := l.booked[c.reservation]
	if b == nil || b.run != c.run {
		b = &bookings{run: c.run, pods: map[types.UID]booking{}}
		l.booked[c.reservation] = b
	}
	b.pods[pod.UID] = booking{node: node, role: c.role}
}

// Unbook undoes Book (the scheduler's Unreserve: the pod's binding failed).
func (l *Ledger) Unbook(pod *corev1.Pod) {
	c, ok := claimOn(pod, pod.Annotations[AnnotationNode])
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.booked[c.reservation]; b != nil {
		delete(b.pods, pod.UID)
	}
}

// HeldOn is the room node holds at now for the members planned on it whose pods are not there:
// per reservation that still holds room, run and role, the members planned less the more of
// the pods booked there (Book) and those among pods (the pods on the node, bound or being
// bound) that take a member's place there (claimOn). pod, the pod being placed, takes one of
// the members of its own run and role planned on node, if it takes a member's place there and
// one is left: that room is not held from it. With pod nil, HeldOn is the room held from every
// pod.
//
// Not the reservation's status: it counts a member bound once it is let go onto its node,
// before its pod is there.
//
// pods is read only when node holds something: a scheduler asks for every node and pod.
func (l *Ledger) HeldOn(node string, pods iter.Seq[*corev1.Pod], pod *corev1.Pod, now time.Time) Holding {
	return l.heldOn(node, pods, pod, now, false)
}

// HeldOnBy is HeldOn with what each reservation holds (Holding.By). A scheduler asks HeldOn for
// every node and pod; this is for the rare refusal to be explained.
func (l *Ledger) HeldOnBy(node string, pods iter.Seq[*corev1.Pod], pod *corev1.Pod, now time.Time) Holding {
	return l.heldOn(node, pods, pod, now, true)
}

func (l *Ledger) heldOn(node string, pods iter.Seq[*corev1.Pod], pod *corev1.Pod, now time.Time, by bool) Holding {
	l.mu.RLock()
	defer l.mu.RUnlock()
	entries := l.byNode[node]
	if len(entries) == 0 {
		return Holding{}
	}
	present := map[claim]int{}
	for p := range pods {
		if c, ok := claimOn(p, node); ok && entries[c.reservation] != nil {
			present[c]++
		}
	}
	var own claim
	isMember := false
	if pod != nil {
		own, isMember = claimOn(pod, node)
	}
	// A member of a plan found to fit takes its place beside the other plans found to fit
	// only: an unjudged plan is judged against those (their room counts in takenOn), so it
	// never keeps their members out.
	ownHeld := false
	if e := entries[own.reservation]; isMember && e != nil && e.run == own.run && e.judged == JudgedHeld {
		ownHeld = true
	}
	var h Holding
	for _, e := range entries {
		if l.Timeout > 0 && now.Sub(e.admitted) >= l.Timeout || e.judged == JudgedTaken || ownHeld && e.judged == Unjudged {
			continue
		}
		held := false
		for role, s := range e.slots[node] {
			c := claim{reservation: e.name, run: e.run, role: role}
			taken := max(l.bookedOn(e.name, node, role), present[c])
			if isMember && own == c {
				taken++
			}
			for i := taken; i < len(s.requests); i++ {
				if h.Requests == nil {
					h.Requests = corev1.ResourceList{}
				}
				addTo(h.Requests, s.requests[i])
				if by {
					if h.By == nil {
						h.By = map[string]corev1.ResourceList{}
					}
					if h.By[e.name.String()] == nil {
						h.By[e.name.String()] = corev1.ResourceList{}
					}
					addTo(h.By[e.name.String()], s.requests[i])
				}
				held = true
			}
		}
		if held {
			h.Reservations = append(h.Reservations, e.name.String())
		}
	}
	sort.Strings(h.Reservations)
	return h
}

// bookedOn counts the pods booked into the reservation name on node in role. The caller holds
// l.mu.
func (l *Ledger) bookedOn(name types.NamespacedName, node, role string) int {
	b := l.booked[name]
	if b == nil {
		return 0
	}
	n := 0
	for _, p := range b.pods {
		if p.node == node && p.role == role {
			n++
		}
	}
	return n
}

// Nodes are the nodes the reservation name plans members on, sorted; none when the ledger does
// not hold it.
func (l *Ledger) Nodes(name types.NamespacedName) []string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	e := l.byName[name]
	if e == nil {
		return nil
	}
	nodes := make([]string, 0, len(e.slots))
	for n := range e.slots {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	return nodes
}

// PlannedNode is the node pod is kept to as a member of a reservation that holds room: its
// run's driver to the driver's planned node, an executor to the node the gang scheduler
// released it onto. False for anything else, which may go wherever room is free: pods of no
// reservation, executors beyond the plan not released yet.
func (l *Ledger) PlannedNode(pod *corev1.Pod, now time.Time) (string, bool) {
	m, ok := MemberOf(pod)
	if !ok || m.Run == "" {
		return "", false
	}
	if m.Role != v1beta2.SparkRoleDriver {
		n := pod.Annotations[AnnotationNode]
		return n, n != ""
	}
	c, _ := claimOn(pod, "")
	l.mu.RLock()
	defer l.mu.RUnlock()
	e, ok := l.byName[c.reservation]
	if !ok || e.run != c.run || e.driver == "" || l.Timeout > 0 && now.Sub(e.admitted) >= l.Timeout {
		return "", false
	}
	return e.driver, true
}

// String lists what the holding reserves, for messages: "cpu=4,memory=8Gi for ns/app".
func (h Holding) String() string {
	names := make([]string, 0, len(h.Requests))
	for n := range h.Requests {
		names = append(names, string(n))
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		q := h.Requests[corev1.ResourceName(n)]
		parts = append(parts, n+"="+q.String())
	}
	return strings.Join(parts, ",") + " for " + strings.Join(h.Reservations, ",")
}

func addTo(sum, add corev1.ResourceList) {
	for n, q := range add {
		cur, ok := sum[n]
		if !ok {
			cur = resource.Quantity{}
		}
		cur.Add(q)
		sum[n] = cur
	}
}
