/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package validation

import (
	"context"
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
	name := b.Default
	if app.Spec.BatchScheduler != nil && *app.Spec.BatchScheduler != "" {
		name = *app.Spec.BatchScheduler
	}
	if name == "" {
		return nil
	}
	s, err := b.Registry.Get(name)
	if err != nil {
		return field.ErrorList{field.Invalid(p, name, "this batch scheduler is not enabled in the operator; enabled: "+b.enabledNames())}
	}
	v, ok := s.(scheduler.ApplicationValidator)
	if !ok {
		return nil
	}
	defaulted := app.DeepCopy()
	v1beta2.SetSparkApplicationDefaults(defaulted)
	return v.ValidateApplication(ctx, defaulted)
}

// enabledNames is the list of enabled schedulers as a message reads it.
func (b BatchSchedulers) enabledNames() string {
	return strings.Join(b.Registry.Names(), ", ")
}
