/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package scheduler is the plug-in point for batch schedulers. Before an application is
// submitted, its batch scheduler may hold it back (it stays queued, with the reason in its
// status) or decorate it (pod groups, labels, annotations, schedulerName); when the application
// ends, the scheduler releases what it held for it.
package scheduler

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// Decision is a batch scheduler's answer for one application.
type Decision struct {
	// Admit lets the application be submitted now.
	Admit bool
	// Reason explains a held-back application; it is shown in the application's status.
	Reason string
}

// Interface is implemented by each batch scheduler integration.
type Interface interface {
	// Name is the value of spec.batchScheduler that selects this scheduler.
	Name() string
	// BeforeSubmit decides whether app may be submitted now. It may decorate app, which is the
	// controller's private copy, and may create objects the submission needs (a pod group).
	// It is called again for every retry, so it must be idempotent.
	BeforeSubmit(ctx context.Context, app *v1beta2.SparkApplication) (Decision, error)
	// OnFinish releases whatever the scheduler holds for app once it has ended or is deleted.
	OnFinish(ctx context.Context, app *v1beta2.SparkApplication) error
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
// nothing. Applications that name no batch scheduler, or one that is not enabled, use it.
type AdmitAll struct{}

// DefaultName is the registry name of AdmitAll.
const DefaultName = "default"

func (AdmitAll) Name() string { return DefaultName }

func (AdmitAll) BeforeSubmit(context.Context, *v1beta2.SparkApplication) (Decision, error) {
	return Decision{Admit: true}, nil
}

func (AdmitAll) OnFinish(context.Context, *v1beta2.SparkApplication) error { return nil }
