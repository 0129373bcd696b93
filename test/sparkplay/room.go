/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkplay

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
)

// checkRoom marks, with NoRoomIsPartial, each application whose driver runs with its whole
// group made while one of its executors waits and no node has room for it: the pods on the
// nodes (every namespace's, ended ones and those on their way out not counted) took the room
// its gang should have held. An executor that waits while a node has room for it is only a
// scheduler yet to bind it, however long that takes on a loaded machine. The executors are
// judged and the room counted from one list of every pod: an executor bound after an earlier
// list would take its own room.
func (p *Player) checkRoom(ctx context.Context) error {
	if !p.opts.NoRoomIsPartial {
		return nil
	}
	var nodes corev1.NodeList
	if err := p.c.List(ctx, &nodes); err != nil {
		return err
	}
	var all corev1.PodList
	if err := p.c.List(ctx, &all); err != nil {
		return err
	}
	var pods []corev1.Pod
	for _, pod := range all.Items {
		if pod.Namespace == p.ns {
			pods = append(pods, pod)
		}
	}
	var waiting []*corev1.Pod
	running := map[string]bool{}
	for i := range pods {
		pod := &pods[i]
		switch {
		case Ended(pod):
		case pod.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleDriver && pod.Spec.NodeName != "":
			running[pod.Labels[v1beta2.LabelSubmissionID]] = true
		case pod.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleExecutor && pod.Spec.NodeName == "":
			waiting = append(waiting, pod)
		}
	}
	p.mu.Lock()
	var judged []*corev1.Pod
	for _, e := range waiting {
		if run := e.Labels[v1beta2.LabelSubmissionID]; running[run] && p.groupMade(pods, run) {
			judged = append(judged, e)
		}
	}
	p.mu.Unlock()
	if len(judged) == 0 {
		return nil
	}
	free := freeRoom(nodes.Items, all.Items)
	for _, e := range judged {
		fits, err := fitsSomewhere(e, free)
		if err != nil {
			return err
		}
		if !fits {
			p.mu.Lock()
			p.markPartial(e.Labels[v1beta2.LabelAppName], fmt.Sprintf("its driver ran while executor %s waited and no node had room for it", e.Name))
			p.mu.Unlock()
		}
	}
	return nil
}

// nodeRoom is a node and what its pods leave of its allocatable resources, pod slots included.
type nodeRoom struct {
	node *corev1.Node
	free corev1.ResourceList
}

// freeRoom is what pods leave of every schedulable node of nodes, by their requests.
func freeRoom(nodes []corev1.Node, pods []corev1.Pod) []nodeRoom {
	byName := map[string]int{}
	var out []nodeRoom
	for i := range nodes {
		n := &nodes[i]
		if n.Spec.Unschedulable {
			continue
		}
		byName[n.Name] = len(out)
		out = append(out, nodeRoom{node: n, free: n.Status.Allocatable.DeepCopy()})
	}
	for i := range pods {
		pod := &pods[i]
		at, ok := byName[pod.Spec.NodeName]
		if !ok || Ended(pod) {
			continue
		}
		sparkpod.AddTimes(out[at].free, takes(pod), -1)
	}
	return out
}

// fitsSomewhere reports whether pod's requests fit what is left of a node its node selector,
// required affinity and tolerations allow.
func fitsSomewhere(pod *corev1.Pod, nodes []nodeRoom) (bool, error) {
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	need := takes(pod)
	for _, n := range nodes {
		ok, err := affinity.Match(n.node)
		if err != nil {
			return false, fmt.Errorf("executor %s's node affinity: %w", pod.Name, err)
		}
		if !ok {
			continue
		}
		if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(logr.Discard(), n.node.Spec.Taints, pod.Spec.Tolerations, blocking, true); untolerated {
			continue
		}
		if fitsIn(need, n.free) {
			return true, nil
		}
	}
	return false, nil
}

// takes is what pod takes of a node: its requests and a pod slot.
func takes(pod *corev1.Pod) corev1.ResourceList {
	requests, _ := sparkpod.PodResources(pod)
	out := corev1.ResourceList{}
	sparkpod.AddMembers(out, requests, 1)
	return out
}

// blocking taints keep pods that do not tolerate them off a node.
func blocking(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

// fitsIn reports whether each resource of need is within free (a resource free does not list
// is none).
func fitsIn(need, free corev1.ResourceList) bool {
	for name, q := range need {
		if q.IsZero() {
			continue
		}
		if f, ok := free[name]; !ok || f.Cmp(q) < 0 {
			return false
		}
	}
	return true
}
