/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// A preemptor is admitted into room its victims still take while their pods terminate (a
// kubelet's grace period). Were its driver created then, kube-scheduler would find no room on
// the planned node and preempt pods there itself, by pod priority: pods of applications the
// gang scheduler did not choose, a part of one at a time. So an admitted workload starts (is
// woken, and admitted by Admit) only once its driver fits its planned node by the pods on it
// now, terminating ones included, as kube-scheduler counts them. Its executors need no such
// wait: they are gated until released onto free capacity.

// startGate decides which admitted workloads may start their driver now.
type startGate struct {
	room    map[string]corev1.ResourceList // node → allocatable minus what its pods request
	drivers map[Key]corev1.ResourceList    // workload → what its driver takes on its node
	held    map[Key]string                 // workloads that may not start yet → planned node
	created map[boundMember]bool           // drivers whose pod exists, placed or not
}

func newStartGate(w world, snap Snapshot) *startGate {
	g := &startGate{room: map[string]corev1.ResourceList{}, drivers: map[Key]corev1.ResourceList{}, held: map[Key]string{},
		created: map[boundMember]bool{}}
	for i := range w.Nodes {
		g.room[w.Nodes[i].Name] = w.Nodes[i].Status.Allocatable.DeepCopy()
	}
	for i := range w.Pods {
		p := &w.Pods[i]
		if m, ok := memberOf(p); ok && m.role == v1beta2.SparkRoleDriver {
			g.created[m] = true
		}
		room, ok := g.room[placedOn(p)]
		if !ok || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		add(room, podRequests(p), -1)
	}
	for i := range snap.Workloads {
		g.drivers[snap.Workloads[i].Key] = memberRequests(snap.Workloads[i].Demand.Driver)
	}
	return g
}

// start reports whether the driver of run of key, planned on node, may be created: it fits
// there now (its room is then taken), or it exists already (counted among the pods). A node or
// workload the gate does not know is no reason to wait.
func (g *startGate) start(key Key, run, node string) bool {
	room, ok := g.room[node]
	need, known := g.drivers[key]
	if !ok || !known || g.created[boundMember{app: key, submission: run, role: v1beta2.SparkRoleDriver}] {
		return true
	}
	for name, q := range need {
		// Only what the node lists: the decision core has judged the rest.
		if free, ok := room[name]; ok && free.Cmp(q) < 0 {
			g.held[key] = node
			return false
		}
	}
	add(room, need, -1)
	return true
}

// heldReason is what a workload the start gate holds back shows.
func heldReason(node string) string {
	return fmt.Sprintf("admitted; waiting for room for the driver on %s, where pods of the applications it preempted are ending", node)
}
