/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package scheduler is the plug-in point for batch schedulers. Before a workload (an
// application's submission, or a SparkConnect session's server) starts, its batch scheduler
// decides on its demand (driver or server plus initial executors, from sparkpod): admit it now,
// with settings for its pods; hold it, saying why (and when to ask again); or reject it as
// never able to run. When the run ends, is suspended or replaced, the scheduler that admitted
// it releases what it held for it; what it holds goes with a deleted object by itself (see
// Interface.Release).
//
// A scheduler implements Interface; what else it can do it declares through the optional
// capability interfaces below, each discovered by a type assertion, so an integration
// implements only what it needs.
package scheduler

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
)

// Decision is a batch scheduler's answer for one workload.
type Decision struct {
	// Admit lets the workload start now, with Pods applied to its pods.
	Admit bool
	// Pods are the settings applied to the driver (or server) pod and the executor pod
	// template of an admitted workload: by both submitters, and by the SparkConnect controller.
	Pods sparkpod.RoleScheduling
	// Reason explains a held-back or rejected workload; it is shown in its status.
	Reason string
	// Reject says the workload can never be admitted as it is (bigger than any node
	// arrangement or than its queue's quota): it fails with Reason instead of waiting.
	Reject bool
	// RetryAfter, on a held decision, asks to be asked again after this long. Zero leaves it
	// to the controller: a scheduler that wakes the workloads it holds (Waking) is not asked
	// again until it wakes them; any other is asked again after the controller's retry
	// interval. Ignored when the workload is admitted or rejected.
	RetryAfter time.Duration
}

// Interface is implemented by each batch scheduler integration.
type Interface interface {
	// Name is the value of spec.batchScheduler that selects this scheduler.
	Name() string
	// Admit decides whether w's run may start now, given its demand. It is called again each
	// time the workload is reconsidered, so it must be idempotent: a run already admitted is
	// admitted again with the same pod settings.
	Admit(ctx context.Context, w Workload) (Decision, error)
	// Release frees whatever the scheduler holds for w's run. It is called on every way out
	// of a run that leaves its object in place (completion, failure, suspension, rerun, spec
	// change, preemption, a session's server ending), possibly more than once; an error is
	// retried. It goes to the scheduler that admitted the run, as recorded with the run
	// (status.batchScheduler, a session's status.server.batchScheduler), even if the spec or
	// the operator's default names another since; a run never admitted goes to the one named
	// now. If the admitting scheduler is no longer enabled, nothing is released: that is
	// logged and told in a BatchSchedulerNotEnabled warning event, never an error.
	//
	// Release is not called when the SparkApplication or SparkConnect is deleted: the
	// operator puts no finalizer on them, so that an operator that is down never blocks a
	// deletion. What a scheduler holds for a workload must therefore go with the object by
	// itself: kept on the object (the gang scheduler's reservation is an annotation on it, and
	// its cache's delete event brings a cycle that no longer counts it), in objects it owns
	// (ObjectsForRun: the garbage collector deletes them), or freed by the scheduler's own
	// watch of the deletion.
	Release(ctx context.Context, w Workload) error
}

// AnnotationPreempted, set on a SparkApplication by its batch scheduler to the submission ID
// of its current run, asks the controller to stop that run and queue the application again
// (a whole application preempted for a higher-priority one). A later submission ignores it.
const AnnotationPreempted = "scheduling.sparkop.dev/preempted"

// AnnotationAdmittedBy, on the first pod of a run (a session's server pod), names the batch
// scheduler that admitted the run. The status records it too, but the status write after the
// pod's creation can fail; the pod is what a later reconcile finds, and records from.
const AnnotationAdmittedBy = "scheduling.sparkop.dev/admitted-by"

// ConditionQueued is the SparkApplication condition that shows, while a batch scheduler holds
// the application, why it waits (its message is the Decision's Reason).
const ConditionQueued = "Queued"

