/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package scheduler is the plug-in point for batch schedulers. Before an application is
// submitted, its batch scheduler decides on its demand (driver plus initial executors, from
// sparkpod): admit it now, with settings for its pods; hold it, saying why; or reject it as
// never able to run. When the application ends, is deleted, suspended or rerun, the scheduler
// releases what it held for it.
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

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
)

// Decision is a batch scheduler's answer for one application.
type Decision struct {
	// Admit lets the application be submitted now, with Pods applied to its pods.
	Admit bool
	// Pods are the settings both submitters apply to the driver pod and the executor pod
	// template of an admitted application.
	Pods sparkpod.RoleScheduling
	// Reason explains a held-back or rejected application; it is shown in its status.
	Reason string
	// Reject says the application can never be admitted as it is (bigger than any node
	// arrangement or than its queue's quota): it fails with Reason instead of waiting.
	Reject bool
}

// Interface is implemented by each batch scheduler integration.
type Interface interface {
	// Name is the value of spec.batchScheduler that selects this scheduler.
	Name() string
	// Admit decides whether app (a defaulted copy it must not change) may be submitted now,
	// given its demand. It is called again each time the application is reconsidered, so it
	// must be idempotent: an application already admitted is admitted again with the same
	// pod settings.
	Admit(ctx context.Context, app *v1beta2.SparkApplication, demand sparkpod.Demand) (Decision, error)
	// Release frees whatever the scheduler holds for app. It is called on every way out
	// (completion, failure, deletion, suspension, rerun, spec change), possibly more than once;
	// an error is retried.
	Release(ctx context.Context, app *v1beta2.SparkApplication) error
}

// AnnotationPreempted, set on a SparkApplication by its batch scheduler to the submission ID
// of its current run, asks the controller to stop that run and queue the application again
// (a whole application preempted for a higher-priority one). A later submission ignores it.
const AnnotationPreempted = "scheduling.sparkop.dev/preempted"

// ConditionQueued is the SparkApplication condition that shows, while a batch scheduler holds
// the application, why it waits (its message is the Decision's Reason).
const ConditionQueued = "Queued"

// Waker brings held applications back for another decision. The controller gives one to
// schedulers that implement WithManager.
type Waker interface {
	Wake(apps ...types.NamespacedName)
}

// WithManager is implemented by schedulers that watch the cluster (nodes, pods, queues) or run
// loops of their own; they are set up once the operator's manager exists.
type WithManager interface {
	SetupWithManager(mgr manager.Manager, wake Waker) error
}

// ApplicationValidator is implemented by schedulers that can refuse an application's
// scheduling options up front (an unknown queue, say); the validating webhook calls it.
type ApplicationValidator interface {
	ValidateApplication(ctx context.Context, app *v1beta2.SparkApplication) field.ErrorList
}

// Registry holds the enabled batch schedulers by name.
type Registry struct {
	mu         sync.RWMutex
	schedulers map[string]Interface
}

// NewRegistry returns a registry with the given schedulers enabled.
func NewRegistry(schedulers ...Interface) *Registry {
	r := &Registry{schedulers: map[string]Interface{}}
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

// AdmitAll is the default scheduler: it lets every application through unchanged and holds
// nothing. Applications that name no batch scheduler use it.
type AdmitAll struct{}

// DefaultName is the registry name of AdmitAll.
const DefaultName = "default"

func (AdmitAll) Name() string { return DefaultName }

func (AdmitAll) Admit(context.Context, *v1beta2.SparkApplication, sparkpod.Demand) (Decision, error) {
	return Decision{Admit: true}, nil
}

func (AdmitAll) Release(context.Context, *v1beta2.SparkApplication) error { return nil }
