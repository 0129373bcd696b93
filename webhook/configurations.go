/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package webhook

import (
	"context"
	"fmt"

	"k8s.io/utils/ptr"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
)

// Names of the webhooks inside the configurations.
const (
	WebhookMutatePods                        = "mutate-pods.sparkoperator.k8s.io"
	WebhookMutateSparkApplication            = "mutate-sparkapplications.sparkoperator.k8s.io"
	WebhookValidateSparkApplication          = "validate-sparkapplications.sparkoperator.k8s.io"
	WebhookValidateScheduledSparkApplication = "validate-scheduledsparkapplications.sparkoperator.k8s.io"
	WebhookValidateSparkConnect              = "validate-sparkconnects.sparkoperator.k8s.io"
)

func clientConfig(o Options, path string, caBundle []byte) admissionregistrationv1.WebhookClientConfig {
	cc := admissionregistrationv1.WebhookClientConfig{CABundle: caBundle}
	if o.URLHost != "" {
		url := fmt.Sprintf("https://%s%s", hostPort(o.URLHost, o.Port), path)
		cc.URL = &url
		return cc
	}
	port := o.ServicePort
	cc.Service = &admissionregistrationv1.ServiceReference{Namespace: o.ServiceNamespace, Name: o.ServiceName, Path: &path, Port: &port}
	return cc
}

func hostPort(host string, port int) string {
	for _, c := range host {
		if c == ':' { // IPv6
			return fmt.Sprintf("[%s]:%d", host, port)
		}
	}
	return fmt.Sprintf("%s:%d", host, port)
}

// podObjectSelector selects the pods the pod-mutating webhook is sent: those the operator
// launched, but for those built with every customisation on them (v1beta2.LabelCustomised).
func podObjectSelector() *metav1.LabelSelector {
	return &metav1.LabelSelector{
		MatchLabels:      map[string]string{v1beta2.LabelLaunchedByOperator: "true"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: v1beta2.LabelCustomised, Operator: metav1.LabelSelectorOpDoesNotExist}},
	}
}

// Configurations returns the webhook configurations for opts with caBundle.
func Configurations(opts Options, caBundle []byte) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration) {
	w := webhooks{o: opts.withDefaults(), caBundle: caBundle}
	// Not managed-by, which belongs to whoever installed them (Helm, when the chart did).
	meta := metav1.ObjectMeta{Name: w.o.ConfigName, Labels: map[string]string{"app.kubernetes.io/part-of": "spark-operator"}}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: *meta.DeepCopy(),
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			// Only the operator's pods: every other pod of the cluster never reaches the webhook.
			// Nor do the native submitter's drivers, which carry their customisations already.
			w.mutating(WebhookMutatePods, PathMutatePods, rule("", "v1", "pods"), podObjectSelector()),
			// Only the applications Kueue queues, whose spec it counts (package appmutator).
			w.mutating(WebhookMutateSparkApplication, PathMutateSparkApplication, rule(v1beta2.GroupName, "v1beta2", "sparkapplications"),
				&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: scheduler.LabelKueueQueueName, Operator: metav1.LabelSelectorOpExists},
				}}),
		},
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: meta,
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			w.validating(WebhookValidateSparkApplication, PathValidateSparkApplication, rule(v1beta2.GroupName, "v1beta2", "sparkapplications")),
			w.validating(WebhookValidateScheduledSparkApplication, PathValidateScheduledSparkApplication, rule(v1beta2.GroupName, "v1beta2", "scheduledsparkapplications")),
			w.validating(WebhookValidateSparkConnect, PathValidateSparkConnect, rule(v1beta2.GroupName, "v1alpha1", "sparkconnects")),
		},
	}
	return mutating, validating
}

// webhooks builds the operator's webhooks, each with the settings all of them share.
type webhooks struct {
	o        Options
	caBundle []byte
}

// rule is the namespaced resource of group and version.
func rule(group, version, resource string) admissionregistrationv1.Rule {
	return admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource},
		Scope: ptr.To(admissionregistrationv1.NamespacedScope)}
}

// namespaces is the namespace selector of every webhook (all namespaces unless set).
func (w webhooks) namespaces() *metav1.LabelSelector {
	if sel := w.o.NamespaceSelector; sel != nil {
		return sel.DeepCopy()
	}
	return &metav1.LabelSelector{}
}

