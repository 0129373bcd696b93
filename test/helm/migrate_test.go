/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package helm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/internal/crdcheck"
	"github.com/sparkop/spark-operator/internal/uinames"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/testenv"
)

// TestMigrateFromKubeflow moves a Kubeflow install over as docs/migrating.md says. With the
// Kubeflow operator's CRDs installed, the chart installs with a values file in Kubeflow's
// vocabulary (ci/kubeflow-values.yaml), and its controller refuses to start, naming the
// command that replaces the CRDs; that command, run as the guide gives it, lets it start. Then
// examples/spark-pi.yaml runs to COMPLETED with the values' UI Ingress TLS and annotations, a
// spec edit runs it again to COMPLETED (a new submission), and an application the gang
// scheduler holds reads QUEUED in the STATUS column of `kubectl get sparkapp`. The gang
// scheduler is the one value added to Kubeflow's (its chart has no queue of its own).
func TestMigrateFromKubeflow(t *testing.T) {
	kc := realNode.Kubeconfig(t)
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	kubeflowCRDs := kubeflowCRDDir(t, root)
	// As the Kubeflow chart leaves them; ours again at the end, for the package's other tests.
	kubectl(t, kc, "replace", "-f", kubeflowCRDs)
	t.Cleanup(func() { kubectl(t, kc, "replace", "-f", filepath.Join(root, chartDir, "crds")) })

	const name, namespace = "spark-operator", "spark-operator"
	c, cs := cluster.Clients(t, kc)
	r := &release{name: name, namespace: namespace, kubeconfig: kc, c: c, cs: cs}
	t.Cleanup(func() { r.uninstall(t) })
	if out, err := helm(t, "install", name, chartDir, "--kubeconfig", kc, "--namespace", namespace, "--create-namespace",
		"-f", chartDir+"/ci/kubeflow-values.yaml", "--set", "controller.batchScheduler.gang.enable=true"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	r.waitControllerRefusal(t)

	// The guide's step 2, as it gives it, then a new controller pod.
	replaceCRDs(t, kc)
	if err := c.DeleteAllOf(context.Background(), &corev1.Pod{}, client.InNamespace(namespace),
		client.MatchingLabels{"app.kubernetes.io/instance": name, "app.kubernetes.io/component": "controller"}); err != nil {
		t.Fatal(err)
	}
	r.waitAvailable(t)
	queued := r.createQueued(t)

	app := examplePi(t)
	// The driver's Kubernetes client waits up to 10s for a connection by default, which a
	// 2-core machine shared with other clusters has exceeded; what is tested here is the move.
	if app.Spec.SparkConf == nil {
		app.Spec.SparkConf = map[string]string{}
	}
	app.Spec.SparkConf["spark.kubernetes.driver.connectionTimeout"] = "60000"
	app.Spec.SparkConf["spark.kubernetes.driver.requestTimeout"] = "60000"
	retryWrite(t, "creating "+app.Name, func() error {
		if err := c.Create(context.Background(), app); !apierrors.IsAlreadyExists(err) { // made by a try whose answer was lost
			return err
		}
		return nil
	})
	t.Cleanup(func() { _ = c.Delete(context.Background(), app) })
	r.requireUIIngressFromValues(t, app)
	first := r.waitCompleted(t, app)
	if first.Status.LastSubmittedSpecHash == "" {
		t.Fatal("status.lastSubmittedSpecHash is empty: the CRD still drops it")
	}

	// A spec edit runs the application again.
	retryWrite(t, "editing "+app.Name, func() error {
		var cur v1beta2.SparkApplication
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(app), &cur); err != nil {
			return err
		}
		cur.Spec.Arguments = []string{"30"}
		return c.Update(context.Background(), &cur)
	})
	// The rerun is the edited spec's: a new submission, run to the end.
	cluster.Eventually(t, appTimeout, "the edited application to complete again", func() (bool, error) {
		var again v1beta2.SparkApplication
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(app), &again); err != nil {
			return false, err
		}
		if again.Status.SubmissionID == first.Status.SubmissionID {
			return false, nil
		}
		switch s := again.Status.AppState.State; s {
		case v1beta2.ApplicationStateFailed, v1beta2.ApplicationStateFailedSubmission:
			t.Fatalf("the rerun ended %s: %s\n%s\n%s", s, again.Status.AppState.ErrorMessage,
				cluster.Tail(r.driverLog(&again), 30), r.diagnostics())
		case v1beta2.ApplicationStateCompleted:
			return true, nil
		}
		return false, nil
	})
	// What a user reads after the move.
	want := map[string]string{app.Name: "COMPLETED", queued.Name: "QUEUED"}
	var got map[string]string
	cluster.Eventually(t, 2*time.Minute, "kubectl get sparkapp to show "+fmt.Sprint(want), func() (bool, error) {
		got = kubectlStatuses(t, kc, app.Namespace)
		return got[app.Name] == want[app.Name] && got[queued.Name] == want[queued.Name], nil
	})
	r.noForbidden(t, "controller")
	r.noForbidden(t, "webhook")
}

