/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/scheduler/gang/placeholder"
	"github.com/sparkop/spark-operator/sparkpod"
)

// world is what the cache holds, as plain lists: the input of one snapshot.
type world struct {
	Nodes           []corev1.Node
	Pods            []corev1.Pod // trimmed by trimPod: requests summed into one container
	PriorityClasses []schedulingv1.PriorityClass
	Queues          []schedv1alpha1.Queue
	// ForeignQueues are the core's queues standing for other schedulers' (foreignqueues.go),
	// by name.
	ForeignQueues map[string]core.Queue
	Workloads     []object    // the applications and sessions the gang scheduler decides for
	Seen          executorIDs // executor ids seen by lists before this one (seenExecutors.before)
}

// snapshotOptions say how the world reads.
type snapshotOptions struct {
	// ReservationTimeout: a member not bound this long after admission no longer has its
	// node capacity kept (its queue's quota still is, until the run ends).
	ReservationTimeout time.Duration
	Now                time.Time
}

// boundMember identifies a role of one run of a workload, for counting its bound pods.
type boundMember struct {
	app        core.Key // the application or session
	submission string
	role       string // driver (a session's server) or executor
}

// snapshot turns the world into the decision core's input. Admitted workloads are those with
// a live reservation, with what their executors do beyond the plan; waiting ones those
// awaiting admission, and applications about to ask (Unrecorded), which keep their place.
// Node usage is what non-terminal pods bound (or released) to the node request plus what
// admitted workloads' unbound members have reserved.
func snapshot(w world, o snapshotOptions) (core.Snapshot, error) {
	snap := core.Snapshot{Nodes: snapshotNodes(w), Queues: snapshotQueues(w)}
	nodes := map[string]*core.Node{}
	for i := range snap.Nodes {
		nodes[snap.Nodes[i].Name] = &snap.Nodes[i]
	}
	pods := countPods(w, o, nodes)
	for i := range w.Workloads {
		if wl, ok := snapshotWorkload(w, o, &w.Workloads[i], snap.Queues, nodes, pods); ok {
			snap.Workloads = append(snap.Workloads, wl)
		}
	}
	return snap, nil
}

// snapshotNodes are w's nodes, with nothing used yet.
func snapshotNodes(w world) []core.Node {
	var out []core.Node
	for i := range w.Nodes {
		n := &w.Nodes[i]
		out = append(out, core.Node{
			Name: n.Name, Labels: n.Labels, Taints: n.Spec.Taints, Unschedulable: n.Spec.Unschedulable,
			Allocatable: n.Status.Allocatable, Used: corev1.ResourceList{},
		})
	}
	return out
}

// snapshotQueues are w's queues, by name, with nothing used yet.
func snapshotQueues(w world) map[string]*core.Queue {
	out := map[string]*core.Queue{}
	for i := range w.Queues {
		q := &w.Queues[i]
		gq := &core.Queue{Name: q.Name, Parent: q.Spec.Parent, Priority: q.Spec.Priority, Quota: q.Spec.Quota, Usage: corev1.ResourceList{}}
		if b := q.Spec.Borrowing; b != nil {
			gq.NoBorrowing = b.Policy == schedv1alpha1.BorrowingNever
			gq.BorrowingLimit = b.Limit
		}
		out[q.Name] = gq
	}
	for name, q := range w.ForeignQueues {
		q.Usage = corev1.ResourceList{}
		out[name] = &q
	}
	return out
}

// podCount is what countPods read from the pods.
type podCount struct {
	// bound holds, per member, the pods placed on each node (any phase).
	bound map[boundMember]map[string]int32
	// ended holds the runs whose driver (a session's server) has ended: their reservation
	// holds nothing more, though the controller may not have seen the end yet.
	ended map[boundMember]bool
	// executors are the runs' executor pods.
	executors map[boundMember]*executorPods
}

// countPods adds to nodes what their non-terminal pods request, and counts the members placed.
// A pod counts on the node it is bound to, or, released by the gang scheduler to a node and not
// bound yet, on that node: it is on its way there.
func countPods(w world, o snapshotOptions, nodes map[string]*core.Node) podCount {
	c := podCount{bound: map[boundMember]map[string]int32{}, ended: map[boundMember]bool{}}
	holding := liveHolding(w, o)
	for i := range w.Pods {
		p := &w.Pods[i]
		on := placedOn(p)
		if on == "" || countedByReservation(p, holding) {
			continue
		}
		terminal := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
		if m, ok := memberOf(p); ok {
			if c.bound[m] == nil {
				c.bound[m] = map[string]int32{}
			}
			c.bound[m][on]++
			if terminal && m.role == v1beta2.SparkRoleDriver {
				c.ended[m] = true
			}
		}
		if terminal {
			continue
		}
		if n := nodes[on]; n != nil {
			sparkpod.AddTimes(n.Used, requestsOf(p), 1)
		}
	}
	c.executors = executorsOf(w.Pods, w.Seen)
	return c
}

