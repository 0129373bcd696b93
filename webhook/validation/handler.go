/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package validation

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/internal/drivername"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/kueue"
	"github.com/sparkop/spark-operator/sparkconf"
)

// The validators are served with admission.WithValidator, which decodes the requests.
var (
	_ admission.Validator[*v1beta2.SparkApplication]          = (*SparkApplicationValidator)(nil)
	_ admission.Validator[*v1beta2.ScheduledSparkApplication] = (*ScheduledSparkApplicationValidator)(nil)
	_ admission.Validator[*v1alpha1.SparkConnect]             = (*SparkConnectValidator)(nil)
)

// SparkApplicationValidator validates SparkApplications on create, and on updates that change
// the spec.
type SparkApplicationValidator struct {
	// Reader lists ResourceQuotas; needed only with EnforceQuota.
	Reader client.Reader
	// EnforceQuota refuses a new application whose driver and executors do not fit in what
	// a ResourceQuota of its namespace has left.
	EnforceQuota bool
	// Schedulers refuses applications naming a batch scheduler that is not enabled, and
	// those their scheduler refuses.
	Schedulers BatchSchedulers
	// Pods reads a pod by name, and Apps lists the namespace's SparkApplications, so that an
	// application naming a driver pod another application's driver has, or another
	// application names, is refused (see checkDriverPodName). Pods should read the API
	// server (the pod named may be one no cache of the operator's holds), Apps the cache.
	// With either nil the driver pod name is not checked.
	Pods, Apps client.Reader
	// KnownSchedulers are Kubernetes schedulers that run in the cluster besides the default
	// one and those of the batch schedulers: a pod's schedulerName naming another is warned of.
	KnownSchedulers []string
}

func (v *SparkApplicationValidator) ValidateCreate(ctx context.Context, app *v1beta2.SparkApplication) (admission.Warnings, error) {
	if err := v.validate(ctx, app); err != nil {
		return nil, err
	}
	if err := v.checkDriverPodName(ctx, app); err != nil {
		return nil, err
	}
	// Quota is checked for new applications only: a running one already holds its share.
	if v.EnforceQuota {
		if err := v.checkQuota(ctx, app); err != nil {
			return nil, err
		}
	}
	return v.warnings(app), nil
}

func (v *SparkApplicationValidator) ValidateUpdate(ctx context.Context, old, app *v1beta2.SparkApplication) (admission.Warnings, error) {
	// Kueue's queue label counts as spec: adding it may queue the application twice.
	sameQueue := old.Labels[scheduler.LabelKueueQueueName] == app.Labels[scheduler.LabelKueueQueueName]
	if sameQueue && unchanged(old.Name, &old.Spec, app.Name, &app.Spec) || !app.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	if err := v.validate(ctx, app); err != nil {
		return nil, err
	}
	// Only a new name is checked: an application keeps the name it has (its own driver has
	// it), and one admitted before this check existed can still be edited and deleted.
	if old.DriverPodName() != app.DriverPodName() {
		if err := v.checkDriverPodName(ctx, app); err != nil {
			return nil, err
		}
	}
	return v.warnings(app), nil
}

// warnings are the admission warnings of app: fields without effect, sparkConf keys the
// operator sets, unknown scheduler names, and where Kueue's count of it is short of what its
// pods request (scheduler/kueue.Differences).
func (v *SparkApplicationValidator) warnings(app *v1beta2.SparkApplication) admission.Warnings {
	out := append(applicationWarnings("spec", &app.Spec), v.schedulerNameWarnings(&app.Spec)...)
	return append(out, kueue.Differences(app)...)
}

// checkDriverPodName refuses an application whose driver pod name (spec.driver.podName, else
// <app>-driver) another application holds: an existing pod that is not the application's own
// driver, or another application of the namespace naming the same driver pod. The operator
// never adopts another application's pod, so the two could not both run; without this check
// the controller fails the later one (package drivername). The other applications are those
// the cache has seen: one created a moment before may be missed, and the controller settles
// that race.
func (v *SparkApplicationValidator) checkDriverPodName(ctx context.Context, app *v1beta2.SparkApplication) error {
	if v.Pods == nil || v.Apps == nil {
		return nil
	}
	path, name := field.NewPath("metadata", "name"), app.DriverPodName()
	if app.Spec.Driver.PodName != nil && *app.Spec.Driver.PodName != "" {
		path = field.NewPath("spec", "driver", "podName")
	}
	pod := &corev1.Pod{}
	switch err := v.Pods.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: name}, pod); {
	case err == nil:
		if msg := drivername.PodTaken(pod, app); msg != "" {
			return refusal(field.ErrorList{field.Invalid(path, name, msg)})
		}
	case !apierrors.IsNotFound(err):
		return apierrors.NewInternalError(fmt.Errorf("reading pod %s/%s: %w", app.Namespace, name, err))
	}
	var apps v1beta2.SparkApplicationList
	if err := v.Apps.List(ctx, &apps, client.InNamespace(app.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("listing SparkApplications: %w", err))
	}
	if other := drivername.Claimant(apps.Items, app, nil); other != nil {
		return refusal(field.ErrorList{field.Invalid(path, name, drivername.Claimed(other, app))})
	}
	return nil
}

