/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package volcano is the Volcano integration (spec.batchScheduler: volcano): each run gets a
// Volcano PodGroup (scheduling.volcano.sh/v1beta1), named after the run and owned by its
// SparkApplication or SparkConnect, and its pods are created naming it and the volcano
// scheduler, so Volcano schedules them as one group from the first pod on.
//
// How the gang is held. A Spark driver creates its executors only once it runs, so a group
// whose minMember counted the executors could never start: Volcano's gang plugin would wait
// for pods that do not exist yet. The group's minMember is therefore 1 (the driver), and its
// minResources the whole gang. Volcano lets such a group in (enqueue) when its minResources fit
// beside the groups already in, but once the driver is bound the group counts as ready and
// nothing keeps its executors' room: measured, every driver started at once (issue #47). So
// Volcano is served as a variant of the gang scheduler's core (gang.ForeignPlacement): the core
// admits a run only when its whole gang fits the nodes, node by node, and keeps that room until
// its pods are bound; Volcano places the pods on the nodes planned for them. A Volcano queue's
// capability is the quota of the core's queue standing for it (QueueLimits), so a run starts
// only while its whole gang fits what is left of it too.
package volcano

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

const (
	// Name is the value of spec.batchScheduler that selects Volcano.
	Name = "volcano"
	// SchedulerName is the Kubernetes scheduler name Volcano's scheduler serves.
	SchedulerName = "volcano"
	// AnnotationGroupName on a pod names its PodGroup (Volcano's KubeGroupNameAnnotationKey).
	AnnotationGroupName = "scheduling.k8s.io/group-name"
	// podGroupMinMember: the driver alone, see the package comment.
	podGroupMinMember = 1
)

// PodGroupKind is Volcano's PodGroup; QueueKind its (cluster-scoped) Queue.
var (
	PodGroupKind = schema.GroupVersionKind{Group: "scheduling.volcano.sh", Version: "v1beta1", Kind: "PodGroup"}
	QueueKind    = schema.GroupVersionKind{Group: "scheduling.volcano.sh", Version: "v1beta1", Kind: "Queue"}
)

// queueRetry is how soon a run held for a missing queue is asked about again.
const queueRetry = 30 * time.Second

// PodGroupCRD is the CRD the integration needs: Volcano's PodGroup.
var PodGroupCRD = scheduler.CRD{Name: "podgroups.scheduling.volcano.sh", GVK: PodGroupKind}

// requireCRDs is nil when Volcano's CRDs are installed (scheduler.RequireCRDs).
func (s *Scheduler) requireCRDs() error {
	return scheduler.RequireCRDs(s.mapper(), Name, "Volcano", PodGroupCRD)
}

// Scheduler is the Volcano integration.
type Scheduler struct {
	// Client creates nothing itself (the controllers create the PodGroup, EnsureRunObjects);
	// it deletes a finished run's PodGroup, and its RESTMapper tells whether Volcano's CRDs
	// are installed.
	Client client.Client
	// Reader reads Volcano Queues uncached, to tell whether the one a workload names exists
	// (nil: not checked). Queues are cluster-wide: an operator not allowed to read them does
	// not check, and leaves it to Volcano.
	Reader client.Reader

	// limits remembers the queues' capabilities it read (QueueLimits).
	limits gang.Remembered[[]gang.ForeignQueue]
}

var (
	_ gang.ForeignPlacement = (*Scheduler)(nil)
	_ gang.PlacementObjects = (*Scheduler)(nil)
	_ gang.PlacementRelease = (*Scheduler)(nil)
)

// New returns the Volcano integration using c, and r to read Volcano Queues.
func New(c client.Client, r client.Reader) *Scheduler { return &Scheduler{Client: c, Reader: r} }

func (*Scheduler) Name() string { return Name }

// SchedulerName is the scheduler its pods name, which the validating webhook knows of.
func (*Scheduler) SchedulerName() string { return SchedulerName }

// Check rejects a run in a cluster without Volcano's CRDs, saying so, and holds one naming a
// Volcano queue that does not exist, saying so, until it does (Volcano would keep its PodGroup
// pending without a word). Otherwise the gang scheduler's core decides (gang.ForeignPlacement).
func (s *Scheduler) Check(ctx context.Context, w scheduler.Workload) (scheduler.Decision, bool, error) {
	if err := s.requireCRDs(); err != nil {
		if scheduler.IsMissingCRD(err) {
			return scheduler.Decision{Reject: true, Reason: err.Error()}, false, nil
		}
		return scheduler.Decision{}, false, err
	}
	switch exists, err := s.queueExists(ctx, w.Queue); {
	case err != nil:
		return scheduler.Decision{}, false, err
	case !exists:
		return scheduler.Decision{Reason: fmt.Sprintf("Volcano queue %q does not exist", w.Queue), RetryAfter: queueRetry}, false, nil
	}
	if w.Run == "" {
		return scheduler.Decision{}, false, fmt.Errorf("workload %s has no run to name its PodGroup after", w.Key)
	}
	return scheduler.Decision{}, true, nil
}

