/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// nodeReadyTTL is how long a node's Ready condition, once read, is trusted.
const nodeReadyTTL = 10 * time.Second

// nodeReadiness remembers the Ready condition of the nodes that drivers run on. The operator
// keeps no watch on nodes: a node is read only for a driver pod that is not Ready (the node
// controller marks the pods of a node that stopped answering so, which also brings the
// reconcile), at most once a nodeReadyTTL per node. Without the right to read nodes nothing
// is known, and a lost node is left to the node controller's eviction (driverLost).
type nodeReadiness struct {
	mu    sync.Mutex
	nodes map[string]nodeReadyRead
}

type nodeReadyRead struct {
	read  time.Time
	ready *corev1.NodeCondition // nil when the node has none, or cannot be read
}

// ready returns the Ready condition of the named node, read through reader when what was read
// before is older than nodeReadyTTL or than changed (when the pod asking last changed its Ready
// condition: the node controller marks a lost node's pods so); nil when the node has none or
// cannot be read (a node that no longer exists takes its pods with it: the driver is then
// missing).
func (n *nodeReadiness) ready(ctx context.Context, reader client.Reader, name string, changed, now time.Time) *corev1.NodeCondition {
	n.mu.Lock()
	defer n.mu.Unlock()
	// Conditions' times have whole seconds: a change within the second of a read may follow it.
	if r, ok := n.nodes[name]; ok && now.Sub(r.read) < nodeReadyTTL && r.read.Truncate(time.Second).After(changed) {
		return r.ready
	}
	if n.nodes == nil {
		n.nodes = map[string]nodeReadyRead{}
	}
	r := nodeReadyRead{read: now}
	var node corev1.Node
	if err := reader.Get(ctx, client.ObjectKey{Name: name}, &node); err != nil {
		log.FromContext(ctx).V(1).Info("cannot read the driver's node; a lost node is left to its eviction", "node", name, "error", err.Error())
	}
	for i := range node.Status.Conditions {
		if c := node.Status.Conditions[i]; c.Type == corev1.NodeReady {
			r.ready = &c
		}
	}
	n.nodes[name] = r
	return r.ready
}

// nodeLost says when the node a live driver pod is on has not been Ready for longer than
// timeout: the kubelet stopped answering (or the node went), so nothing the pod does is
// reported any more, and the run would stay RUNNING for as long as the node is away. This does
// not wait for the node controller, which evicts nothing while every node of a zone is down.
// Before then it returns how much longer to wait; for a Ready driver, or with timeout zero,
// nothing.
func nodeLost(pod *corev1.Pod, nodeReady func(node string, changed time.Time) *corev1.NodeCondition, now time.Time, timeout time.Duration) (string, time.Duration) {
	if timeout <= 0 || pod == nil || pod.Spec.NodeName == "" || driverState(pod).IsTerminal() {
		return "", 0
	}
	ready, changed := podReady(pod)
	if ready {
		return "", 0
	}
	c := nodeReady(pod.Spec.NodeName, changed)
	if c == nil || c.Status == corev1.ConditionTrue {
		return "", 0
	}
	if wait := c.LastTransitionTime.Add(timeout).Sub(now); wait > 0 {
		return "", wait
	}
	why := c.Reason
	if c.Message != "" {
		why += ": " + c.Message
	}
	return fmt.Sprintf("driver pod %s is lost: its node %s has not been Ready since %s (%s), more than %s",
		pod.Name, pod.Spec.NodeName, c.LastTransitionTime.UTC().Format(time.RFC3339), why, timeout), 0
}

// podReady says whether the pod's Ready condition is True, and when it last changed.
func podReady(pod *corev1.Pod) (bool, time.Time) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue, c.LastTransitionTime.Time
		}
	}
	return false, time.Time{}
}
