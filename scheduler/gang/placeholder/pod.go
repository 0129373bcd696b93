/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package placeholder

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/scheduler/reservation"
	"github.com/sparkop/spark-operator/sparkpod"
)

// Labels of placeholder pods.
const (
	// Label marks a placeholder pod; its value is its Reservation's name.
	Label = "scheduling.sparkop.dev/placeholder"
	// LabelRun is the run (submission id) the placeholder holds room for.
	LabelRun = "scheduling.sparkop.dev/run"
	// LabelMember is the member of the reservation it holds room for: driver, executor-<id>.
	LabelMember = "scheduling.sparkop.dev/member"
)

// Name names the placeholder of member of the reservation resName.
func Name(resName, member string) string { return resName + "-ph-" + member }

// NodeGroup is the executor slots a plan gives one node: ids Lo to Hi (the plan fills the
// nodes one after the other).
type NodeGroup struct {
	Node   string
	Lo, Hi int
}

// Member names the placeholder member holding the group's room.
func (g NodeGroup) Member() string { return fmt.Sprintf("executors-%d-%d", g.Lo, g.Hi) }

// Size is how many executor slots the group holds.
func (g NodeGroup) Size() int { return g.Hi - g.Lo + 1 }

// NodeGroups are the node groups of a plan's executor slots, in slot order: slots lists the
// planned node of each executor id from 1 (package gang's plannedSlots).
func NodeGroups(slots []string) []NodeGroup {
	var out []NodeGroup
	for i, node := range slots {
		if n := len(out); n > 0 && out[n-1].Node == node {
			out[n-1].Hi = i + 1
			continue
		}
		out = append(out, NodeGroup{Node: node, Lo: i + 1, Hi: i + 1})
	}
	return out
}

// Is reports whether p is a placeholder.
func Is(p *corev1.Pod) bool { return p.Labels[Label] != "" }

// Conditions keeps of a placeholder's conditions whether it was found unschedulable (its node
// was taken), for the cluster cache's trimmed pods; nothing of other pods.
func Conditions(p *corev1.Pod) []corev1.PodCondition {
	if !Is(p) {
		return nil
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return []corev1.PodCondition{{Type: c.Type, Status: c.Status, Reason: c.Reason, LastTransitionTime: c.LastTransitionTime}}
		}
	}
	return nil
}

// UnschedulableSince is when kube-scheduler first found no room for p, in its current verdict;
// false when it has not.
func UnschedulableSince(p *corev1.Pod) (time.Time, bool) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// TakenAfter is how long kube-scheduler must have found no room for a placeholder before its
// room counts as taken. A verdict may be stale: kube-scheduler may have tried the placeholder
// just before it saw pods leave that the gang scheduler saw leave already, and tries again,
// after a backoff of a second or more, when it sees them go.
const TakenAfter = 5 * time.Second

// Owner is the Reservation a placeholder holds room for, as far as its pod names it.
type Owner struct {
	// Name and UID are the Reservation's, which owns the placeholder.
	Name string
	UID  types.UID
	// Run is the run (submission id) it holds room for.
	Run string
	// PriorityClassName is the workload's.
	PriorityClassName string
	// Queue is the queue the run was admitted from, labelled on its pods and placeholders.
	Queue string
}

// Pod is the placeholder of one member of o, the reservation of workload key.
func Pod(key core.Key, o Owner, member, node string, requests corev1.ResourceList, image string) *corev1.Pod {
	reqs := requests.DeepCopy()
	delete(reqs, corev1.ResourcePods)
	labels := map[string]string{Label: o.Name, LabelRun: o.Run, LabelMember: member, reservation.LabelQueue: o.Queue}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: Name(o.Name, member),
			Labels: labels,
			// Its node while it is not bound yet: it takes its room there (package gang's
			// placedOn).
			Annotations: map[string]string{reservation.AnnotationNode: node},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: schedv1alpha1.GroupVersion.String(), Kind: "Reservation",
				Name: o.Name, UID: o.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{
			// Through kube-scheduler, not nodeName: its fit checks apply, and it counts the
			// placeholder as it binds it. Tolerating every taint is safe: the node was chosen
			// for the member, whose tolerations the gang scheduler checked.
			Affinity:    nodeAffinity(node),
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			// The workload's, until package gang's writePlaceholders gives it the
			// placeholders' class of the same value (Classes).
			PriorityClassName:             o.PriorityClassName,
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

// Wanted is a placeholder that should exist.
type Wanted struct {
	Key    core.Key
	Owner  Owner
	Member string
	Node   string
	// Requests are one member's (shared, not to be changed), Count how many members it holds
	// room for.
	Requests corev1.ResourceList
	Count    int
	// First orders a reservation's placeholders: 0 for the driver's, else its first
	// executor's id.
	First int
}

// Before orders placeholders: by workload, then the driver's, then by first executor.
func (w Wanted) Before(o Wanted) bool {
	if w.Key != o.Key {
		return core.LessKey(w.Key, o.Key)
	}
	return w.First < o.First || w.First == o.First && w.Member < o.Member
}

// Need is what the placeholder takes of its node: its members' requests and a pod slot each.
func (w Wanted) Need() corev1.ResourceList {
	need := corev1.ResourceList{}
	sparkpod.AddMembers(need, w.Requests, int64(w.Count))
	return need
}

// Pod is the placeholder pod.
func (w Wanted) Pod(image string) *corev1.Pod {
	return Pod(w.Key, w.Owner, w.Member, w.Node, w.Need(), image)
}
