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

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// Names of the webhooks inside the configurations.
const (
	WebhookMutatePods                        = "mutate-pods.sparkoperator.k8s.io"
	WebhookValidateSparkApplication          = "validate-sparkapplications.sparkoperator.k8s.io"
	WebhookValidateScheduledSparkApplication = "validate-scheduledsparkapplications.sparkoperator.k8s.io"
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

// Configurations returns the webhook configurations for opts with caBundle.
func Configurations(opts Options, caBundle []byte) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration) {
	o := opts.withDefaults()
	policy := o.FailurePolicy
	none := admissionregistrationv1.SideEffectClassNone
	timeout := o.TimeoutSeconds
	equivalent := admissionregistrationv1.Equivalent
	never := admissionregistrationv1.NeverReinvocationPolicy
	labels := map[string]string{"app.kubernetes.io/managed-by": "spark-operator"}
	nsSel := o.NamespaceSelector.DeepCopy()
	if nsSel == nil {
		nsSel = &metav1.LabelSelector{}
	}

	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: o.ConfigName, Labels: labels},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:         WebhookMutatePods,
			ClientConfig: clientConfig(o, PathMutatePods, caBundle),
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{
					APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
					Scope: ptr(admissionregistrationv1.NamespacedScope),
				},
			}},
			FailurePolicy:     &policy,
			MatchPolicy:       &equivalent,
			NamespaceSelector: nsSel.DeepCopy(),
			// Only the operator's pods: every other pod of the cluster never reaches the webhook.
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{v1beta2.LabelLaunchedByOperator: "true"}},
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
			ReinvocationPolicy:      &never,
		}},
	}

	validating := func(name, path, resource string) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name:         name,
			ClientConfig: clientConfig(o, path, caBundle),
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups: []string{v1beta2.GroupName}, APIVersions: []string{"v1beta2"}, Resources: []string{resource},
					Scope: ptr(admissionregistrationv1.NamespacedScope),
				},
			}},
			FailurePolicy:           &policy,
			MatchPolicy:             &equivalent,
			NamespaceSelector:       nsSel.DeepCopy(),
			ObjectSelector:          &metav1.LabelSelector{},
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}
	}
	validatingCfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: o.ConfigName, Labels: labels},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			validating(WebhookValidateSparkApplication, PathValidateSparkApplication, "sparkapplications"),
			validating(WebhookValidateScheduledSparkApplication, PathValidateScheduledSparkApplication, "scheduledsparkapplications"),
		},
	}
	return mutating, validatingCfg
}

// ApplyConfigurations creates the webhook configurations, or replaces their webhooks, with
// caBundle.
func ApplyConfigurations(ctx context.Context, c client.Client, opts Options, caBundle []byte) error {
	mutating, validating := Configurations(opts, caBundle)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		have := &admissionregistrationv1.MutatingWebhookConfiguration{}
		err := c.Get(ctx, client.ObjectKeyFromObject(mutating), have)
		if apierrors.IsNotFound(err) {
			return c.Create(ctx, mutating.DeepCopy())
		} else if err != nil {
			return err
		}
		have.Labels = mutating.Labels
		have.Webhooks = mutating.Webhooks
		return c.Update(ctx, have)
	}); err != nil {
		return fmt.Errorf("applying MutatingWebhookConfiguration %s: %w", mutating.Name, err)
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		have := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		err := c.Get(ctx, client.ObjectKeyFromObject(validating), have)
		if apierrors.IsNotFound(err) {
			return c.Create(ctx, validating.DeepCopy())
		} else if err != nil {
			return err
		}
		have.Labels = validating.Labels
		have.Webhooks = validating.Webhooks
		return c.Update(ctx, have)
	}); err != nil {
		return fmt.Errorf("applying ValidatingWebhookConfiguration %s: %w", validating.Name, err)
	}
	return nil
}

// DeleteConfigurations removes the webhook configurations named by opts, if present.
func DeleteConfigurations(ctx context.Context, c client.Client, opts Options) error {
	mutating, validating := Configurations(opts, nil)
	return errorsJoin(client.IgnoreNotFound(c.Delete(ctx, mutating)), client.IgnoreNotFound(c.Delete(ctx, validating)))
}

func ptr[T any](v T) *T { return &v }