// retryWrite runs write until the API server takes it, while it fails for want of the webhook
// (its pod restarting: on a loaded 2-core machine its probes can time out) or on a conflict.
func retryWrite(t *testing.T, what string, write func() error) {
	t.Helper()
	cluster.Eventually(t, 5*time.Minute, what, func() (bool, error) {
		err := write()
		if apierrors.IsInternalError(err) || apierrors.IsConflict(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) {
			t.Logf("%s: %v; again", what, err)
			return false, nil
		}
		return err == nil, err
	})
}

// replaceCRDs runs the command docs/helm.md and docs/migrating.md give to replace the installed
// CRDs with the chart's, as they give it, in the repository's root.
func replaceCRDs(t *testing.T, kubeconfig string) {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", crdcheck.ReplaceCommand)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "PATH="+filepath.Join(cacheDir(root), "bin")+":"+os.Getenv("PATH"),
		"HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", crdcheck.ReplaceCommand, err, out)
	}
}

// kubeflowCRDDir is the Kubeflow operator's CRDs kept beside the repository.
func kubeflowCRDDir(t *testing.T, root string) string {
	dir := os.Getenv("SPARKOP_SHARED")
	if dir == "" {
		dir = filepath.Join(root, "..", "shared")
	}
	dir = filepath.Join(dir, "reference", "crds")
	if _, err := os.Stat(dir); err != nil {
		testenv.Missing(t, "the Kubeflow reference CRDs are not at %s (SPARKOP_SHARED overrides ../shared)", dir)
	}
	return dir
}

// cacheDir is where hack/local-cluster.sh links the binaries it built (kubectl, helm).
func cacheDir(root string) string {
	if d := os.Getenv("SPARKOP_CACHE"); d != "" {
		return d
	}
	return filepath.Join(root, ".cache")
}

