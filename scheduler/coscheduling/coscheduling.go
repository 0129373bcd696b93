/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package coscheduling is the batch scheduler of applications that name a kube-scheduler
// running scheduler-plugins' Coscheduling plugin (spec.batchScheduler: kube-scheduler, as the
// Kubeflow operator names it; the names allowed are --kube-scheduler-names).
//
// Each run gets a PodGroup (scheduling.x-k8s.io/v1alpha1), owned by the application and named
// after the run, whose minResources are the whole gang (sparkpod.DemandOf: driver and initial
// executors, memory overhead and pyspark memory included, dynamic allocation's initial
// executors); its pods carry the pod-group label and the scheduler's name from their creation.
//
// How the gang is held. minMember is 1, never the gang's size: Spark's driver creates the
// executors once it runs, so a minMember counting executors that do not exist yet would hold
// the driver back for ever. With minMember 1, Coscheduling lets a driver through when the
// cluster's free capacity, summed over the nodes, covers minResources, but it keeps nothing for
// the executors that follow: drivers checked one after another all see the same free capacity
// and all start, and a sum over the nodes says nothing of whether an executor fits on one
// (measured: partial starts, issue #47). So each name is served as a variant of the gang
// scheduler's core (gang.ForeignPlacement): the core admits a run only when its whole gang fits
// the nodes, node by node, and keeps that room until its pods are bound; Coscheduling's
// scheduler places the pods on the nodes planned for them.
package coscheduling

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/sparkpod"
)

// DefaultName is the scheduler name Kubeflow's examples use (spec.batchScheduler:
// kube-scheduler), which the local cluster's Coscheduling scheduler serves.
const DefaultName = "kube-scheduler"

// LabelPodGroup is the label by which Coscheduling finds a pod's PodGroup.
const LabelPodGroup = "scheduling.x-k8s.io/pod-group"

// LabelBatchScheduler names the scheduler that created a PodGroup.
const LabelBatchScheduler = "scheduling.sparkop.dev/batch-scheduler"

// PodGroupCRD is the CRD this scheduler needs.
var PodGroupCRD = scheduler.CRD{
	Name: "podgroups.scheduling.x-k8s.io",
	GVK:  schema.GroupVersionKind{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroup"},
}

const install = "scheduler-plugins' manifests (manifests/coscheduling/crd.yaml), with its kube-scheduler running the Coscheduling plugin"

// DefaultScheduleTimeout is the PodGroup's scheduleTimeoutSeconds when Config leaves it zero.
const DefaultScheduleTimeout = time.Minute

// Config configures one Coscheduling scheduler.
type Config struct {
	// Name is the kube-scheduler profile name: the value of spec.batchScheduler that selects
	// this scheduler and the pods' schedulerName.
	Name string
	// ScheduleTimeout is the PodGroups' scheduleTimeoutSeconds.
	ScheduleTimeout time.Duration
	// Mapper tells whether the PodGroup CRD is installed.
	Mapper meta.RESTMapper
}

// Scheduler places the runs the gang scheduler's core admits for applications (and sessions)
// that name Config.Name.
type Scheduler struct {
	cfg Config
}

var (
	_ gang.ForeignPlacement = (*Scheduler)(nil)
	_ gang.PlacementObjects = (*Scheduler)(nil)
)

// New returns a Coscheduling scheduler.
func New(cfg Config) *Scheduler {
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if cfg.ScheduleTimeout <= 0 {
		cfg.ScheduleTimeout = DefaultScheduleTimeout
	}
	return &Scheduler{cfg: cfg}
}

func (s *Scheduler) Name() string { return s.cfg.Name }

// SchedulerName is the Kubernetes scheduler of its pods (the webhook knows it as one that runs).
func (s *Scheduler) SchedulerName() string { return s.cfg.Name }

// PodGroupName is the PodGroup of run of the workload named name: the name (cut to fit a label
// value) and a hash of the run, so that each run has its own group.
func PodGroupName(name, run string) string {
	sum := sha256.Sum256([]byte(run))
	suffix := hex.EncodeToString(sum[:])[:8]
	const most = 63 - 1 - 8
	if len(name) > most {
		name = name[:most]
	}
	// A cut name may end in '-' or '.', which a DNS label or label value cannot.
	name = strings.TrimRight(name, "-.")
	if name == "" {
		return "pg-" + suffix
	}
	return name + "-" + suffix
}

// Check rejects a run when the PodGroup CRD is not installed; otherwise the gang scheduler's
// core decides.
func (s *Scheduler) Check(_ context.Context, _ scheduler.Workload) (scheduler.Decision, bool, error) {
	switch err := s.requireCRD(); {
	case scheduler.IsMissingCRD(err):
		return scheduler.Decision{Reject: true, Reason: err.Error()}, false, nil
	case err != nil:
		return scheduler.Decision{}, false, err
	}
	return scheduler.Decision{}, true, nil
}

// Pods of a run the core admitted: in its PodGroup and on this scheduler, on the nodes planned
// for them.
func (s *Scheduler) Pods(w scheduler.Workload, r gang.Reservation) (sparkpod.RoleScheduling, error) {
	pods := sparkpod.Scheduling{SchedulerName: s.cfg.Name, Labels: map[string]string{LabelPodGroup: PodGroupName(w.Key.Name, w.Run)}}
	return r.PodsPlacedElsewhere(sparkpod.RoleScheduling{Driver: pods, Executor: pods}), nil
}

// RunObjects is the run's PodGroup: minMember 1 (see the package comment), minResources the
// whole gang, and the schedule timeout. It stays, owned by the application, with the pods'
// record; a new run has its own.
func (s *Scheduler) RunObjects(_ context.Context, w scheduler.Workload, _ gang.Reservation) ([]client.Object, error) {
	total := w.Demand.Total()
	delete(total, corev1.ResourcePods) // Coscheduling counts pods by minMember
	resources := map[string]any{}
	for name, q := range total {
		resources[string(name)] = q.String()
	}
	pg := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"minMember":              int64(1),
			"minResources":           resources,
			"scheduleTimeoutSeconds": int64(s.cfg.ScheduleTimeout / time.Second),
		},
	}}
	pg.SetGroupVersionKind(PodGroupCRD.GVK)
	pg.SetName(PodGroupName(w.Key.Name, w.Run))
	pg.SetNamespace(w.Key.Namespace)
	pg.SetLabels(map[string]string{LabelBatchScheduler: s.cfg.Name})
	return []client.Object{pg}, nil
}

// ValidateApplication refuses an application naming this scheduler when the PodGroup CRD is
// not installed.
func (s *Scheduler) ValidateApplication(_ context.Context, _ *v1beta2.SparkApplication) field.ErrorList {
	p := field.NewPath("spec", "batchScheduler")
	switch err := s.requireCRD(); {
	case scheduler.IsMissingCRD(err):
		return field.ErrorList{field.Invalid(p, s.cfg.Name, err.Error())}
	case err != nil:
		return field.ErrorList{field.InternalError(p, err)}
	}
	return nil
}

func (s *Scheduler) requireCRD() error {
	return scheduler.RequireCRDs(s.cfg.Mapper, s.cfg.Name, install, PodGroupCRD)
}
