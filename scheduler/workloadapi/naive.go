/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package workloadapi

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/sparkpod"
)

// NaiveName is the value of spec.batchScheduler that selects the naive mapping.
const NaiveName = "kubernetes-naive"

// Naive maps an application onto the Workload API directly, with no admission: every run
// starts at once, its driver in a group of its own, its executors in a gang group of the
// initial executors, and kube-scheduler alone decides. It is the mapping the kubernetes
// scheduler is not: on a full cluster drivers take the room their executors need, and each
// executor group waits, all or nothing, for capacity other drivers hold (docs/gang-scheduling.md).
// It exists to be measured against it (make bench-gang); the objects and pod settings are the
// kubernetes scheduler's, so the two differ only by the admission.
type Naive struct{}

var (
	_ scheduler.Interface     = Naive{}
	_ scheduler.ObjectsForRun = Naive{}
)

func (Naive) Name() string { return NaiveName }

// Admit admits every run at once, in its groups.
func (Naive) Admit(_ context.Context, w scheduler.Workload) (scheduler.Decision, error) {
	names, err := NamesOf(w)
	if err != nil {
		return scheduler.Decision{}, err
	}
	d := scheduler.Decision{Admit: true, Pods: sparkpod.RoleScheduling{
		Driver: sparkpod.Scheduling{SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: ptr.To(names.Driver)}},
	}}
	if w.Demand.Executor.Count > 0 {
		d.Pods.Executor.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To(names.Executors)}
	}
	return d, nil
}

// Release holds nothing: the run's objects go with the application.
func (Naive) Release(context.Context, scheduler.Workload) error { return nil }

// RunObjects are the kubernetes scheduler's objects, the executors' group a gang of the
// initial executors.
func (Naive) RunObjects(_ context.Context, w scheduler.Workload, _ scheduler.Decision) ([]client.Object, error) {
	return Objects(w, w.Demand.Executor.Count)
}
