/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package podmutator

import (
	"context"
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// Defaulter mutates the pods the operator launches. Serve it with admission.WithDefaulter, which
// decodes the pod and answers with the JSON patch from it to the mutated pod.
type Defaulter struct {
	// Reader reads SparkApplications. It must find an application created a moment before its
	// driver: a cache alone may not have seen it yet.
	Reader client.Reader
	// Placer, when set, may place an executor of an admitted run on the node its batch
	// scheduler planned, after the pod's customisations (scheduler.Registry).
	Placer Placer
}

// Placer places a pod being created for its batch scheduler; it reports whether it changed pod.
type Placer interface {
	PlacePod(pod *corev1.Pod, owner client.Object) bool
}

var _ admission.Defaulter[*corev1.Pod] = (*Defaulter)(nil)

// Default mutates a pod being created that the operator launched, for its SparkApplication or
// its SparkConnect. Pods of unknown ones are let through unchanged (they may have been deleted
// meanwhile). A *RejectError
// from Mutate refuses the pod with its message.
func (d *Defaulter) Default(ctx context.Context, pod *corev1.Pod) error {
	ns := pod.Namespace
	if req, err := admission.RequestFromContext(ctx); err == nil {
		if req.Operation != admissionv1.Create {
			return nil
		}
		if ns == "" {
			ns = req.Namespace
		}
	}
	if pod.Labels[v1beta2.LabelLaunchedByOperator] != "true" {
		return nil
	}
	appName := pod.Labels[v1beta2.LabelAppName]
	if appName == "" {
		return d.defaultConnectPod(ctx, pod, ns)
	}
	app := &v1beta2.SparkApplication{}
	if err := d.Reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: appName}, app); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return apierrors.NewInternalError(fmt.Errorf("reading SparkApplication %s/%s: %w", ns, appName, err))
	}
	if err := Mutate(pod, app); err != nil {
		return mutationError(err)
	}
	d.place(pod, app)
	return nil
}

// place offers a customised pod to the batch schedulers. Placing comes last: the
// customisations set the pod's affinity, which placing only narrows.
func (d *Defaulter) place(pod *corev1.Pod, owner client.Object) {
	if d.Placer != nil {
		d.Placer.PlacePod(pod, owner)
	}
}

// mutationError is err as the admission answer takes it: a *RejectError refuses the pod with
// its message, any other error is the webhook's own failure.
func mutationError(err error) error {
	if rej := (*RejectError)(nil); err != nil && !errors.As(err, &rej) {
		return apierrors.NewInternalError(err)
	}
	return err
}
