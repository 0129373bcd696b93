/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package webhook_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/webhook"
)

func TestFailurePolicy(t *testing.T) {
	e := startWebhook(t, nil)
	ctx := context.Background()
	app := testApp(e.ns, "app")
	if err := e.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	e.stop(t)

	// Fail: the operator's pods are refused while the webhook is down, other pods are not.
	pod := bareDriver(app)
	err := e.c.Create(ctx, pod)
	if err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Fatalf("with the webhook down and policy Fail: got %v, want a refusal", err)
	}
	other := bareDriver(app)
	other.Name = "other"
	delete(other.Labels, v1beta2.LabelLaunchedByOperator)
	if err := e.c.Create(ctx, other); err != nil {
		t.Fatalf("a pod the webhook does not select was refused: %v", err)
	}

	// Ignore: they go through unchanged.
	opts := e.opts
	opts.FailurePolicy = admissionregistrationv1.Ignore
	have := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := e.c.Get(ctx, client.ObjectKey{Name: opts.ConfigName}, have); err != nil {
		t.Fatal(err)
	}
	if err := webhook.ApplyConfigurations(ctx, e.c, opts, have.Webhooks[0].ClientConfig.CABundle); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 30*time.Second, "pod creation with policy Ignore", func() (bool, error) {
		err := e.c.Create(ctx, bareDriver(app))
		if err != nil && strings.Contains(err.Error(), "failed calling webhook") {
			return false, nil // the API server has not seen the new policy yet
		}
		return true, err
	})
}

// TestCertificateRotation: serving certificates are renewed from the same CA with requests
// succeeding throughout; a CA about to expire is replaced, and the new one is injected into
// the configurations and signs what is served.
func TestCertificateRotation(t *testing.T) {
	e := startWebhook(t, func(o *webhook.Options) {
		o.CertValidity = 9 * time.Second
		o.CAValidity = 30 * time.Second
		o.CertCheckInterval = 200 * time.Millisecond
	})
	ctx := context.Background()
	mwc := func() string {
		have := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := e.c.Get(ctx, client.ObjectKey{Name: e.opts.ConfigName}, have); err != nil {
			t.Fatal(err)
		}
		return string(have.Webhooks[0].ClientConfig.CABundle)
	}
	refused := func() error {
		a := testApp(e.ns, "probe")
		a.Spec.SparkConf = map[string]string{"spark.master": "local"}
		err := e.c.Create(ctx, a, client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "spec.sparkConf[spark.master]") {
			return errors.Join(err, errors.New("want the validator's refusal"))
		}
		return nil
	}
	firstBundle := mwc()
	serials := map[string]bool{e.servedCert(t): true}
	requests := 0
	// Each request is refused by the validator, not by a TLS failure, while the CA stays.
	cluster.Eventually(t, 60*time.Second, "two serving certificate renewals", func() (bool, error) {
		requests++
		if err := refused(); err != nil && mwc() == firstBundle {
			return false, fmt.Errorf("request %d during renewal: %w", requests, err)
		}
		serials[e.servedCert(t)] = true
		return len(serials) >= 3, nil
	})
	t.Logf("%d serving certificates over %d requests", len(serials), requests)
	// The API servers learn the new CA a moment after it is served (see docs/webhook.md).
	cluster.Eventually(t, 60*time.Second, "a new CA injected and trusted", func() (bool, error) {
		return mwc() != firstBundle && refused() == nil, nil
	})
}

// TestReplicasShareTheSecret: a second replica adopts the certificates in the Secret, and both
// serve each renewal, whichever replica made it.
func TestReplicasShareTheSecret(t *testing.T) {
	e := startWebhook(t, func(o *webhook.Options) {
		o.CertValidity = 9 * time.Second
		o.CertCheckInterval = 200 * time.Millisecond
	})
	first := e.servedCert(t)
	second := &env{c: e.c, ns: e.ns, token: e.token, opts: e.opts}
	second.opts.Port, second.opts.CertDir = cluster.FreePort(t), t.TempDir()
	second.start(t)
	t.Cleanup(func() { second.stop(t) })
	cluster.Eventually(t, 60*time.Second, "both replicas serving the same renewed certificate", func() (bool, error) {
		a, b := e.servedCert(t), second.servedCert(t)
		return a == b && a != first, nil
	})
}

// TestConfigurationsKept: a changed configuration is put back at once, not at the next
// certificate renewal; a deleted one (an uninstall) is not.
func TestConfigurationsKept(t *testing.T) {
	e := startWebhook(t, nil)
	ctx := context.Background()
	key := client.ObjectKey{Name: e.opts.ConfigName}
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := e.c.Get(ctx, key, mwc); err != nil {
		t.Fatal(err)
	}
	want := string(mwc.Webhooks[0].ClientConfig.CABundle)
	mwc.Webhooks[0].ClientConfig.CABundle = []byte("stale")
	if err := e.c.Update(ctx, mwc); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Delete(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e.opts.ConfigName}}); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 30*time.Second, "the CA bundle put back", func() (bool, error) {
		m := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := e.c.Get(ctx, key, m); err != nil {
			return false, err
		}
		return string(m.Webhooks[0].ClientConfig.CABundle) == want, nil
	})
	// The reconcile that restored the bundle came after the deletion; it did not recreate.
	err := e.c.Get(ctx, key, &admissionregistrationv1.ValidatingWebhookConfiguration{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("deleted ValidatingWebhookConfiguration: got %v, want it to stay deleted", err)
	}
}

