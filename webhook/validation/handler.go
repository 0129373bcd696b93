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
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// SparkApplicationHandler validates SparkApplications on create, and on updates that change the
// spec.
type SparkApplicationHandler struct {
	// Reader lists ResourceQuotas; needed only with EnforceQuota.
	Reader client.Reader
	// EnforceQuota refuses a new application whose driver and executors do not fit in what
	// a ResourceQuota of its namespace has left.
	EnforceQuota bool
	// Schedulers refuses applications naming a batch scheduler that is not enabled, and
	// those their scheduler refuses.
	Schedulers BatchSchedulers
}

// Handle implements admission.Handler.
func (h *SparkApplicationHandler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	app := &v1beta2.SparkApplication{}
	if err := json.Unmarshal(req.Object.Raw, app); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding SparkApplication: %w", err))
	}
	if app.Namespace == "" {
		app.Namespace = req.Namespace
	}
	if req.Operation == admissionv1.Update {
		old := &v1beta2.SparkApplication{}
		if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the old SparkApplication: %w", err))
		}
		if unchanged(old.Name, &old.Spec, app.Name, &app.Spec) || !app.DeletionTimestamp.IsZero() {
			return admission.Allowed("spec unchanged")
		}
	}
	errs := ValidateSparkApplication(app)
	errs = append(errs, h.Schedulers.validate(ctx, app)...)
	if len(errs) > 0 {
		return denied(errs)
	}
	// Quota is checked for new applications only: a running one already holds its share.
	if h.EnforceQuota && req.Operation == admissionv1.Create {
		if resp, ok := h.checkQuota(ctx, app); !ok {
			return resp
		}
	}
	return admission.Allowed("").WithWarnings(NoEffectWarnings(".spec", &app.Spec)...)
}

func (h *SparkApplicationHandler) checkQuota(ctx context.Context, app *v1beta2.SparkApplication) (admission.Response, bool) {
	need, err := AppResources(app)
	if err != nil {
		return denied(field.ErrorList{field.Invalid(field.NewPath("spec"), "", err.Error())}), false
	}
	var quotas corev1.ResourceQuotaList
	if err := h.Reader.List(ctx, &quotas, client.InNamespace(app.Namespace)); err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("listing ResourceQuotas: %w", err)), false
	}
	for i := range quotas.Items {
		if err := CheckQuota(need, &quotas.Items[i]); err != nil {
			return admission.Denied("SparkApplication " + app.Name + " exceeds its namespace's quota: " + err.Error()), false
		}
	}
	return admission.Response{}, true
}

// ScheduledSparkApplicationHandler validates ScheduledSparkApplications on create, and on
// updates that change the spec.
type ScheduledSparkApplicationHandler struct{}

// Handle implements admission.Handler.
func (h *ScheduledSparkApplicationHandler) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	ssa := &v1beta2.ScheduledSparkApplication{}
	if err := json.Unmarshal(req.Object.Raw, ssa); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding ScheduledSparkApplication: %w", err))
	}
	if ssa.Namespace == "" {
		ssa.Namespace = req.Namespace
	}
	if req.Operation == admissionv1.Update {
		old := &v1beta2.ScheduledSparkApplication{}
		if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the old ScheduledSparkApplication: %w", err))
		}
		if unchanged(old.Name, &old.Spec, ssa.Name, &ssa.Spec) || !ssa.DeletionTimestamp.IsZero() {
			return admission.Allowed("spec unchanged")
		}
	}
	if errs := ValidateScheduledSparkApplication(ssa); len(errs) > 0 {
		return denied(errs)
	}
	return admission.Allowed("").WithWarnings(NoEffectWarnings(".spec.template", &ssa.Spec.Template)...)
}

// unchanged tells an update that leaves the spec alone (metadata, finalizers): objects created
// before a rule existed can still be updated and deleted by the operator.
func unchanged(oldName string, oldSpec any, name string, spec any) bool {
	return oldName == name && equality.Semantic.DeepEqual(oldSpec, spec)
}

func denied(errs field.ErrorList) admission.Response {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return admission.Denied(strings.Join(msgs, "; "))
}
