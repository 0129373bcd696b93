/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package podmutator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// Handler is the admission handler of the pod mutating webhook.
type Handler struct {
	// Reader reads SparkApplications. A direct API reader is best: a cache may not have seen an
	// application created a moment before its driver.
	Reader client.Reader
}

var _ admission.Handler = (*Handler)(nil)

// Handle mutates a pod being created that the operator launched. Pods of unknown applications
// are let through unchanged (the application may have been deleted meanwhile).
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create {
		return admission.Allowed("only pod creation is mutated")
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(req.Object.Raw, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding pod: %w", err))
	}
	if pod.Labels[v1beta2.LabelLaunchedByOperator] != "true" {
		return admission.Allowed("not launched by the Spark operator")
	}
	appName := pod.Labels[v1beta2.LabelAppName]
	if appName == "" {
		return h.handleConnectPod(ctx, req, pod)
	}
	ns := pod.Namespace
	if ns == "" {
		ns = req.Namespace
	}
	app := &v1beta2.SparkApplication{}
	if err := h.Reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: appName}, app); err != nil {
		if apierrors.IsNotFound(err) {
			return admission.Allowed("SparkApplication " + ns + "/" + appName + " not found")
		}
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("reading SparkApplication %s/%s: %w", ns, appName, err))
	}
	return patched(ctx, req, pod, Mutate(pod, app), "app", appName)
}

// patched answers with the changes mutate made to pod, or with its error.
func patched(ctx context.Context, req admission.Request, pod *corev1.Pod, mutateErr error, ownerKind, owner string) admission.Response {
	if mutateErr != nil {
		var rej *RejectError
		if errors.As(mutateErr, &rej) {
			return admission.Denied(rej.Message)
		}
		return admission.Errored(http.StatusInternalServerError, mutateErr)
	}
	out, err := json.Marshal(pod)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	resp := admission.PatchResponseFromRaw(req.Object.Raw, out)
	if len(resp.Patches) > 0 {
		log.FromContext(ctx).V(1).Info("mutated Spark pod", "pod", pod.Name, ownerKind, owner, "patches", len(resp.Patches))
	}
	return resp
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