// kubectl runs the cluster's kubectl with args and returns what it printed on stdout.
func kubectl(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd := exec.Command(filepath.Join(cacheDir(root), "bin", "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// kubectlStatuses runs `kubectl get sparkapp` in namespace and reads each application's STATUS
// column as printed: a cell starts where its header does (kubectl aligns them), and an empty
// cell is only spaces.
func kubectlStatuses(t *testing.T, kubeconfig, namespace string) map[string]string {
	t.Helper()
	out := kubectl(t, kubeconfig, "get", "sparkapp", "--namespace", namespace)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	at := strings.Index(lines[0], "STATUS")
	if !strings.HasPrefix(lines[0], "NAME") || at < 0 {
		t.Fatalf("kubectl get sparkapp printed no NAME and STATUS columns:\n%s", out)
	}
	got := map[string]string{}
	for _, l := range lines[1:] {
		if len(l) <= at {
			t.Fatalf("kubectl get sparkapp printed a short row %q:\n%s", l, out)
		}
		name, _, _ := strings.Cut(l, " ")
		status, _, _ := strings.Cut(l[at:], " ")
		got[name] = status
	}
	t.Logf("kubectl get sparkapp:\n%s", out)
	return got
}

// createQueued creates an application the gang scheduler holds: its Queue's parent does not
// exist, so the queue admits nothing (a queue with too little quota would reject it instead).
// It reads QUEUED while nothing else of it runs.
func (r *release) createQueued(t *testing.T) *v1beta2.SparkApplication {
	t.Helper()
	ctx := context.Background()
	q := &schedv1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "migrated-orphan"},
		Spec: schedv1alpha1.QueueSpec{Parent: "migrated-missing-parent"}}
	if err := r.c.Create(ctx, q); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.c.Delete(context.Background(), q) })
	app := examplePi(t)
	app.Name = "spark-pi-queued"
	app.Spec.BatchScheduler = ptr.To("gang")
	app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To(q.Name)}
	retryWrite(t, "creating "+app.Name, func() error {
		if err := r.c.Create(ctx, app); !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	})
	t.Cleanup(func() { _ = r.c.Delete(context.Background(), app) })
	return app
}

// waitControllerRefusal waits until the controller has refused to start on the CRDs, naming
// the command that replaces them.
func (r *release) waitControllerRefusal(t *testing.T) {
	t.Helper()
	cluster.Eventually(t, 5*time.Minute, "the controller to refuse Kubeflow's CRDs", func() (bool, error) {
		pods, err := r.cs.CoreV1().Pods(r.namespace).List(context.Background(), metav1.ListOptions{
			LabelSelector: "app.kubernetes.io/instance=" + r.name + ",app.kubernetes.io/component=controller"})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			for _, previous := range []bool{false, true} {
				b, err := r.cs.CoreV1().Pods(r.namespace).GetLogs(p.Name, &corev1.PodLogOptions{
					Container: "spark-operator-controller", Previous: previous}).DoRaw(context.Background())
				if err == nil && strings.Contains(string(b), "lacks the status fields") && strings.Contains(string(b), crdcheck.ReplaceCommand) {
					return true, nil
				}
			}
		}
		return false, nil
	})
}

// waitAvailable waits until both Deployments of the release have all their replicas available.
func (r *release) waitAvailable(t *testing.T) {
	t.Helper()
	for _, component := range []string{"controller", "webhook"} {
		name := fmt.Sprintf("%s-%s", r.name, component)
		cluster.Eventually(t, 5*time.Minute, name+" to be available", func() (bool, error) {
			var d appsv1.Deployment
			if err := r.c.Get(context.Background(), client.ObjectKey{Namespace: r.namespace, Name: name}, &d); err != nil {
				return false, err
			}
			return d.Status.ObservedGeneration == d.Generation && d.Status.UpdatedReplicas == *d.Spec.Replicas &&
				d.Status.AvailableReplicas == *d.Spec.Replicas && d.Status.Replicas == *d.Spec.Replicas, nil
		})
	}
}

// requireUIIngressFromValues waits for app's UI Ingress and checks it carries the TLS and
// annotations of ci/kubeflow-values.yaml's controller.uiIngress.
func (r *release) requireUIIngressFromValues(t *testing.T, app *v1beta2.SparkApplication) {
	t.Helper()
	var ing networkingv1.Ingress
	cluster.Eventually(t, appTimeout, "the UI Ingress", func() (bool, error) {
		err := r.c.Get(context.Background(), client.ObjectKey{Namespace: app.Namespace, Name: uinames.IngressName(app)}, &ing)
		return err == nil, client.IgnoreNotFound(err)
	})
	if len(ing.Spec.TLS) != 1 || ing.Spec.TLS[0].SecretName != "spark-ui-tls" || ing.Annotations["example.com/owner"] != "data-platform" {
		t.Errorf("UI Ingress TLS %+v, annotations %v: want the values' spark-ui-tls and example.com/owner", ing.Spec.TLS, ing.Annotations)
	}
}
