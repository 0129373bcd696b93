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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/sparkpod"
)

// placeholderName names the placeholder of member of the reservation resName.
func placeholderName(resName, member string) string { return resName + "-ph-" + member }

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
	sparkpod.AddTimes(need, memberRequests(sparkpod.PodDemand{Requests: w.requests}), int64(w.count))
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
