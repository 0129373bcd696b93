/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package volcano

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/scheduler/gang"
)

// DefaultQueue is the Volcano queue of a PodGroup that names none.
const DefaultQueue = "default"

var _ gang.ForeignQueueLimits = (*Scheduler)(nil)

// QueueLimits is the capability of the Volcano queue named (none: Volcano's default queue),
// for the gang scheduler's core to admit the queue's runs whole within it: Volcano's
// proportion plugin lets a PodGroup in only while its minResources fit what is left of the
// queue's capability, and binds no pod beyond it (so a run admitted by the nodes alone could
// start its driver and wait for its executors). A queue without a capability, one that does
// not exist (Check holds its runs), or queues the operator may not read: no limits.
//
// Not counted: pods of the queue that are not the operator's runs, and the guarantee of other
// queues, which Volcano takes off what a queue may hold.
func (s *Scheduler) QueueLimits(ctx context.Context, queue string) ([]gang.ForeignQueue, error) {
	if s.Reader == nil {
		return nil, nil
	}
	if queue == "" {
		queue = DefaultQueue
	}
	return s.limits.Get(queue, func() ([]gang.ForeignQueue, error) {
		q := &unstructured.Unstructured{}
		q.SetGroupVersionKind(QueueKind)
		switch err := s.Reader.Get(ctx, client.ObjectKey{Name: queue}, q); {
		case apierrors.IsNotFound(err), apierrors.IsForbidden(err), meta.IsNoMatchError(err):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("reading Volcano queue %s: %w", queue, err)
		}
		capability, err := capabilityOf(q)
		if err != nil || len(capability) == 0 {
			return nil, err
		}
		return []gang.ForeignQueue{{Name: queue, Max: capability}}, nil
	})
}

// capabilityOf is q's spec.capability as Volcano enforces it: pods are not limited, nor are CPU
// or memory where the capability is zero.
func capabilityOf(q *unstructured.Unstructured) (corev1.ResourceList, error) {
	raw, _, err := unstructured.NestedMap(q.Object, "spec", "capability")
	if err != nil {
		return nil, fmt.Errorf("spec.capability of Volcano queue %s: %w", q.GetName(), err)
	}
	out := corev1.ResourceList{}
	for name, v := range raw {
		qty, err := resource.ParseQuantity(fmt.Sprint(v)) // a quantity, or a number
		if err != nil {
			return nil, fmt.Errorf("spec.capability.%s of Volcano queue %s: %w", name, q.GetName(), err)
		}
		r := corev1.ResourceName(name)
		if r == corev1.ResourcePods || ((r == corev1.ResourceCPU || r == corev1.ResourceMemory) && qty.Sign() <= 0) {
			continue
		}
		out[r] = qty
	}
	return out, nil
}