// snapshotWorkload is wo as the core reads it, false if it takes no part in the cycle. An
// admitted one counts against its queue and, for its members not bound yet, its planned nodes.
func snapshotWorkload(w world, o snapshotOptions, wo *object, queues map[string]*core.Queue, nodes map[string]*core.Node, pods podCount) (core.Workload, bool) {
	res, admitted := wo.liveReservation()
	if admitted && pods.ended[boundMember{wo.Key, res.SubmissionID, v1beta2.SparkRoleDriver}] {
		// The run is over: what its pods still hold counts through them. Waiting for the
		// controller to record the end (tens of seconds on a busy API server) would keep
		// its executors' capacity reserved once they are gone.
		return core.Workload{}, false
	}
	if !wo.inCycle() {
		return core.Workload{}, false
	}
	unrecorded := !admitted && wo.unrecorded
	demand, err := wo.demand()
	if err != nil {
		// The controller rejects it when it asks; it takes no part in the cycle.
		return core.Workload{}, false
	}
	wo.Demand = demand
	wl := core.Workload{Key: wo.Key, Queue: wo.Queue, Priority: placeholder.PriorityOf(wo.PriorityClassName, w.PriorityClasses),
		Created: wo.Object.GetCreationTimestamp().Time, Demand: demand, Unrecorded: unrecorded}
	if wl.Queue == "" {
		wl.Queue = schedv1alpha1.DefaultQueueName
	}
	if !admitted {
		return wl, true
	}
	ep := pods.executors[boundMember{wo.Key, res.SubmissionID, v1beta2.SparkRoleExecutor}]
	wl.Admission = res.Admission()
	wl.Queue = res.Queue
	wl.Dynamic = dynamicOf(res, ep, o)
	if q := queues[res.Queue]; q != nil {
		sparkpod.AddTimes(q.Usage, demand.Total(), 1)
		for _, k := range wl.Dynamic.Extra {
			sparkpod.AddMembers(q.Usage, demand.Executor.Requests, int64(k))
		}
	}
	if res.keepsNodes(o) {
		reserveUnbound(nodes, res, demand, pods.bound, wo.Key, ep)
	}
	return wl, true
}

// reserveUnbound adds to the planned nodes what the members of an admitted workload that are
// not bound yet request. A bound member counts through its pod instead. Executors keep the
// planned slots not given yet (slotsToGive); without executor ids, bound executors are matched
// to the plan node by node first, then anywhere, and the rest is kept, so the slot of an
// executor whose pod was deleted is kept again.
func reserveUnbound(nodes map[string]*core.Node, res Reservation, d sparkpod.Demand, bound map[boundMember]map[string]int32, key core.Key, ep *executorPods) {
	drivers := bound[boundMember{key, res.SubmissionID, v1beta2.SparkRoleDriver}]
	if len(drivers) == 0 {
		if n := nodes[res.Driver]; n != nil {
			sparkpod.AddMembers(n.Used, d.Driver.Requests, 1)
		}
	}
	if slots, ok := slotsToGive(res, ep); ok {
		for _, node := range slots {
			if n := nodes[node]; n != nil {
				sparkpod.AddMembers(n.Used, d.Executor.Requests, 1)
			}
		}
		return
	}
	left := map[string]int32{}
	for node, planned := range res.Executors {
		left[node] = planned
	}
	var elsewhere int32
	for node, count := range bound[boundMember{key, res.SubmissionID, v1beta2.SparkRoleExecutor}] {
		take := min(count, left[node])
		left[node] -= take
		elsewhere += count - take
	}
	for node, planned := range left {
		take := min(planned, elsewhere)
		elsewhere -= take
		if rest := planned - take; rest > 0 {
			if n := nodes[node]; n != nil {
				sparkpod.AddMembers(n.Used, d.Executor.Requests, int64(rest))
			}
		}
	}
}

// podRequests is what a pod requests of its node, by Kubernetes' own rule as kube-scheduler
// counts it (resourcehelper.PodRequests, the rule sparkpod.PodResources applies to the demand
// side): its containers, plus its sidecar init containers (restartPolicy Always), or a plain
// init container where larger; its pod-level resources where it sets them; resources it is
// being resized to; its overhead. And one of the node's pod slots (its allocatable "pods"),
// which a pod takes whatever it requests. Applied to a pod trimPod made, it gives the same list
// again. A pod from the API server has the requests its limits default to already, so unlike
// sparkpod.PodResources (for templates) it needs no copy of the pod to fill them in.
func podRequests(p *corev1.Pod) corev1.ResourceList {
	total := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{UseStatusResources: true})
	total[corev1.ResourcePods] = onePod
	return total
}

// trimmedContainer names the one container trimPod leaves a pod, which holds its requests.
const trimmedContainer = "requests"

// requestsOf is what p takes on its node: podRequests. For a pod of the cluster cache, which
// trimPod trimmed, that was worked out once, as the pod was trimmed, and its one container
// holds it: that list is returned as it is, shared (read it, never change it), since a cycle
// reads every pod of the cluster.
func requestsOf(p *corev1.Pod) corev1.ResourceList {
	s := &p.Spec
	if len(s.Containers) == 1 && s.Containers[0].Name == trimmedContainer && len(s.InitContainers) == 0 && s.Resources == nil && s.Overhead == nil {
		if l := s.Containers[0].Resources.Requests; l[corev1.ResourcePods].Equal(onePod) {
			return l
		}
	}
	return podRequests(p)
}

// onePod is the pod slot every pod takes on its node.
var onePod = *resource.NewQuantity(1, resource.DecimalSI)

// memberRequests is what one pod of a role takes on its node: its requests and a pod slot.
func memberRequests(d sparkpod.PodDemand) corev1.ResourceList {
	l := corev1.ResourceList{}
	sparkpod.AddMembers(l, d.Requests, 1)
	return l
}
