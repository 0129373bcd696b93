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
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// previousRelease is the commit whose chart stands for the previous release. The project has
// not released yet (Chart.yaml has said 0.1.0 since the chart's first commit), so the previous
// release is the chart as it was when `make dev` first installed the operator with it (the merge
// of #48's first half): the first chart a user could have installed and run, since when its
// values, objects and CRDs changed. Its image is today's: what is upgraded is the chart.
const previousRelease = "68980dbd598e1853ec79fe44a12c0ed88366b36d"

// TestUpgradeFromPreviousRelease installs the previous release's chart, with its CRDs and
// cert-manager issuing the webhook's certificate (hack/local-cluster.sh cert-manager), and runs
// an application; replaces the CRDs as docs/helm.md says and upgrades to today's chart: the API
// server calls both webhooks through the Service trusting cert-manager's CA, the first
// application is untouched and a new one completes. A second upgrade turns on the spark-submit
// mode: the controller runs the image with Spark (hack/operator-image.sh build --spark-submit)
// and spark-pi, submitted by spark-submit from its pod, completes on the real node. `helm
// uninstall` leaves only what docs/helm.md says it keeps. Applications other than spark-pi run
// their drivers on the simulated nodes (kwok): only the spark-submit run needs Spark.
func TestUpgradeFromPreviousRelease(t *testing.T) {
	kc := realNode.Kubeconfig(t)
	old := previousChartDir(t)
	c, cs := cluster.Clients(t, kc)
	ns := cluster.Namespace(t, c, "upgrade")
	r := &release{name: "so-upgrade", namespace: "so-upgrade", kubeconfig: kc, c: c, cs: cs, certManager: true}
	t.Cleanup(func() { r.uninstall(t) })
	values := []string{"--set", "fullnameOverride=" + r.name, "--set", "spark.jobNamespaces={" + ns + "}", "--set", "certManager.enable=true"}
	ctx := context.Background()
	if _, err := cluster.Script(ctx, realNode.State(), "cert-manager"); err != nil {
		t.Fatal(err)
	}

	// As the previous release left a cluster: its CRDs (Helm installs a chart's CRDs only where
	// there are none), its objects.
	kubectl(t, kc, "apply", "--server-side", "--force-conflicts", "-f", filepath.Join(old, "crds"))
	r.helm(t, append([]string{"install", r.name, old, "--create-namespace"}, values...)...)
	if err := c.Create(ctx, r.simulatedDriver(ns, "before")); err != nil {
		t.Fatal(err)
	}
	r.requireAllCompleted(t, ns, []string{"before"})

	replaceCRDs(t, kc)
	r.helm(t, append([]string{"upgrade", r.name, chartDir}, values...)...)
	r.requireServiceClientConfig(t)
	r.requireCertManagerCertificate(t)
	r.requireValidatedThroughService(t, ns)
	r.requireMutatedThroughService(t, ns)
	if err := c.Create(ctx, r.simulatedDriver(ns, "after")); err != nil {
		t.Fatal(err)
	}
	r.requireAllCompleted(t, ns, []string{"before", "after"})

	r.requireSubmittedBySparkSubmit(t, ns)
	r.noForbidden(t, "controller")
	r.noForbidden(t, "webhook")

	r.uninstall(t)
	r.requireNothingLeft(t)
}

// previousChartDir is the chart of previousRelease, taken from the clone's history.
func previousChartDir(t *testing.T) string {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", root, "cat-file", "-e", previousRelease+"^{commit}").CombinedOutput(); err != nil {
		t.Fatalf("the commit %s, whose chart stands for the previous release, is not in this clone's history "+
			"(a shallow clone? `git fetch --unshallow` brings it): %v\n%s", previousRelease, err, out)
	}
	dir := t.TempDir()
	extract := exec.Command("sh", "-c", `git -C "$1" archive --format=tar "$2" "$3" | tar -x -C "$4"`,
		"sh", root, previousRelease, chartDir, dir)
	if out, err := extract.CombinedOutput(); err != nil {
		t.Fatalf("extracting %s's chart: %v\n%s", previousRelease, err, out)
	}
	return filepath.Join(dir, chartDir)
}

// helm runs a helm install or upgrade (args) of the release, waiting until it is ready.
func (r *release) helm(t *testing.T, args ...string) {
	t.Helper()
	args = append(args, "--kubeconfig", r.kubeconfig, "--namespace", r.namespace, "--wait", "--timeout", "10m")
	if out, err := helm(t, args...); err != nil {
		t.Fatalf("helm %s: %v\n%s\n%s", args[0], err, out, r.diagnostics())
	}
}

