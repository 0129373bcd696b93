/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package yunikorn is the Apache YuniKorn integration (spec.batchScheduler: yunikorn). YuniKorn
// keeps everything it needs on the pods: the driver, the run's first pod, carries the run's
// task groups (YuniKorn's gang), and every pod names its task group, its queue and the
// yunikorn scheduler. YuniKorn then reserves the whole gang with placeholder pods before the
// driver starts, and swaps each executor in for a placeholder of its group when the driver
// creates it.
//
// The task groups are "spark-driver" (minMember 1) and "spark-executor" (minMember the initial
// executors), each with the full resources of one of its pods (memory overhead, pyspark and
// off-heap memory, GPUs: sparkpod.DemandOf) and the pods' node selector, tolerations and
// affinity. A placeholder smaller than the pod that replaces it cannot be swapped, and the
// executor is then scheduled outside the gang, so the sizes must be exactly the pods'.
package yunikorn

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/sparkpod"
)

const (
	// Name is the value of spec.batchScheduler that selects YuniKorn.
	Name = "yunikorn"
	// SchedulerName is the Kubernetes scheduler name YuniKorn serves.
	SchedulerName = "yunikorn"

	// YuniKorn's pod labels and annotations (yunikorn-k8shim pkg/common/constants).
	LabelQueue                       = "queue"
	AnnotationTaskGroups             = "yunikorn.apache.org/task-groups"
	AnnotationTaskGroupName          = "yunikorn.apache.org/task-group-name"
	AnnotationSchedulingPolicyParams = "yunikorn.apache.org/schedulingPolicyParameters"

	// The task groups' names, those of YuniKorn's Spark example.
	TaskGroupDriver   = "spark-driver"
	TaskGroupExecutor = "spark-executor"
)

// Gang scheduling styles: Hard fails an application whose placeholders cannot all be placed
// within the timeout, Soft (YuniKorn's default) schedules it without its gang then.
const (
	StyleHard = "Hard"
	StyleSoft = "Soft"
)

// Options are the operator's settings of YuniKorn's gang scheduling, given to every run in
// the driver's schedulingPolicyParameters annotation.
type Options struct {
	// Style is the gang scheduling style, "" for YuniKorn's default (Soft).
	Style string
	// PlaceholderTimeout is how long placeholders wait for the real pods; 0 for YuniKorn's
	// default (15 minutes).
	PlaceholderTimeout time.Duration
}

// Validate refuses a style YuniKorn does not know and a timeout not in whole seconds.
func (o Options) Validate() error {
	switch o.Style {
	case "", StyleHard, StyleSoft:
	default:
		return fmt.Errorf("gang scheduling style %q: want %s or %s", o.Style, StyleHard, StyleSoft)
	}
	if o.PlaceholderTimeout < 0 || o.PlaceholderTimeout%time.Second != 0 {
		return fmt.Errorf("placeholder timeout %s: want a positive whole number of seconds, or 0 for YuniKorn's default", o.PlaceholderTimeout)
	}
	return nil
}

// policyParameters is the schedulingPolicyParameters annotation's value, "" when both are
// YuniKorn's defaults.
func (o Options) policyParameters() string {
	var params []string
	if o.PlaceholderTimeout > 0 {
		params = append(params, fmt.Sprintf("placeholderTimeoutInSeconds=%d", int64(o.PlaceholderTimeout/time.Second)))
	}
	if o.Style != "" {
		params = append(params, "gangSchedulingStyle="+o.Style)
	}
	return strings.Join(params, " ")
}

// Scheduler is the YuniKorn integration.
type Scheduler struct {
	Options Options
}

var _ scheduler.Interface = (*Scheduler)(nil)

// New returns the YuniKorn integration with opts, which it validates.
func New(opts Options) (*Scheduler, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Scheduler{Options: opts}, nil
}

func (*Scheduler) Name() string { return Name }

// SchedulerName is the scheduler its pods name, which the validating webhook knows of.
func (*Scheduler) SchedulerName() string { return SchedulerName }

// TaskGroup is one of YuniKorn's task groups as its annotation spells it (yunikorn-k8shim
// pkg/cache/amprotocol.go TaskGroup, whose JSON field names are matched case-insensitively).
type TaskGroup struct {
	Name         string              `json:"name"`
	MinMember    int32               `json:"minMember"`
	MinResource  map[string]string   `json:"minResource"`
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
	Affinity     *corev1.Affinity    `json:"affinity,omitempty"`
}

// TaskGroups are the task groups of a demand: the driver's, and the executors' unless the
// run starts with none (YuniKorn refuses a group of minMember 0).
func TaskGroups(d sparkpod.Demand) []TaskGroup {
	groups := []TaskGroup{taskGroup(TaskGroupDriver, d.Driver)}
	if d.Executor.Count > 0 {
		groups = append(groups, taskGroup(TaskGroupExecutor, d.Executor))
	}
	return groups
}

func taskGroup(name string, p sparkpod.PodDemand) TaskGroup {
	g := TaskGroup{Name: name, MinMember: p.Count, MinResource: quantities(p.Requests), Tolerations: p.Tolerations, Affinity: p.Affinity}
	if len(p.NodeSelector) > 0 {
		g.NodeSelector = p.NodeSelector
	}
	return g
}

func quantities(list corev1.ResourceList) map[string]string {
	out := make(map[string]string, len(list))
	for name, q := range list {
		if q.Cmp(resource.Quantity{}) > 0 {
			out[string(name)] = q.String()
		}
	}
	return out
}

// Admit lets every run through at once, YuniKorn holding its pods until the gang fits: the
// driver carries the task groups and the gang settings, every pod its task group, the queue
// label (of batchSchedulerOptions.queue) and the yunikorn scheduler.
func (s *Scheduler) Admit(_ context.Context, w scheduler.Workload) (scheduler.Decision, error) {
	groups := TaskGroups(w.Demand)
	encoded, err := json.Marshal(groups)
	if err != nil {
		return scheduler.Decision{}, fmt.Errorf("encoding the task groups of %s: %w", w.Key, err)
	}
	var labels map[string]string
	if w.Queue != "" {
		labels = map[string]string{LabelQueue: w.Queue}
	}
	driver := sparkpod.Scheduling{
		SchedulerName: SchedulerName,
		Labels:        labels,
		Annotations: map[string]string{
			AnnotationTaskGroups:    string(encoded),
			AnnotationTaskGroupName: TaskGroupDriver,
		},
	}
	if p := s.Options.policyParameters(); p != "" {
		driver.Annotations[AnnotationSchedulingPolicyParams] = p
	}
	executor := sparkpod.Scheduling{SchedulerName: SchedulerName, Labels: labels}
	if len(groups) > 1 {
		executor.Annotations = map[string]string{AnnotationTaskGroupName: TaskGroupExecutor}
	}
	return scheduler.Decision{Admit: true, Pods: sparkpod.RoleScheduling{Driver: driver, Executor: executor}}, nil
}

// Release has nothing to free: YuniKorn removes a finished application's placeholders itself.
func (*Scheduler) Release(context.Context, scheduler.Workload) error { return nil }
