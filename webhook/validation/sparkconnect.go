/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package validation

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/controllers/sparkconnect"
)

// SparkConnectHandler validates SparkConnects on create, and on updates that change the spec.
// The CRD's rules check the fields; this checks what they cannot see inside the schemaless pod
// templates: that a server can be built at all.
type SparkConnectHandler struct{}

// Handle implements admission.Handler.
func (h *SparkConnectHandler) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	conn := &v1alpha1.SparkConnect{}
	if err := json.Unmarshal(req.Object.Raw, conn); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding SparkConnect: %w", err))
	}
	if conn.Namespace == "" {
		conn.Namespace = req.Namespace
	}
	if req.Operation == admissionv1.Update {
		old := &v1alpha1.SparkConnect{}
		if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the old SparkConnect: %w", err))
		}
		if unchanged(old.Name, &old.Spec, conn.Name, &conn.Spec) || !conn.DeletionTimestamp.IsZero() {
			return admission.Allowed("spec unchanged")
		}
	}
	if errs := ValidateSparkConnect(conn); len(errs) > 0 {
		return denied(errs)
	}
	resp := admission.Allowed("")
	for _, k := range sparkconnect.OverriddenConf(conn) {
		resp.Warnings = append(resp.Warnings, fmt.Sprintf("spec.sparkConf[%s] is set by the operator; this value is ignored", k))
	}
	return resp
}

// ValidateSparkConnect refuses a SparkConnect from which the operator cannot build a server pod
// (no image for the server or the executors).
func ValidateSparkConnect(conn *v1alpha1.SparkConnect) field.ErrorList {
	if _, err := sparkconnect.ServerPod(conn); err != nil {
		return field.ErrorList{field.Required(field.NewPath("spec", "image"), err.Error())}
	}
	return nil
}
