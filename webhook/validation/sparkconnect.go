/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package validation

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/sparkconf"
	"github.com/sparkop/spark-operator/sparkpod"
)

// SparkConnectValidator validates SparkConnects on create, and on updates that change the
// spec. The CRD's rules check the fields; this checks what they cannot see inside the
// schemaless pod templates: that a server can be built at all.
type SparkConnectValidator struct{}

func (SparkConnectValidator) ValidateCreate(ctx context.Context, conn *v1alpha1.SparkConnect) (admission.Warnings, error) {
	defaultNamespace(ctx, conn)
	if err := refusal(ValidateSparkConnect(conn)); err != nil {
		return nil, err
	}
	warnings := droppedConfWarnings("spec", conn.Spec.SparkConf, sparkconf.SessionOwned)
	return append(warnings, ConnectNoEffectWarnings(&conn.Spec)...), nil
}

func (v SparkConnectValidator) ValidateUpdate(ctx context.Context, old, conn *v1alpha1.SparkConnect) (admission.Warnings, error) {
	if unchanged(old.Name, &old.Spec, conn.Name, &conn.Spec) || !conn.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	return v.ValidateCreate(ctx, conn)
}

func (SparkConnectValidator) ValidateDelete(context.Context, *v1alpha1.SparkConnect) (admission.Warnings, error) {
	return nil, nil
}

// ValidateSparkConnect refuses a SparkConnect from which the operator cannot build a server pod
// (no image for the server or the executors).
func ValidateSparkConnect(conn *v1alpha1.SparkConnect) field.ErrorList {
	if _, err := sparkpod.ConnectServerPod(conn, sparkpod.RoleScheduling{}); err != nil {
		return field.ErrorList{field.Required(field.NewPath("spec", "image"), err.Error())}
	}
	return nil
}
