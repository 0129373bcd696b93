/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// nodeCapacityTTL is how long the nodes' allocatable resources, once read, are trusted.
const nodeCapacityTTL = time.Minute

// nodeCapacity remembers what each node of the cluster can allocate. It is read only for
// drivers the scheduler cannot place, to tell one that no node could ever take from one that
// waits for room, and at most once a nodeCapacityTTL: the operator keeps no watch on nodes.
// Without the right to list nodes it knows none, and nothing is said.
type nodeCapacity struct {
	mu    sync.Mutex
	read  time.Time
	nodes []corev1.ResourceList
}

// allocatable returns each node's allocatable resources, read through reader when what was
// read before is older than nodeCapacityTTL.
func (n *nodeCapacity) allocatable(ctx context.Context, reader client.Reader, now time.Time) []corev1.ResourceList {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.read.IsZero() && now.Sub(n.read) < nodeCapacityTTL {
		return n.nodes
	}
	n.read = now
	var nodes []corev1.ResourceList
	list := &corev1.NodeList{}
	for {
		if err := reader.List(ctx, list, client.Limit(500), client.Continue(list.Continue)); err != nil {
			log.FromContext(ctx).V(1).Info("cannot read the nodes' capacity; unschedulable drivers are not compared with it", "error", err.Error())
			n.nodes = nil
			return nil
		}
		for i := range list.Items {
			if a := list.Items[i].Status.Allocatable; len(a) > 0 {
				nodes = append(nodes, a)
			}
		}
		if list.Continue == "" {
			break
		}
	}
	n.nodes = nodes
	return nodes
}