// requireCertManagerCertificate waits until the webhook's Secret is the one cert-manager issued
// for the chart's Certificate, signed by the chart's CA, and that CA is what both configurations
// give the API server (cert-manager's CA injector put it there).
func (r *release) requireCertManagerCertificate(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	var secret, ca corev1.Secret
	var issued, byChartCA, injected bool
	defer func() {
		if t.Failed() {
			cert := &unstructured.Unstructured{}
			cert.SetGroupVersionKind(schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"})
			err := r.c.Get(ctx, client.ObjectKey{Namespace: r.namespace, Name: r.webhookName()}, cert)
			status, _, _ := unstructured.NestedFieldNoCopy(cert.Object, "status")
			t.Logf("issued by cert-manager %v, its CA the chart's %v (%s), injected %v (%s); the Secret's annotations %v; the Certificate's status %v %v\n%s",
				issued, byChartCA, subject(secret.Data["ca.crt"]), injected, r.bundleSubjects(t), secret.Annotations, status, err, r.diagnostics())
		}
	}()
	cluster.Eventually(t, 3*time.Minute, "cert-manager's certificate in the webhook's Secret and both configurations", func() (bool, error) {
		err := r.c.Get(ctx, client.ObjectKey{Namespace: r.namespace, Name: r.webhookName() + "-certs"}, &secret)
		if err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if err := r.c.Get(ctx, client.ObjectKey{Namespace: r.namespace, Name: r.webhookName() + "-ca"}, &ca); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		issued = secret.Annotations["cert-manager.io/certificate-name"] == r.webhookName() && len(secret.Data["ca.crt"]) > 0
		byChartCA = sameCertificate(secret.Data["ca.crt"], ca.Data["tls.crt"])
		injected = r.caBundlesAre(t, secret.Data["ca.crt"])
		return issued && byChartCA && injected, nil
	})
}

// subject is the subject of the first certificate in the PEM data, for a failure's message.
func subject(data []byte) string {
	b, _ := pem.Decode(data)
	if b == nil {
		return "no certificate"
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return err.Error()
	}
	return c.Subject.String() + " serial " + c.SerialNumber.String()
}

// bundleSubjects describes the CA bundle of each webhook of the release's configurations.
func (r *release) bundleSubjects(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	if mut, err := r.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, r.webhookName(), metav1.GetOptions{}); err == nil {
		fmt.Fprintf(&b, "mutating %v:", mut.Annotations)
		for _, w := range mut.Webhooks {
			fmt.Fprintf(&b, " %s: %s;", w.Name, subject(w.ClientConfig.CABundle))
		}
	}
	if val, err := r.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, r.webhookName(), metav1.GetOptions{}); err == nil {
		fmt.Fprintf(&b, " validating %v:", val.Annotations)
		for _, w := range val.Webhooks {
			fmt.Fprintf(&b, " %s: %s;", w.Name, subject(w.ClientConfig.CABundle))
		}
	}
	return b.String()
}

// sameCertificate: the PEM blocks a and b hold the same first certificate.
func sameCertificate(a, b []byte) bool {
	pa, _ := pem.Decode(a)
	pb, _ := pem.Decode(b)
	return pa != nil && pb != nil && bytes.Equal(pa.Bytes, pb.Bytes)
}

// requireSubmittedBySparkSubmit upgrades the release to the spark-submit mode, the controller
// running the image with Spark, and runs spark-pi to COMPLETED: its driver pod is the one
// spark-submit made (the native submitter labels its own customised).
func (r *release) requireSubmittedBySparkSubmit(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	tar, err := cluster.RepoCommand("hack/operator-image.sh", "build", "--spark-submit")
	if err != nil {
		t.Fatal(err)
	}
	image, err := cluster.RepoCommand("hack/operator-image.sh", "ref", "--spark-submit")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Script(ctx, realNode.State(), "import-image", tar); err != nil {
		t.Fatal(err)
	}
	r.helm(t, "upgrade", r.name, chartDir, "--reuse-values", "--set", "controller.submissionMode=spark-submit")
	var d appsv1.Deployment
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: r.namespace, Name: r.name + "-controller"}, &d); err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != image {
		t.Fatalf("the controller runs %s in the spark-submit mode, want %s", got, image)
	}

	app := r.smallPi(ns, "submitted")
	// The driver's Kubernetes client waits 10 s for a connection by default, which a 2-core
	// machine shared with other clusters exceeds (as in TestMigrateFromKubeflow).
	app.Spec.SparkConf = map[string]string{
		"spark.kubernetes.driver.connectionTimeout": "60000", "spark.kubernetes.driver.requestTimeout": "60000"}
	if err := r.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	done := r.waitCompleted(t, app)
	if log := r.driverLog(done); !strings.Contains(log, "Pi is roughly 3.1") {
		t.Errorf("spark-pi's driver log has no \"Pi is roughly 3.1…\":\n%s", cluster.Tail(log, 20))
	}
	var driver corev1.Pod
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: done.DriverPodName()}, &driver); err != nil {
		t.Fatal(err)
	}
	if driver.Labels[v1beta2.LabelCustomised] != "" {
		t.Errorf("the driver pod is labelled %s: the native submitter made it, not spark-submit", v1beta2.LabelCustomised)
	}
}
