/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/test/cluster"
)

// kueueLocalQueue is the LocalQueue, in the run's namespace, that the applications of a
// --scheduler kueue run are labelled for.
const kueueLocalQueue = "bench"

// setUpKueue creates what Kueue (hack/local-cluster.sh kueue) needs to admit the run's
// applications: a ResourceFlavor and a ClusterQueue named after the run's namespace, with the
// cluster's allocatable CPU and memory as quota, and the LocalQueue kueueLocalQueue in it. The
// other schedulers' runs queue in their defaults, which hold the whole cluster, so Kueue gets
// the whole cluster too; what it admits beyond what the nodes can place is the kube-scheduler's
// to find out. It waits for the ClusterQueue to be active, and returns what deletes the
// cluster-wide objects (the LocalQueue goes with the namespace).
func setUpKueue(ctx context.Context, e *benchEnv) (func(), error) {
	var nodes corev1.NodeList
	if err := e.cl.List(ctx, &nodes); err != nil {
		return nil, err
	}
	q := cluster.NewKueueQueue(e.ns, nil, allocatable(nodes.Items, corev1.ResourceCPU, corev1.ResourceMemory), e.ns, kueueLocalQueue)
	cleanup := func() {
		_ = e.cl.Delete(context.Background(), q.ClusterQueue)
		_ = e.cl.Delete(context.Background(), q.Flavor)
	}
	for _, o := range q.Objects() {
		if err := e.cl.Create(ctx, o); err != nil {
			cleanup()
			return nil, fmt.Errorf("creating Kueue's %s %s (is Kueue running? hack/local-cluster.sh kueue): %w",
				o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
	}
	cq := q.ClusterQueue
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := e.cl.Get(ctx, client.ObjectKeyFromObject(cq), cq)
		return err == nil && cluster.KueueActive(cq), nil
	})
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("ClusterQueue %s of Kueue did not become active: %w", cq.GetName(), err)
	}
	return cleanup, nil
}

// allocatable sums the nodes' allocatable amounts of each resource named.
func allocatable(nodes []corev1.Node, names ...corev1.ResourceName) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, name := range names {
		total := resource.Quantity{Format: resource.DecimalSI}
		for i := range nodes {
			if q, ok := nodes[i].Status.Allocatable[name]; ok {
				total.Add(q)
			}
		}
		sum[name] = total
	}
	return sum
}
