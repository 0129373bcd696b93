/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package helm

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestInstallWithDefaults installs the chart as its docs show, with no values at all: the
// release spark-operator in the namespace spark-operator, running applications of the
// namespace default. examples/spark-pi.yaml runs to COMPLETED on the real node; the API server
// calls both webhooks through the chart's Service, trusting the certificate the webhook made
// itself; uninstalling leaves nothing of the operator's behind but what docs/helm.md says.
func TestInstallWithDefaults(t *testing.T) {
	r := install(t, "spark-operator", "spark-operator")
	r.requireServiceClientConfig(t)
	r.requireOwnCertificate(t)
	r.requireValidatedThroughService(t, "default")
	r.requireMutatedThroughService(t, "default")

	app := examplePi(t)
	if err := r.c.Create(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.c.Delete(context.Background(), app) })
	done := r.waitCompleted(t, app)
	if log := r.driverLog(done); !strings.Contains(log, "Pi is roughly 3.1") {
		t.Errorf("spark-pi's driver log has no \"Pi is roughly 3.1…\":\n%s", cluster.Tail(log, 20))
	}
	r.noForbidden(t, "controller")
	r.noForbidden(t, "webhook")

	r.uninstall(t)
	r.requireNothingLeft(t)
}

// examplePi is examples/spark-pi.yaml as a user applies it, with a shorter job.
func examplePi(t *testing.T) *v1beta2.SparkApplication {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "examples", "spark-pi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var app v1beta2.SparkApplication
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096).Decode(&app); err != nil {
		t.Fatal(err)
	}
	// The same application with 20 slices instead of the example's 1000: a job of seconds, not
	// minutes, on a 2-core node (make dev runs the example as it is), and JVMs that spend less
	// CPU on it.
	app.Spec.Arguments = []string{"20"}
	app.Spec.SparkConf = cluster.QuickJVM(app.Spec.SparkConf)
	return &app
}

func (r *release) webhookName() string { return r.name + "-webhook" }

// requireServiceClientConfig: every webhook of both configurations names the chart's Service,
// not a URL.
func (r *release) requireServiceClientConfig(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	mut, err := r.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, r.webhookName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	val, err := r.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, r.webhookName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, cc admissionregistrationv1.WebhookClientConfig) {
		if cc.URL != nil || cc.Service == nil || cc.Service.Name != r.webhookName() || cc.Service.Namespace != r.namespace {
			t.Errorf("webhook %s: clientConfig %+v, want the Service %s/%s and no URL", name, cc, r.namespace, r.webhookName())
		}
	}
	for _, w := range mut.Webhooks {
		check(w.Name, w.ClientConfig)
	}
	for _, w := range val.Webhooks {
		check(w.Name, w.ClientConfig)
	}
	if len(mut.Webhooks) == 0 || len(val.Webhooks) == 0 {
		t.Errorf("%d mutating and %d validating webhooks, want some of each", len(mut.Webhooks), len(val.Webhooks))
	}
}

// requireOwnCertificate: the webhook filled the chart's empty Secret with a CA and serving
// certificate of its own, and that CA is what both configurations give the API server.
func (r *release) requireOwnCertificate(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	var secret corev1.Secret
	cluster.Eventually(t, 2*time.Minute, "the webhook's certificate in its Secret and both configurations", func() (bool, error) {
		if err := r.c.Get(ctx, client.ObjectKey{Namespace: r.namespace, Name: r.webhookName() + "-certs"}, &secret); err != nil {
			return false, err
		}
		ca := secret.Data["ca.crt"]
		if len(ca) == 0 || len(secret.Data["tls.crt"]) == 0 || len(secret.Data["tls.key"]) == 0 {
			return false, nil
		}
		return r.caBundlesAre(t, ca), nil
	})
}