// Waker brings held workloads back for another decision. The Registry gives one to schedulers
// that implement WithManager; it hands each workload to the controller of its kind. Having a
// Waker does not mean a scheduler uses it: whether held workloads wait for it is said by
// Waking.
type Waker interface {
	// Wake brings back workloads that may be admitted now. A controller handles them before
	// other work: a scheduler may keep capacity, idle, for them until they start.
	Wake(workloads ...WorkloadKey)
	// Refresh brings back workloads still held, only for them to show a reason that has
	// changed. A controller may handle them after all its other work.
	Refresh(workloads ...WorkloadKey)
}

// WithManager is implemented by schedulers that watch the cluster (nodes, pods, queues) or run
// loops of their own; they are set up once the operator's manager exists.
type WithManager interface {
	SetupWithManager(mgr manager.Manager, wake Waker) error
}

// Waking is implemented by schedulers that bring back the workloads they hold themselves,
// through the Waker they are given, as soon as one may be admitted (or its reason changes):
// a workload such a scheduler holds is not asked about again on a timer, unless a Decision
// says RetryAfter. A scheduler that does not implement it, or says false, has its held
// workloads asked again after the controller's retry interval (or the Decision's RetryAfter).
type Waking interface {
	WakesHeldWorkloads() bool
}

// Wakes reports whether s brings back the workloads it holds itself (Waking).
func Wakes(s Interface) bool {
	w, ok := s.(Waking)
	return ok && w.WakesHeldWorkloads()
}

// RetryAfter is when a held workload is to be asked about again: d.RetryAfter if the
// scheduler asked for a time, else never (0, false) for a scheduler that wakes what it holds,
// else the controller's interval.
func RetryAfter(s Interface, d Decision, interval time.Duration) (time.Duration, bool) {
	switch {
	case d.RetryAfter > 0:
		return d.RetryAfter, true
	case Wakes(s):
		return 0, false
	}
	return interval, true
}

// Pending is implemented by schedulers that hold every new run until a decision of their own
// (the gang scheduler's cycle): PendingReason is the reason such a run is held with until then.
// The controller shows it from the status write that records the run, so that the hold that
// follows writes nothing more.
type Pending interface {
	PendingReason() string
}

// PendingReason is the reason s holds a new run with before its first decision, if s says so
// (Pending).
func PendingReason(s Interface) (string, bool) {
	p, ok := s.(Pending)
	if !ok {
		return "", false
	}
	return p.PendingReason(), true
}

// Queueing is implemented by schedulers that keep the workloads they hold in queues of their
// own (the gang scheduler's Queues), ordered and limited by quotas they enforce. Such a
// workload queued by another system too (Kueue, through LabelKueueQueueName, which suspends it
// until admitted) would wait in two queues, each blind to the other's quota and order: the
// validating webhook refuses an application that asks for both.
type Queueing interface {
	QueuesWorkloads() bool
}

// ApplicationValidator is implemented by schedulers that can refuse an application's
// scheduling options up front (an unknown queue, say); the validating webhook calls it. An
// error of type field.ErrorTypeInternal (the scheduler could not tell, the API server being
// busy, say) is not the application's fault: the webhook refuses it as a retryable internal
// error, which clients retry, instead of as invalid.
type ApplicationValidator interface {
	ValidateApplication(ctx context.Context, app *v1beta2.SparkApplication) field.ErrorList
}

// PodPlacer is implemented by schedulers that can place a pod of an admitted workload while
// the pod is being created, so it need not wait for the scheduler to see it and let it go. The
// pod-mutating webhook offers it each Spark pod, after its own changes; owner is the pod's
// SparkApplication or SparkConnect as the webhook read it. PlacePod reports whether it changed
// pod; a pod it does not recognise as its own it leaves alone.
type PodPlacer interface {
	PlacePod(pod *corev1.Pod, owner client.Object) bool
}

// Registry holds the enabled batch schedulers by name, and the controllers' wakers by kind.
type Registry struct {
	mu         sync.RWMutex
	schedulers map[string]Interface
	wakers     map[Kind]Waker
	setUp      bool
}

