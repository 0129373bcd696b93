/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package helm tests the operator installed as users install it: `helm install` of
// charts/spark-operator onto a local cluster with a real node (hack/local-cluster.sh up
// --real-node), running the operator's image built here (hack/operator-image.sh) in pods. What
// test/chart simulates (the Deployments' processes, the Service's routing) is real here: the
// operator runs in its pods with the chart's service accounts, the API server calls the webhook
// through its Service with the certificate the webhook made (or cert-manager issued), and Spark
// runs on the node.
//
// The tests install one release after another, each uninstalled at its end.
package helm

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/test/cluster"
)

const chartDir = "charts/spark-operator"

// realNode is the package's cluster: one real node, the Workload API (for batchScheduler:
// kubernetes), the operator's image imported, under its own tag and a second one (rolledTag).
// Beside the real node, two simulated nodes, tainted, run the drivers of TestTwoReplicas's
// applications, too many for real Spark on the machine; other pods stay on the real node.
var realNode = &cluster.Own{Prefix: "helm-",
	Args: []string{"--real-node", "--workload-api", "--nodes", "2", "--node-cpu", "64", "--node-memory", "512Gi", "--node-pods", "500"},
	Logs: []string{"kube-apiserver", "containerd", "kubelet", "cert-manager-lite"},
	Then: func(ctx context.Context, state string) error {
		tar, err := cluster.RepoCommand("hack/operator-image.sh", "build")
		if err != nil {
			return err
		}
		ref, err := cluster.RepoCommand("hack/operator-image.sh", "ref")
		if err != nil {
			return err
		}
		if _, err = cluster.Script(ctx, state, "import-image", tar); err != nil {
			return err
		}
		_, err = cluster.Script(ctx, state, "tag-image", ref, rolledTag(ref))
		return err
	}}

func TestMain(m *testing.M) { realNode.Main(m) }

// helm runs the pinned helm with args in the repository's root.
var helm = cluster.Helm

// release is an installed release of the chart.
type release struct {
	name, namespace, kubeconfig string
	c                           client.Client
	cs                          kubernetes.Interface
	uninstalled                 bool
	// certManager: installed with certManager.enable, whose Secrets cert-manager keeps.
	certManager bool
}

// install installs the chart as release name in namespace (made by helm) with the extra helm
// arguments, and waits until its Deployments are available; it is uninstalled when the test
// ends, if the test did not.
func install(t *testing.T, name, namespace string, extra ...string) *release {
	t.Helper()
	kc := realNode.Kubeconfig(t)
	c, cs := cluster.Clients(t, kc)
	r := &release{name: name, namespace: namespace, kubeconfig: kc, c: c, cs: cs}
	args := append([]string{"install", name, chartDir, "--kubeconfig", kc, "--namespace", namespace,
		"--create-namespace", "--wait", "--timeout", "5m"}, extra...)
	t.Cleanup(func() { r.uninstall(t) })
	if out, err := helm(t, args...); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, r.diagnostics())
	}
	return r
}

func (r *release) uninstall(t *testing.T) {
	t.Helper()
	if r.uninstalled {
		return
	}
	r.uninstalled = true
	if out, err := helm(t, "uninstall", r.name, "--kubeconfig", r.kubeconfig, "--namespace", r.namespace, "--wait", "--timeout", "3m"); err != nil {
		t.Errorf("%v\n%s", err, out)
	}
}

// diagnostics describes the release's pods and the end of their logs, for a failure.
func (r *release) diagnostics() string {
	var b strings.Builder
	pods, err := r.cs.CoreV1().Pods(r.namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "pod %s: %s %s\n", p.Name, p.Status.Phase, containerStates(&p))
		fmt.Fprintf(&b, "%s\n", cluster.Tail(r.podLog(p.Name), 20))
	}
	return b.String()
}

func containerStates(p *corev1.Pod) string {
	var s []string
	for _, c := range p.Status.ContainerStatuses {
		s = append(s, fmt.Sprintf("%s ready=%v restarts=%d %+v", c.Name, c.Ready, c.RestartCount, c.State))
	}
	return strings.Join(s, "; ")
}

func (r *release) podLog(pod string) string {
	b, err := r.cs.CoreV1().Pods(r.namespace).GetLogs(pod, &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		return fmt.Sprintf("(no log of %s: %v)", pod, err)
	}
	return string(b)
}

// componentLogs is the logs of every pod of a component of the release (controller, webhook).
func (r *release) componentLogs(t *testing.T, component string) string {
	t.Helper()
	pods, err := r.cs.CoreV1().Pods(r.namespace).List(context.Background(), metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/instance=" + r.name + ",app.kubernetes.io/component=" + component})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) == 0 {
		t.Fatalf("the release %s has no %s pod", r.name, component)
	}
	var b strings.Builder
	for _, p := range pods.Items {
		b.WriteString(r.podLog(p.Name))
	}
	return b.String()
}

// noForbidden fails the test for each line of the component's logs where the API server
// refused the operator a request: a right the chart does not grant.
func (r *release) noForbidden(t *testing.T, component string) {
	t.Helper()
	for _, line := range strings.Split(r.componentLogs(t, component), "\n") {
		if strings.Contains(line, "forbidden") {
			t.Errorf("%s refused by the API server under the chart's RBAC: %s", component, line)
		}
	}
}

// appTimeout bounds a whole application, JVM starts included, on a 2-core machine shared with
// other builds and clusters (examples/spark-pi.yaml took 10 minutes under a load of 40).
const appTimeout = 20 * time.Minute
