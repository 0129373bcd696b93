/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package yunikorn is the Apache YuniKorn integration (spec.batchScheduler: yunikorn): every
// pod of a run names the yunikorn scheduler and, with batchSchedulerOptions.queue, its YuniKorn
// queue (the queue label); YuniKorn has no CRDs.
//
// How the gang is held. YuniKorn's own gang, task groups and placeholder pods, was measured not
// to hold a Spark gang (issue #47: every driver started at once where 3 fit, dynamic-allocation
// runs stuck), and placeholders it places where it likes cannot share the room another
// admission plans. So YuniKorn is served as a variant of the gang scheduler's core
// (gang.ForeignPlacement): the core admits a run only when its whole gang fits the nodes, node
// by node, and keeps that room until its pods are bound; YuniKorn places the pods, one by one,
// on the nodes planned for them. A YuniKorn queue's resources.max (and its ancestors') is the
// quota of the core's queue standing for it (QueueLimits), so a run starts only while its whole
// gang fits what is left of it too. The runs carry no task groups.
package yunikorn

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/sparkpod"
)

const (
	// Name is the value of spec.batchScheduler that selects YuniKorn.
	Name = "yunikorn"
	// SchedulerName is the Kubernetes scheduler name YuniKorn serves.
	SchedulerName = "yunikorn"
	// LabelQueue is YuniKorn's queue label (yunikorn-k8shim pkg/common/constants).
	LabelQueue = "queue"
)

// Scheduler places the runs the gang scheduler's core admits for applications naming YuniKorn.
type Scheduler struct {
	// Reader reads YuniKorn's configuration, for its queues' limits (QueueLimits); nil: not
	// read, the queues limit nothing the core counts.
	Reader client.Reader
	// Namespace is that of YuniKorn's configuration; "" is DefaultNamespace.
	Namespace string

	limits gang.Remembered[*queueConf]
}

// New returns the YuniKorn integration reading YuniKorn's configuration with r.
func New(r client.Reader) *Scheduler { return &Scheduler{Reader: r} }

var _ gang.ForeignPlacement = (*Scheduler)(nil)

func (*Scheduler) Name() string { return Name }

// SchedulerName is the scheduler its pods name, which the validating webhook knows of.
func (*Scheduler) SchedulerName() string { return SchedulerName }

// Check leaves every run to the core: YuniKorn has no CRDs to require, and its queues are its
// own (a pod of a queue it does not know waits, as YuniKorn's placement rules say).
func (*Scheduler) Check(context.Context, scheduler.Workload) (scheduler.Decision, bool, error) {
	return scheduler.Decision{}, true, nil
}

// Pods of a run the core admitted: on the yunikorn scheduler, in the queue of
// batchSchedulerOptions.queue (none: YuniKorn's placement rules choose), on the nodes planned
// for them.
func (*Scheduler) Pods(w scheduler.Workload, r gang.Reservation) (sparkpod.RoleScheduling, error) {
	pods := sparkpod.Scheduling{SchedulerName: SchedulerName}
	if w.Queue != "" {
		pods.Labels = map[string]string{LabelQueue: w.Queue}
	}
	return r.PodsPlacedElsewhere(sparkpod.RoleScheduling{Driver: pods, Executor: pods}), nil
}

// ValidateApplication accepts every application: YuniKorn's queues are its own.
func (*Scheduler) ValidateApplication(context.Context, *v1beta2.SparkApplication) field.ErrorList {
	return nil
}
