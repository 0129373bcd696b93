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
// minMember is 1, never the gang's size: Spark's driver creates the executors once it runs, so
// a minMember counting executors that do not exist yet would hold the driver back for ever.
// With minMember 1, Coscheduling lets a driver through only when the cluster's free capacity
// covers minResources, but it keeps nothing for the executors that follow: drivers checked one
// after another, before any executor exists, all see the same free capacity and all start
// (Kubeflow's groups "that do not really gang"). So this scheduler starts one gang at a time:
// it admits a run only once the gang admitted before it is placed (all of its initial pods
// bound to nodes), has ended, or has had ScheduleTimeout to place its executors since its
// driver was bound. Coscheduling's check then always sees the capacity the earlier gangs
// really take, and a driver it lets through has room for its executors. Held runs are
// admitted oldest first.
package coscheduling

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/sparkpod"
)

// DefaultName is the scheduler name Kubeflow's examples use (spec.batchScheduler:
// kube-scheduler), which the local cluster's Coscheduling scheduler serves.
const DefaultName = "kube-scheduler"

// LabelPodGroup is the label by which Coscheduling finds a pod's PodGroup.
const LabelPodGroup = "scheduling.x-k8s.io/pod-group"

// Annotations on the PodGroups this scheduler creates.
const (
	// AnnotationGangSize is how many pods the run starts with (driver and initial
	// executors): the gang is placed once that many of its pods are bound.
	AnnotationGangSize = "scheduling.sparkop.dev/gang-size"
	// LabelBatchScheduler names the scheduler that created a PodGroup.
	LabelBatchScheduler = "scheduling.sparkop.dev/batch-scheduler"
)