func (r *release) caBundlesAre(t *testing.T, ca []byte) bool {
	t.Helper()
	ctx := context.Background()
	mut, err := r.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, r.webhookName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	val, err := r.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, r.webhookName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var bundles [][]byte
	for _, w := range mut.Webhooks {
		bundles = append(bundles, w.ClientConfig.CABundle)
	}
	for _, w := range val.Webhooks {
		bundles = append(bundles, w.ClientConfig.CABundle)
	}
	for _, b := range bundles {
		if !bytes.Equal(b, ca) {
			return false
		}
	}
	return true
}

// requireValidatedThroughService waits until the API server reaches the validating webhook
// through the chart's Service: it refuses an application of the job namespace ns setting
// spark.master with the webhook's message.
func (r *release) requireValidatedThroughService(t *testing.T, ns string) {
	t.Helper()
	var last error
	cluster.Eventually(t, 2*time.Minute, "the API server to call the validating webhook through its Service", func() (bool, error) {
		a := examplePi(t)
		a.Namespace, a.Name = ns, "refused"
		a.Spec.SparkConf = map[string]string{"spark.master": "local[2]"}
		last = r.c.Create(context.Background(), a, client.DryRunAll)
		return last != nil && strings.Contains(last.Error(), "spec.sparkConf[spark.master]"), nil
	})
	t.Logf("refused as expected: %v", last)
}

// requireMutatedThroughService creates a suspended application in the job namespace ns and, in
// a server-side dry run, an executor pod for it with nothing of the application's on it, as
// Spark would: the pod the API server returns carries the application's executor env, which
// only the mutating webhook can have added.
func (r *release) requireMutatedThroughService(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	app := examplePi(t)
	app.Namespace, app.Name = ns, "suspended"
	app.Spec.Suspend = ptr.To(true)
	app.Spec.Executor.Env = []corev1.EnvVar{{Name: "INSTALLED_BY", Value: "helm"}}
	if err := r.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.c.Delete(context.Background(), app) })
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: "suspended-exec-1", Labels: map[string]string{
			v1beta2.LabelLaunchedByOperator: "true", v1beta2.LabelAppName: app.Name, v1beta2.SparkRoleLabel: v1beta2.SparkRoleExecutor,
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: v1beta2.SparkExecutorContainerName, Image: *app.Spec.Image}}},
	}
	if err := r.c.Create(ctx, pod, client.DryRunAll); err != nil {
		t.Fatalf("creating an executor pod (dry run): %v", err)
	}
	for _, e := range pod.Spec.Containers[0].Env {
		if e.Name == "INSTALLED_BY" && e.Value == "helm" {
			return
		}
	}
	t.Errorf("the webhook did not add the application's executor env to the pod: %v", pod.Spec.Containers[0].Env)
}

// waitCompleted waits until app is COMPLETED, failing at once if it ends otherwise.
func (r *release) waitCompleted(t *testing.T, app *v1beta2.SparkApplication) *v1beta2.SparkApplication {
	t.Helper()
	var got v1beta2.SparkApplication
	cluster.Eventually(t, appTimeout, app.Name+" to complete", func() (bool, error) {
		if err := r.c.Get(context.Background(), client.ObjectKeyFromObject(app), &got); err != nil {
			return false, err
		}
		switch got.Status.AppState.State {
		case v1beta2.ApplicationStateCompleted:
			return true, nil
		case v1beta2.ApplicationStateFailed, v1beta2.ApplicationStateFailedSubmission:
			t.Fatalf("%s ended %s: %s\n%s\n%s", app.Name, got.Status.AppState.State, got.Status.AppState.ErrorMessage,
				cluster.Tail(r.driverLog(&got), 30), r.diagnostics())
		}
		return false, nil
	})
	return &got
}

func (r *release) driverLog(app *v1beta2.SparkApplication) string {
	b, err := r.cs.CoreV1().Pods(app.Namespace).GetLogs(app.DriverPodName(), &corev1.PodLogOptions{Container: v1beta2.SparkDriverContainerName}).DoRaw(context.Background())
	if err != nil {
		return "(no driver log: " + err.Error() + ")"
	}
	return string(b)
}