// TestExternalCertificates: with CertProviderExternal the webhook serves the certificate it
// finds in CertDir, reloads it when the provider replaces it, and writes neither a Secret nor
// the configurations; here the test plays cert-manager (test/chart runs the real one).
func TestExternalCertificates(t *testing.T) {
	c := cluster.Client(t)
	ctx := context.Background()
	provide := func(o webhook.Options) {
		t.Helper()
		maker := &rotator.CertRotator{CAName: "test-ca", DNSName: o.Hosts()[0], ExtKeyUsages: &[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		now := time.Now()
		ca, err := maker.CreateCACert(now.Add(-time.Hour), now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		crt, key, err := maker.CreateCertPEM(ca, now.Add(-time.Hour), now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(os.WriteFile(filepath.Join(o.CertDir, "tls.key"), key, 0o600),
			os.WriteFile(filepath.Join(o.CertDir, "tls.crt"), crt, 0o600)); err != nil {
			t.Fatal(err)
		}
		if err := webhook.ApplyConfigurations(ctx, c, o, ca.CertPEM); err != nil {
			t.Fatal(err)
		}
	}

	missing := webhook.Options{CertProvider: webhook.CertProviderExternal, CertDir: t.TempDir(), Port: cluster.FreePort(t)}
	mgr, err := manager.New(cluster.Config(t), manager.Options{
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0", WebhookServer: webhook.NewServer(missing),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := webhook.Setup(ctx, mgr, missing); err == nil || !strings.Contains(err.Error(), "has not provided a certificate") {
		t.Fatalf("Setup without a certificate: %v, want a clear error", err)
	}

	e := startWebhook(t, func(o *webhook.Options) {
		o.CertProvider = webhook.CertProviderExternal
		provide(*o)
	})
	first := e.servedCert(t)
	secrets := &corev1.SecretList{}
	if err := c.List(ctx, secrets, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 0 {
		t.Errorf("the webhook wrote Secrets with an external certificate provider: %d", len(secrets.Items))
	}

	provide(e.opts) // a renewal with a new CA, as cert-manager and its CA injector do it
	cluster.Eventually(t, 30*time.Second, "the renewed certificate served", func() (bool, error) {
		return e.servedCert(t) != first, nil
	})
	e.waitServing(t)
}

// TestDriverPodNameClash: an application naming as its driver pod one that another
// application's driver has, or that another application names, is refused at admission with
// the application holding the name; so is an update to such a name.
func TestDriverPodNameClash(t *testing.T) {
	e := startWebhook(t, nil)
	ctx := context.Background()
	c := e.c
	first := testApp(e.ns, "first") // its driver pod: first-driver
	if err := c.Create(ctx, first); err != nil {
		t.Fatal(err)
	}
	refused := func(app *v1beta2.SparkApplication, want string) func() (bool, error) {
		return func() (bool, error) {
			err := c.Create(ctx, app.DeepCopy(), client.DryRunAll)
			return err != nil && strings.Contains(err.Error(), want), nil
		}
	}

	second := testApp(e.ns, "second")
	second.Spec.Driver.PodName = ptr("first-driver")
	want := `spec.driver.podName: Invalid value: "first-driver": driver pod name first-driver is already the driver pod name of SparkApplication first`
	// The webhook reads the other applications from its cache, which may lag the creation.
	cluster.Eventually(t, 10*time.Second, "the clash with another application's name refused", refused(second, want))
	if err := c.Create(ctx, second); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want refusal containing %q", err, want)
	}

	pod := bareDriver(testApp(e.ns, "someone"))
	pod.Name = "taken"
	delete(pod.Labels, v1beta2.LabelLaunchedByOperator) // as if created before the webhook ran
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	third := testApp(e.ns, "third")
	third.Spec.Driver.PodName = ptr("taken")
	want = `driver pod name taken is taken: pod ` + e.ns + `/taken is the driver of SparkApplication someone`
	// The webhook reads the pod through the API server's watch cache, which may lag the creation.
	cluster.Eventually(t, 10*time.Second, "the name of an existing pod refused", refused(third, want))
	if err := c.Create(ctx, third); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want refusal containing %q", err, want)
	}
	taken := testApp(e.ns, "other")
	taken.Spec.Driver.PodName = ptr("free-driver")
	if err := c.Create(ctx, taken); err != nil {
		t.Fatalf("an application naming a free driver pod was refused: %v", err)
	}

	// Updates: one keeping its name passes; one taking another's is refused.
	first.Spec.Arguments = []string{"10"}
	if err := c.Update(ctx, first); err != nil {
		t.Fatalf("update keeping the driver pod name refused: %v", err)
	}
	taken.Spec.Driver.PodName = ptr("first-driver")
	want = "driver pod name first-driver is already the driver pod name of SparkApplication first"
	if err := c.Update(ctx, taken); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("update to a held name: got %v, want refusal containing %q", err, want)
	}
}