// mutating is a webhook called on the creation of r's objects that objects selects.
func (w webhooks) mutating(name, path string, r admissionregistrationv1.Rule, objects *metav1.LabelSelector) admissionregistrationv1.MutatingWebhook {
	return admissionregistrationv1.MutatingWebhook{
		Name:                    name,
		ClientConfig:            clientConfig(w.o, path, w.caBundle),
		Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: r}},
		FailurePolicy:           ptr.To(w.o.FailurePolicy),
		MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
		NamespaceSelector:       w.namespaces(),
		ObjectSelector:          objects,
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		TimeoutSeconds:          ptr.To(w.o.TimeoutSeconds),
		AdmissionReviewVersions: []string{"v1"},
		ReinvocationPolicy:      ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
	}
}

// validating is a webhook called on the creation and update of r's objects.
func (w webhooks) validating(name, path string, r admissionregistrationv1.Rule) admissionregistrationv1.ValidatingWebhook {
	return admissionregistrationv1.ValidatingWebhook{
		Name:         name,
		ClientConfig: clientConfig(w.o, path, w.caBundle),
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}, Rule: r}},
		FailurePolicy:           ptr.To(w.o.FailurePolicy),
		MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
		NamespaceSelector:       w.namespaces(),
		ObjectSelector:          &metav1.LabelSelector{},
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		TimeoutSeconds:          ptr.To(w.o.TimeoutSeconds),
		AdmissionReviewVersions: []string{"v1"},
	}
}

// ApplyConfigurations creates the webhook configurations, or replaces their webhooks, with
// caBundle.
func ApplyConfigurations(ctx context.Context, c client.Client, opts Options, caBundle []byte) error {
	return applyConfigurations(ctx, c, opts, caBundle, true)
}

// applyConfigurations writes the configurations with caBundle where they differ; it creates
// the missing ones only if create is set.
func applyConfigurations(ctx context.Context, c client.Client, opts Options, caBundle []byte, create bool) error {
	mutating, validating := Configurations(opts, caBundle)
	if err := applyOne(ctx, c, mutating, &admissionregistrationv1.MutatingWebhookConfiguration{}, create,
		func(have *admissionregistrationv1.MutatingWebhookConfiguration) bool {
			if equality.Semantic.DeepEqual(have.Webhooks, mutating.Webhooks) {
				return false
			}
			have.Webhooks = mutating.Webhooks
			return true
		}); err != nil {
		return fmt.Errorf("applying MutatingWebhookConfiguration %s: %w", mutating.Name, err)
	}
	if err := applyOne(ctx, c, validating, &admissionregistrationv1.ValidatingWebhookConfiguration{}, create,
		func(have *admissionregistrationv1.ValidatingWebhookConfiguration) bool {
			if equality.Semantic.DeepEqual(have.Webhooks, validating.Webhooks) {
				return false
			}
			have.Webhooks = validating.Webhooks
			return true
		}); err != nil {
		return fmt.Errorf("applying ValidatingWebhookConfiguration %s: %w", validating.Name, err)
	}
	return nil
}

// applyOne creates want if it is missing (and create is set), or sets have's webhooks (through
// setWebhooks, which tells whether they changed) and labels, keeping labels others set (an
// installer's, such as Helm's).
func applyOne[T client.Object](ctx context.Context, c client.Client, want, have T, create bool, setWebhooks func(have T) bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		err := c.Get(ctx, client.ObjectKeyFromObject(want), have)
		if apierrors.IsNotFound(err) {
			if !create {
				return nil
			}
			return c.Create(ctx, want.DeepCopyObject().(T))
		} else if err != nil {
			return err
		}
		changed := setWebhooks(have)
		labels := have.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		for k, v := range want.GetLabels() {
			if labels[k] != v {
				labels[k], changed = v, true
			}
		}
		if !changed {
			return nil
		}
		have.SetLabels(labels)
		return c.Update(ctx, have)
	})
}

// DeleteConfigurations removes the webhook configurations named by opts, if present.
func DeleteConfigurations(ctx context.Context, c client.Client, opts Options) error {
	mutating, validating := Configurations(opts, nil)
	return errorsJoin(client.IgnoreNotFound(c.Delete(ctx, mutating)), client.IgnoreNotFound(c.Delete(ctx, validating)))
}