// NewRegistry returns a registry with the given schedulers enabled.
func NewRegistry(schedulers ...Interface) *Registry {
	r := &Registry{schedulers: map[string]Interface{}, wakers: map[Kind]Waker{}}
	for _, s := range schedulers {
		r.Register(s)
	}
	return r
}

// Register enables s under its name, replacing any scheduler of the same name.
func (r *Registry) Register(s Interface) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.schedulers[s.Name()] = s
}

// Get returns the scheduler registered as name.
func (r *Registry) Get(name string) (Interface, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if s, ok := r.schedulers[name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("batch scheduler %q is not enabled in this operator (enabled: %v)", name, r.namesLocked())
}

// Names lists the enabled schedulers, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.namesLocked()
}

func (r *Registry) namesLocked() []string {
	names := make([]string, 0, len(r.schedulers))
	for n := range r.schedulers {
		names = append(names, n)
	}
	sort.Strings(names)
	return slices.Clip(names)
}

// PlacePod offers pod to the enabled schedulers that can place pods (PodPlacer) until one
// does. Each recognises its own pods by what its admission set on them, so the order is moot.
func (r *Registry) PlacePod(pod *corev1.Pod, owner client.Object) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, s := range r.schedulers {
		if p, ok := s.(PodPlacer); ok && p.PlacePod(pod, owner) {
			return true
		}
	}
	return false
}

// HandleWakes makes w the waker of workloads of kind: the controller of that kind registers
// it, before or after the schedulers are set up.
func (r *Registry) HandleWakes(kind Kind, w Waker) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wakers[kind] = w
}

// Wake hands each workload to the waker of its kind; a kind no controller runs is not woken.
func (r *Registry) Wake(workloads ...WorkloadKey) {
	r.each(workloads, Waker.Wake)
}

// Refresh hands each workload to the waker of its kind, as Wake does, to refresh.
func (r *Registry) Refresh(workloads ...WorkloadKey) {
	r.each(workloads, Waker.Refresh)
}

func (r *Registry) each(workloads []WorkloadKey, call func(Waker, ...WorkloadKey)) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, k := range workloads {
		if w := r.wakers[k.Kind]; w != nil {
			call(w, k)
		}
	}
}

// SetupWithManager sets up the enabled schedulers that watch the cluster, with the registry as
// their Waker. Every controller that admits through the registry calls it; the schedulers are
// set up once.
func (r *Registry) SetupWithManager(mgr manager.Manager) error {
	r.mu.Lock()
	if r.setUp {
		r.mu.Unlock()
		return nil
	}
	r.setUp = true
	var watching []Interface
	for _, s := range r.schedulers {
		if _, ok := s.(WithManager); ok {
			watching = append(watching, s)
		}
	}
	r.mu.Unlock()
	for _, s := range watching {
		if err := s.(WithManager).SetupWithManager(mgr, r); err != nil {
			return fmt.Errorf("setting up batch scheduler %s: %w", s.Name(), err)
		}
	}
	return nil
}

// AdmitAll is the default scheduler: it lets every workload through unchanged and holds
// nothing. Applications that name no batch scheduler use it, as do sessions when the operator
// has no default batch scheduler.
type AdmitAll struct{}

// DefaultName is the registry name of AdmitAll.
const DefaultName = "default"

func (AdmitAll) Name() string { return DefaultName }

func (AdmitAll) Admit(context.Context, Workload) (Decision, error) {
	return Decision{Admit: true}, nil
}

func (AdmitAll) Release(context.Context, Workload) error { return nil }

// Unavailable stands for a batch scheduler the operator was asked to enable and cannot run on
// this cluster (an API it needs is not served): workloads naming it fail with Why, instead of
// waiting for a scheduler that never comes or being refused as unknown.
type Unavailable struct {
	SchedulerName, Why string
}

func (u Unavailable) Name() string { return u.SchedulerName }

// Admit rejects every workload, saying why the scheduler is unavailable.
func (u Unavailable) Admit(context.Context, Workload) (Decision, error) {
	return Decision{Reject: true, Reason: u.Why}, nil
}

func (Unavailable) Release(context.Context, Workload) error { return nil }