// Pods of a run the core admitted: on the nodes planned for them, naming the run's PodGroup and
// the volcano scheduler from their creation, so that no pod is ever scheduled outside its group.
func (s *Scheduler) Pods(w scheduler.Workload, r gang.Reservation) (sparkpod.RoleScheduling, error) {
	own := sparkpod.Scheduling{
		SchedulerName: SchedulerName,
		Annotations:   map[string]string{AnnotationGroupName: PodGroupName(w)},
	}
	return r.PodsPlacedElsewhere(sparkpod.RoleScheduling{Driver: own, Executor: own}), nil
}

// RunObjects is the run's PodGroup: minMember 1 and the whole gang as minResources (see the
// package comment), in the workload's queue and with its priority class.
func (s *Scheduler) RunObjects(_ context.Context, w scheduler.Workload, _ gang.Reservation) ([]client.Object, error) {
	minResources := map[string]any{}
	for name, q := range w.Demand.Total() {
		// A pod count is not a resource Volcano reserves; minMember counts pods.
		if name == corev1.ResourcePods || q.IsZero() {
			continue
		}
		minResources[string(name)] = q.String()
	}
	spec := map[string]any{
		"minMember":    int64(podGroupMinMember),
		"minResources": minResources,
	}
	if w.Queue != "" {
		spec["queue"] = w.Queue
	}
	if w.PriorityClassName != "" {
		spec["priorityClassName"] = w.PriorityClassName
	}
	pg := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	pg.SetGroupVersionKind(PodGroupKind)
	pg.SetName(PodGroupName(w))
	pg.SetNamespace(w.Key.Namespace)
	return []client.Object{pg}, nil
}

// Release deletes the run's PodGroup: Volcano no longer reserves anything for a run that has
// ended. A deleted application's PodGroups go with it (owner references).
func (s *Scheduler) Release(ctx context.Context, w scheduler.Workload) error {
	if w.Run == "" {
		return nil
	}
	pg := &unstructured.Unstructured{}
	pg.SetGroupVersionKind(PodGroupKind)
	pg.SetName(PodGroupName(w))
	pg.SetNamespace(w.Key.Namespace)
	err := s.Client.Delete(ctx, pg)
	if client.IgnoreNotFound(err) == nil || meta.IsNoMatchError(err) {
		return nil
	}
	return fmt.Errorf("deleting PodGroup %s/%s: %w", w.Key.Namespace, pg.GetName(), err)
}

// ValidateApplication refuses an application naming Volcano in a cluster without its CRDs,
// or naming a Volcano queue that does not exist.
func (s *Scheduler) ValidateApplication(ctx context.Context, app *v1beta2.SparkApplication) field.ErrorList {
	p := field.NewPath("spec", "batchScheduler")
	err := s.requireCRDs()
	switch {
	case scheduler.IsMissingCRD(err):
		return field.ErrorList{field.Forbidden(p, err.Error())}
	case err != nil:
		return field.ErrorList{field.InternalError(p, err)}
	}
	queue := scheduler.ApplicationWorkload(app).Queue
	qp := field.NewPath("spec", "batchSchedulerOptions", "queue")
	switch exists, err := s.queueExists(ctx, queue); {
	case err != nil:
		// Not the application's fault (the API server busy, say): refused as an internal
		// error, which the client retries.
		return field.ErrorList{field.InternalError(qp, err)}
	case !exists:
		return field.ErrorList{field.NotFound(qp, queue)}
	}
	return nil
}

// queueExists reports whether the Volcano queue name exists. No queue named, no Reader, or
// an operator not allowed to read Queues: true, Volcano decides.
func (s *Scheduler) queueExists(ctx context.Context, name string) (bool, error) {
	if name == "" || s.Reader == nil {
		return true, nil
	}
	q := &unstructured.Unstructured{}
	q.SetGroupVersionKind(QueueKind)
	switch err := s.Reader.Get(ctx, client.ObjectKey{Name: name}, q); {
	case err == nil, apierrors.IsForbidden(err):
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	default:
		return false, fmt.Errorf("reading Volcano queue %s: %w", name, err)
	}
}

func (s *Scheduler) mapper() meta.RESTMapper {
	if s.Client == nil {
		return nil
	}
	return s.Client.RESTMapper()
}

// maxNameLength is the longest object name (a DNS subdomain).
const maxNameLength = 253

// PodGroupName is the name of the PodGroup of w's run: the workload's name and the run, so
// that a rerun never finds the group of the run before it.
func PodGroupName(w scheduler.Workload) string {
	suffix := "-pg-" + w.Run
	name := w.Key.Name
	if len(name)+len(suffix) > maxNameLength {
		name = strings.TrimRight(name[:maxNameLength-len(suffix)], "-.")
	}
	return name + suffix
}
