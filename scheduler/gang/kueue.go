/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/sparkpod"
)

// Kueue is the scheduler.Interface of scheduler.KueueName, served by s: the applications Kueue
// queues and no queueing batch scheduler does (scheduler.NameOf). Kueue admits such an
// application against its ClusterQueue's quota, a sum over the cluster, and resumes it; then
// the core admits it by the nodes' fit alone (its default queue, as for a ForeignPlacement:
// Kueue did the queueing), keeps that room until its pods are bound, and places its pods as
// gang's (the driver on its planned node, each executor gated until released onto its own). So
// an application Kueue resumed never starts in part: it waits, resumed and Queued, until its
// whole gang fits the nodes. Kueue suspending it (preemption) releases the core's room, as any
// suspension does. Register it beside s.
func (s *Scheduler) Kueue() scheduler.Interface {
	return s.Serve(kueuePlacement{enforcement: s.cfg.Enforcement})
}

// kueuePlacement places the runs of Kueue's applications as gang places its own.
type kueuePlacement struct{ enforcement Enforcement }

var _ ForeignPlacement = kueuePlacement{}

func (kueuePlacement) Name() string { return scheduler.KueueName }

func (p kueuePlacement) Pods(_ scheduler.Workload, r Reservation) (sparkpod.RoleScheduling, error) {
	return r.Pods(p.enforcement), nil
}

func (kueuePlacement) placedLikeGang() {}

// Check leaves every run to the core: Kueue admitted it already (a suspended application is
// not asked about).
func (kueuePlacement) Check(context.Context, scheduler.Workload) (scheduler.Decision, bool, error) {
	return scheduler.Decision{}, true, nil
}

// ValidateApplication refuses an application naming kueue that Kueue does not queue: without
// Kueue's label nothing would apply a quota to it.
func (kueuePlacement) ValidateApplication(_ context.Context, app *v1beta2.SparkApplication) field.ErrorList {
	if scheduler.QueuedByKueue(app) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "batchScheduler"), scheduler.KueueName,
		fmt.Sprintf("%s is for applications Kueue queues: label the application %s: <LocalQueue>", scheduler.KueueName, scheduler.LabelKueueQueueName))}
}