// PodGroupCRD is the CRD this scheduler needs.
var PodGroupCRD = scheduler.CRD{
	Name: "podgroups.scheduling.x-k8s.io",
	GVK:  schema.GroupVersionKind{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroup"},
}

const install = "scheduler-plugins' manifests (manifests/coscheduling/crd.yaml), with its kube-scheduler running the Coscheduling plugin"

// DefaultScheduleTimeout is the PodGroup's scheduleTimeoutSeconds and how long a started gang
// may take to place its executors before the next one starts, when Config leaves it zero.
const DefaultScheduleTimeout = time.Minute

// retry is how soon a held run is asked about again: this scheduler does not watch pods, so
// the controllers poll it while a gang is being placed.
const retry = time.Second

// Config configures one Coscheduling scheduler.
type Config struct {
	// Name is the kube-scheduler profile name: the value of spec.batchScheduler that selects
	// this scheduler and the pods' schedulerName.
	Name string
	// ScheduleTimeout is the PodGroups' scheduleTimeoutSeconds, and how long a gang whose
	// driver is bound may take to place its executors before the next gang starts anyway.
	ScheduleTimeout time.Duration
	// Mapper tells whether the PodGroup CRD is installed; Reader lists the pods of the gang
	// being placed, and the PodGroups of gangs started before the operator (re)started.
	Mapper meta.RESTMapper
	Reader client.Reader
	Clock  clock.PassiveClock
}

// Scheduler admits the runs of applications (and sessions) that name Config.Name.
type Scheduler struct {
	cfg Config

	mu sync.Mutex
	// loaded are the namespaces whose gangs started by an earlier operator process are known.
	loaded map[string]bool
	// placing are the gangs admitted and not yet placed, by workload.
	placing map[scheduler.WorkloadKey]*gang
	// waiting are the workloads held, with when they were created and last asked about, so
	// the oldest goes first.
	waiting map[scheduler.WorkloadKey]waiter
	// busy names the gang last found being placed, at busyAt (see busyWith).
	busy   string
	busyAt time.Time
}

// gang is an admitted run being placed.
type gang struct {
	namespace, podGroup, run string
	size                     int
	// since is when it was admitted (or found, after a restart); bound is when its first pod
	// was seen bound to a node.
	since, bound time.Time
}

type waiter struct {
	created, seen time.Time
}

var (
	_ scheduler.Interface            = (*Scheduler)(nil)
	_ scheduler.ObjectsForRun        = (*Scheduler)(nil)
	_ scheduler.ApplicationValidator = (*Scheduler)(nil)
)

// New returns a Coscheduling scheduler.
func New(cfg Config) *Scheduler {
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if cfg.ScheduleTimeout <= 0 {
		cfg.ScheduleTimeout = DefaultScheduleTimeout
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Scheduler{cfg: cfg, loaded: map[string]bool{}, placing: map[scheduler.WorkloadKey]*gang{}, waiting: map[scheduler.WorkloadKey]waiter{}}
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

// Admit admits w's run, with its pods in its PodGroup and on this scheduler, unless another
// gang is being placed or an older workload waits; it rejects it when the PodGroup CRD is not
// installed.
func (s *Scheduler) Admit(ctx context.Context, w scheduler.Workload) (scheduler.Decision, error) {
	switch err := s.requireCRD(); {
	case scheduler.IsMissingCRD(err):
		return scheduler.Decision{Reject: true, Reason: err.Error()}, nil
	case err != nil:
		return scheduler.Decision{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(ctx, w.Key.Namespace); err != nil {
		return scheduler.Decision{}, err
	}
	now := s.cfg.Clock.Now()
	if g, ok := s.placing[w.Key]; ok && g.run == w.Run {
		return s.admitted(w), nil
	}
	delete(s.placing, w.Key) // an earlier run of w, never released
	if other, err := s.busyWith(ctx, now); err != nil {
		return scheduler.Decision{}, err
	} else if other != "" {
		s.wait(w, now)
		return scheduler.Decision{Reason: fmt.Sprintf("waiting for %s to place the gang of %s: the gangs of %s start one at a time, "+
			"so that Coscheduling's capacity check sees what the gangs before them take", s.cfg.Name, other, s.cfg.Name), RetryAfter: retry}, nil
	}
	if older := s.olderWaiting(w, now); older != "" {
		s.wait(w, now)
		return scheduler.Decision{Reason: fmt.Sprintf("waiting for %s, which was created earlier, to start first", older), RetryAfter: retry}, nil
	}
	delete(s.waiting, w.Key)
	s.busy, s.busyAt = w.Key.String(), now
	s.placing[w.Key] = &gang{namespace: w.Key.Namespace, podGroup: PodGroupName(w.Key.Name, w.Run), run: w.Run,
		size: int(w.Demand.Driver.Count + w.Demand.Executor.Count), since: now}
	return s.admitted(w), nil
}

// admitted is the decision for w's admitted run.
func (s *Scheduler) admitted(w scheduler.Workload) scheduler.Decision {
	pods := podScheduling(s.cfg.Name, PodGroupName(w.Key.Name, w.Run))
	d := scheduler.Decision{Admit: true}
	d.Pods.Driver, d.Pods.Executor = pods, pods
	return d
}

// podScheduling puts a pod on the scheduler name in the PodGroup pg.
func podScheduling(name, pg string) sparkpod.Scheduling {
	return sparkpod.Scheduling{SchedulerName: name, Labels: map[string]string{LabelPodGroup: pg}}
}

func (s *Scheduler) wait(w scheduler.Workload, now time.Time) {
	created := now
	if w.Object != nil {
		created = w.Object.GetCreationTimestamp().Time
	}
	s.waiting[w.Key] = waiter{created: created, seen: now}
}

// olderWaiting names a held workload created before w and asked about lately (a workload
// deleted or admitted elsewhere stops being asked about, and is forgotten).
func (s *Scheduler) olderWaiting(w scheduler.Workload, now time.Time) string {
	created := now
	if w.Object != nil {
		created = w.Object.GetCreationTimestamp().Time
	}
	oldest := ""
	var oldestAt time.Time
	for k, o := range s.waiting {
		if now.Sub(o.seen) > 5*retry {
			delete(s.waiting, k)
			continue
		}
		if k == w.Key || !o.created.Before(created) {
			continue
		}
		if oldest == "" || o.created.Before(oldestAt) {
			oldest, oldestAt = k.String(), o.created
		}
	}
	return oldest
}

// recheck is how long busyWith trusts that a gang is still being placed before it lists its pods
// again: the held workloads ask every second each, and would otherwise each list them.
const recheck = 250 * time.Millisecond

// busyWith names a gang being placed, if any: the one last seen being placed, if seen lately,
// else what unplaced finds.
func (s *Scheduler) busyWith(ctx context.Context, now time.Time) (string, error) {
	if s.busy != "" && now.Sub(s.busyAt) < recheck {
		return s.busy, nil
	}
	other, err := s.unplaced(ctx, now)
	if err != nil {
		return "", err
	}
	s.busy, s.busyAt = other, now
	return other, nil
}

// unplaced forgets the gangs that are placed, have ended or have had their time, and names one
// that is still being placed, if any.
func (s *Scheduler) unplaced(ctx context.Context, now time.Time) (string, error) {
	for k, g := range s.placing {
		var pods corev1.PodList
		if err := s.cfg.Reader.List(ctx, &pods, client.InNamespace(g.namespace), client.MatchingLabels{LabelPodGroup: g.podGroup}); err != nil {
			return "", fmt.Errorf("listing the pods of PodGroup %s/%s: %w", g.namespace, g.podGroup, err)
		}
		bound, ended := 0, false
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" {
				bound++
			}
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				ended = true
			}
		}
		if bound > 0 && g.bound.IsZero() {
			g.bound = now
		}
		// Its time runs from its first pod's binding: a driver waiting for the capacity of
		// the whole gang is still being placed, however long it waits. A gang without pods
		// for as long (its run suspended or rerun while the operator was down) is not.
		timedOut := !g.bound.IsZero() && now.Sub(g.bound) >= s.cfg.ScheduleTimeout
		gone := len(pods.Items) == 0 && now.Sub(g.since) >= s.cfg.ScheduleTimeout
		if bound >= g.size || ended || timedOut || gone {
			if timedOut && bound < g.size {
				log.FromContext(ctx).Info("a gang did not place all its pods in time; starting the next one", "scheduler", s.cfg.Name,
					"workload", k.String(), "podGroup", g.podGroup, "bound", bound, "size", g.size)
			}
			delete(s.placing, k)
			continue
		}
		return k.String(), nil
	}
	return "", nil
}

// load learns, once per process and namespace, the gangs of namespace that an earlier operator
// process started and that may still be being placed: this scheduler's PodGroups there (those
// whose pods are all bound, or ended, are forgotten by the next unplaced). Per namespace, so
// that an operator whose rights are bound in its job namespaces only can list them.
func (s *Scheduler) load(ctx context.Context, namespace string) error {
	if s.loaded[namespace] {
		return nil
	}
	var groups unstructured.UnstructuredList
	groups.SetGroupVersionKind(PodGroupCRD.GVK.GroupVersion().WithKind(PodGroupCRD.GVK.Kind + "List"))
	if err := s.cfg.Reader.List(ctx, &groups, client.InNamespace(namespace), client.MatchingLabels{LabelBatchScheduler: s.cfg.Name}); err != nil {
		return fmt.Errorf("listing the PodGroups of %s in namespace %s: %w", s.cfg.Name, namespace, err)
	}
	for _, pg := range groups.Items {
		size, err := strconv.Atoi(pg.GetAnnotations()[AnnotationGangSize])
		if err != nil {
			continue
		}
		key := scheduler.WorkloadKey{}
		for _, ref := range pg.GetOwnerReferences() {
			key.Kind, key.Namespace, key.Name = scheduler.Kind(ref.Kind), pg.GetNamespace(), ref.Name
		}
		if key.Name == "" {
			continue
		}
		s.placing[key] = &gang{namespace: pg.GetNamespace(), podGroup: pg.GetName(), run: pg.GetLabels()[labelRun], size: size,
			since: s.cfg.Clock.Now()}
	}
	s.loaded[namespace] = true
	return nil
}

// labelRun carries a PodGroup's run (a submission ID), so a restarted operator matches it with
// the workload's current run.
const labelRun = "scheduling.sparkop.dev/run"

// Release forgets w's gang, if it is still being placed: its run is over or torn down. Its
// PodGroup stays, owned by the application, with the pods' record; a new run has its own.
func (s *Scheduler) Release(_ context.Context, w scheduler.Workload) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.placing[w.Key]; ok && (g.run == w.Run || w.Run == "") {
		delete(s.placing, w.Key)
		s.busy = "" // the next Admit looks again
	}
	delete(s.waiting, w.Key)
	return nil
}

// RunObjects is the run's PodGroup: minMember 1 (see the package comment), minResources the
// whole gang, and the schedule timeout.
func (s *Scheduler) RunObjects(_ context.Context, w scheduler.Workload, _ scheduler.Decision) ([]client.Object, error) {
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
	labels := map[string]string{LabelBatchScheduler: s.cfg.Name}
	if w.Run != "" && len(w.Run) <= 63 {
		labels[labelRun] = w.Run
	}
	pg.SetLabels(labels)
	pg.SetAnnotations(map[string]string{AnnotationGangSize: strconv.Itoa(int(w.Demand.Driver.Count + w.Demand.Executor.Count))})
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
