/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/scheduler/gang/placeholder"
)

// Which placeholders the world wants, and which exist: the wanted ones are made from the
// Reservations (package placeholder builds their pods).

// nodeGroups are the node groups of r's executor slots, in slot order.
func nodeGroups(r Reservation) []placeholder.NodeGroup {
	return placeholder.NodeGroups(plannedSlots(r))
}

// placeholderOwner is r, the reservation of workload key, as its placeholders name it.
func placeholderOwner(key core.Key, r Reservation) placeholder.Owner {
	return placeholder.Owner{Name: ReservationName(key), UID: r.UID, Run: r.SubmissionID, PriorityClassName: r.PriorityClassName,
		Queue: r.Queue}
}

// driverPlaceholder is the placeholder of r's driver.
func driverPlaceholder(key core.Key, r Reservation) placeholder.Wanted {
	return placeholder.Wanted{Key: key, Owner: placeholderOwner(key, r), Member: schedv1alpha1.MemberRoleDriver, Node: r.Driver,
		Requests: r.DriverRequests, Count: 1}
}

// groupPlaceholder is the placeholder shared by the executors of r's node group g.
func groupPlaceholder(key core.Key, r Reservation, g placeholder.NodeGroup) placeholder.Wanted {
	return placeholder.Wanted{Key: key, Owner: placeholderOwner(key, r), Member: g.Member(), Node: g.Node,
		Requests: r.ExecutorRequests, Count: g.Size(), First: g.Lo}
}

// executorPlaceholder is the placeholder of r's executor id alone, on node.
func executorPlaceholder(key core.Key, r Reservation, id int, node string) placeholder.Wanted {
	return placeholder.Wanted{Key: key, Owner: placeholderOwner(key, r), Member: executorMember(id), Node: node,
		Requests: r.ExecutorRequests, Count: 1, First: id}
}

// placeholdersOf lists the placeholders the live reservations of w want, by pod: for the
// members whose pods are not placed yet (not created, or gated), while the reservation keeps
// node capacity and its run has not ended: exactly the members reserveUnbound counts. The
// driver has one of its own, the executors one per node group (nodeGroups) until one of the
// group was given its slot, then one each. Executors without readable ids get none (their
// slots are counted per node).
func placeholdersOf(w world, o snapshotOptions, existing map[types.NamespacedName]*corev1.Pod) map[types.NamespacedName]placeholder.Wanted {
	out := map[types.NamespacedName]placeholder.Wanted{}
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
		want := func(w placeholder.Wanted) {
			out[types.NamespacedName{Namespace: wo.Key.Namespace, Name: placeholder.Name(resName, w.Member)}] = w
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
			for id := g.Lo; id <= g.Hi && whole; id++ {
				own := existing[types.NamespacedName{Namespace: wo.Key.Namespace, Name: placeholder.Name(resName, executorMember(id))}]
				whole = toGive[id] && (own == nil || own.Labels[LabelRun] != r.SubmissionID)
			}
			if whole {
				want(groupPlaceholder(wo.Key, r, g))
				continue
			}
			for id := g.Lo; id <= g.Hi; id++ {
				if toGive[id] {
					want(executorPlaceholder(wo.Key, r, id, g.Node))
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
		if placeholder.Is(p) && names[types.NamespacedName{Namespace: p.Namespace, Name: p.Labels[LabelPlaceholder]}] {
			out[client.ObjectKeyFromObject(p)] = p
		}
	}
	return out
}
