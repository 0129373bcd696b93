/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/scheduler/gang/status"
)

// ensureDefaultQueue creates the default queue, with no quota, if it is missing.
func (s *Scheduler) ensureDefaultQueue(ctx context.Context) error {
	q := &schedv1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: schedv1alpha1.DefaultQueueName}}
	err := s.client.Create(ctx, q)
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// writeQueueStatus writes each queue's status through the status subresource where it changed.
// The Active condition is False, with the decision core's reason, for a queue that admits
// nothing (a missing parent, a cycle of parents).
func (s *Scheduler) writeQueueStatus(ctx context.Context, w world, snap core.Snapshot, out core.Outcome) error {
	want := status.Queues(snap, out)
	setQueueGauges(want)
	var errs []error
	for i := range w.Queues {
		q := w.Queues[i].DeepCopy()
		next, ok := want[q.Name]
		if !ok {
			continue
		}
		next.Conditions = append([]metav1.Condition(nil), q.Status.Conditions...)
		active := metav1.Condition{Type: schedv1alpha1.QueueConditionActive, Status: metav1.ConditionTrue,
			Reason: "Active", Message: "the queue admits applications", LastTransitionTime: metav1.NewTime(s.cfg.Clock.Now())}
		if why, ok := out.Inactive[q.Name]; ok {
			active.Status, active.Reason, active.Message = metav1.ConditionFalse, "Inactive", why
		}
		meta.SetStatusCondition(&next.Conditions, active)
		if equality.Semantic.DeepEqual(q.Status, next) {
			continue
		}
		q.Status = next
		if err := s.client.Status().Update(ctx, q); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("writing the status of queue %s: %w", q.Name, err))
		}
		// A conflict means the cache lags; the watch brings the newer queue and another cycle.
	}
	return errors.Join(errs...)
}
