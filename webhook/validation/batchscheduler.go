/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package validation

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
)

// BatchSchedulers is what the webhook knows of the operator's batch schedulers.
type BatchSchedulers struct {
	// Registry holds the enabled schedulers; nil skips these checks.
	Registry *scheduler.Registry
	// Default is the scheduler of applications that name none ("" lets them through).
	Default string
}

// validate refuses an application naming a batch scheduler the operator has not enabled (it
// would never be admitted as if it named none), and lets the scheduler refuse its options (an
// unknown queue, say).
func (b BatchSchedulers) validate(ctx context.Context, app *v1beta2.SparkApplication) field.ErrorList {
	if b.Registry == nil {
		return nil
	}
	p := field.NewPath("spec", "batchScheduler")
	name := b.Registry.NameOf(app, b.Default)
	if name == "" {
		return nil
	}
	s, err := b.Registry.Get(name)
	if err != nil {
		return field.ErrorList{field.Invalid(p, name, "this batch scheduler is not enabled in the operator; enabled: "+b.enabledNames())}
	}
	if errs := b.queuedTwice(app, s); len(errs) > 0 {
		return errs
	}
	v, ok := s.(scheduler.ApplicationValidator)
	if !ok {
		return nil
	}
	defaulted := app.DeepCopy()
	v1beta2.SetSparkApplicationDefaults(defaulted)
	return v.ValidateApplication(ctx, defaulted)
}

// queuedTwice refuses an application that Kueue queues (scheduler.LabelKueueQueueName) while
// its batch scheduler s queues it too (scheduler.Queueing): it would wait in two queues, each
// blind to the other's quota and order. The message says what to remove for either choice.
func (b BatchSchedulers) queuedTwice(app *v1beta2.SparkApplication, s scheduler.Interface) field.ErrorList {
	lq, kueued := app.Labels[scheduler.LabelKueueQueueName]
	if q, ok := s.(scheduler.Queueing); !kueued || !ok || !q.QueuesWorkloads() {
		return nil
	}
	named := app.Spec.BatchScheduler != nil && *app.Spec.BatchScheduler != ""
	which := fmt.Sprintf("its batch scheduler %s", s.Name())
	kueueAlone := "remove spec.batchScheduler"
	if !named {
		which = fmt.Sprintf("the operator's default batch scheduler %s", s.Name())
	}
	if !named || b.defaultQueues() {
		kueueAlone = fmt.Sprintf("set spec.batchScheduler to %q", scheduler.DefaultName)
	}
	msg := fmt.Sprintf("Kueue queues this application (LocalQueue %q) and %s queues it too, so it would wait in two queues: "+
		"remove the label %s to queue it with %s alone, or %s to let Kueue alone queue it",
		lq, which, scheduler.LabelKueueQueueName, s.Name(), kueueAlone)
	return field.ErrorList{field.Forbidden(field.NewPath("metadata", "labels").Key(scheduler.LabelKueueQueueName), msg)}
}

// defaultQueues reports whether the operator's default batch scheduler queues workloads.
func (b BatchSchedulers) defaultQueues() bool {
	if b.Default == "" {
		return false
	}
	s, err := b.Registry.Get(b.Default)
	if err != nil {
		return false
	}
	q, ok := s.(scheduler.Queueing)
	return ok && q.QueuesWorkloads()
}

// enabledNames is the list of enabled schedulers as a message reads it.
func (b BatchSchedulers) enabledNames() string {
	return strings.Join(b.Registry.Names(), ", ")
}