// applicationWarnings are the admission warnings of an application's spec at path: fields
// that have no effect, and spec.sparkConf keys the operator sets itself.
func applicationWarnings(path string, spec *v1beta2.SparkApplicationSpec) admission.Warnings {
	return append(NoEffectWarnings("."+path, spec), droppedConfWarnings(path, spec.SparkConf, sparkconf.ApplicationOwned)...)
}

// droppedConfWarnings warns of each key of sparkConf (at path) that the operator sets itself,
// among owned: its value is dropped.
func droppedConfWarnings(path string, sparkConf map[string]string, owned []string) admission.Warnings {
	var out admission.Warnings
	for _, k := range sparkconf.Dropped(sparkConf, owned) {
		out = append(out, fmt.Sprintf("%s.sparkConf[%s] is set by the operator; this value is ignored", path, k))
	}
	return out
}

func (v *SparkApplicationValidator) validate(ctx context.Context, app *v1beta2.SparkApplication) error {
	defaultNamespace(ctx, app)
	return refusal(append(ValidateSparkApplication(app), v.Schedulers.validate(ctx, app)...))
}

func (v *SparkApplicationValidator) ValidateDelete(context.Context, *v1beta2.SparkApplication) (admission.Warnings, error) {
	return nil, nil
}

func (v *SparkApplicationValidator) checkQuota(ctx context.Context, app *v1beta2.SparkApplication) error {
	need, err := AppResources(app)
	if err != nil {
		return refusal(field.ErrorList{field.Invalid(field.NewPath("spec"), "", err.Error())})
	}
	var quotas corev1.ResourceQuotaList
	if err := v.Reader.List(ctx, &quotas, client.InNamespace(app.Namespace)); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("listing ResourceQuotas: %w", err))
	}
	for i := range quotas.Items {
		if err := CheckQuota(need, &quotas.Items[i]); err != nil {
			return errors.New("SparkApplication " + app.Name + " exceeds its namespace's quota: " + err.Error())
		}
	}
	return nil
}

// ScheduledSparkApplicationValidator validates ScheduledSparkApplications on create, and on
// updates that change the spec.
type ScheduledSparkApplicationValidator struct{}

func (ScheduledSparkApplicationValidator) ValidateCreate(ctx context.Context, ssa *v1beta2.ScheduledSparkApplication) (admission.Warnings, error) {
	defaultNamespace(ctx, ssa)
	if err := refusal(ValidateScheduledSparkApplication(ssa)); err != nil {
		return nil, err
	}
	return applicationWarnings("spec.template", &ssa.Spec.Template), nil
}

func (v ScheduledSparkApplicationValidator) ValidateUpdate(ctx context.Context, old, ssa *v1beta2.ScheduledSparkApplication) (admission.Warnings, error) {
	if unchanged(old.Name, &old.Spec, ssa.Name, &ssa.Spec) || !ssa.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	return v.ValidateCreate(ctx, ssa)
}

func (ScheduledSparkApplicationValidator) ValidateDelete(context.Context, *v1beta2.ScheduledSparkApplication) (admission.Warnings, error) {
	return nil, nil
}

// defaultNamespace fills in the request's namespace, which an object being created may lack.
func defaultNamespace(ctx context.Context, obj client.Object) {
	if req, err := admission.RequestFromContext(ctx); err == nil && obj.GetNamespace() == "" {
		obj.SetNamespace(req.Namespace)
	}
}

// unchanged tells an update that leaves the spec alone (metadata, finalizers): objects created
// before a rule existed can still be updated and deleted by the operator.
func unchanged(oldName string, oldSpec any, name string, spec any) bool {
	return oldName == name && equality.Semantic.DeepEqual(oldSpec, spec)
}

// retryAfterSeconds is how soon a client is asked to retry a request refused for an internal
// error (a Queue that could not be read): the API server passes it on as Retry-After, and
// client-go retries such a response by itself.
const retryAfterSeconds = 1

// refusal is errs as one message naming each field, or nil when there are none. When one of
// them is internal (field.ErrorTypeInternal: the webhook could not tell whether the object is
// valid), it is a retryable internal error (HTTP 500 with Retry-After) carrying all the
// messages, not a verdict on the object.
func refusal(errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	internal := false
	for i, e := range errs {
		msgs[i] = e.Error()
		internal = internal || e.Type == field.ErrorTypeInternal
	}
	msg := strings.Join(msgs, "; ")
	if internal {
		err := apierrors.NewInternalError(errors.New(msg + "; try again"))
		err.ErrStatus.Details.RetryAfterSeconds = retryAfterSeconds
		return err
	}
	return errors.New(msg)
}
