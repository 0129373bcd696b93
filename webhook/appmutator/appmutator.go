/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package appmutator mutates new SparkApplications. Today it serves those Kueue queues (the
// webhook's object selector sends it no other): it fills in the spec fields Kueue counts
// (scheduler/kueue.Fill), so that Kueue's count of the application is what its pods request.
// The pods are the same with or without them.
package appmutator

import (
	"context"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/kueue"
)

// Defaulter mutates SparkApplications being created. Serve it with admission.WithDefaulter,
// which answers with the JSON patch from the application to the mutated one.
type Defaulter struct{}

var _ admission.Defaulter[*v1beta2.SparkApplication] = Defaulter{}

// Default fills in, on an application being created that Kueue queues, the fields Kueue
// counts that are unset. Updates are let through: Kueue counts an application when it makes
// its Workload, and a field changed under an admitted Workload would have Kueue evict it.
func (Defaulter) Default(ctx context.Context, app *v1beta2.SparkApplication) error {
	if req, err := admission.RequestFromContext(ctx); err == nil && req.Operation != admissionv1.Create {
		return nil
	}
	if filled := kueue.Fill(app); len(filled) > 0 {
		log.FromContext(ctx).V(1).Info("filled in the fields Kueue counts", "application", app.Namespace+"/"+app.Name, "fields", filled)
	}
	return nil
}
