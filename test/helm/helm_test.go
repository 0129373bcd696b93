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
// through its Service with the certificate the webhook made, and Spark runs on the node.
//
// The tests install one release after another, each uninstalled at its end.
package helm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/test/cluster"
)

const chartDir = "charts/spark-operator"

var realNode struct {
	once              sync.Once
	state, kubeconfig string
	err               error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if code != 0 && realNode.state != "" {
		printNodeLogs(filepath.Join(realNode.state, "logs"))
	}
	if realNode.state != "" {
		_ = cluster.Down(context.Background(), realNode.state)
		_ = os.RemoveAll(filepath.Dir(realNode.state))
	}
	os.Exit(code)
}

func printNodeLogs(dir string) {
	for _, name := range []string{"kube-apiserver", "containerd", "kubelet"} {
		b, err := os.ReadFile(filepath.Join(dir, name+".log"))
		if err != nil {
			continue
		}
		fmt.Printf("===== %s.log (last 30 lines)\n%s\n", name, tail(string(b), 30))
	}
}

// realCluster returns the kubeconfig of the package's cluster, started the first time: one real
// node, the Workload API (for batchScheduler: kubernetes), the operator's image imported.
func realCluster(t *testing.T) string {
	t.Helper()
	realNode.once.Do(func() {
		dir, err := os.MkdirTemp("", "helm-")
		if err != nil {
			realNode.err = err
			return
		}
		realNode.state = filepath.Join(dir, "cluster")
		ctx := context.Background()
		if realNode.kubeconfig, realNode.err = cluster.Up(ctx, realNode.state, "--real-node", "--workload-api"); realNode.err != nil {
			return
		}
		tar, err := repoCommand("hack/operator-image.sh", "build")
		if err == nil {
			_, err = cluster.Script(ctx, realNode.state, "import-image", tar)
		}
		realNode.err = err
	})
	if realNode.err != nil {
		t.Fatalf("local cluster with a real node and the operator's image: %v", realNode.err)
	}
	return realNode.kubeconfig
}

// repoCommand runs a script of the repository and returns the last line it printed.
func repoCommand(script string, args ...string) (string, error) {
	root, err := cluster.RepoRoot()
	if err != nil {
		return "", err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(root, script), args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %v\n%s", script, err, tail(stderr.String(), 30))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}

// buildHelm builds the pinned helm once per test binary (a no-op when it is built already).
var buildHelm = sync.OnceValue(func() error {
	_, err := cluster.Script(context.Background(), "", "build", "--with-helm")
	return err
})

// helm runs the pinned helm with args in the repository's root.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := buildHelm(); err != nil {
		t.Fatal(err)
	}
	cache := os.Getenv("SPARKOP_CACHE") // as hack/local-cluster.sh reads it
	if cache == "" {
		cache = filepath.Join(root, ".cache")
	}
	cmd := exec.Command(filepath.Join(cache, "bin", "helm"), args...)
	cmd.Dir = root
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// release is an installed release of the chart.
type release struct {
	name, namespace, kubeconfig string
	c                           client.Client
	cs                          kubernetes.Interface
	uninstalled                 bool
}

// install installs the chart as release name in namespace (made by helm) with the extra helm
// arguments, and waits until its Deployments are available; it is uninstalled when the test
// ends, if the test did not.
func install(t *testing.T, name, namespace string, extra ...string) *release {
	t.Helper()
	kc := realCluster(t)
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
		fmt.Fprintf(&b, "%s\n", tail(r.podLog(p.Name), 20))
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

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// appTimeout bounds a whole application, JVM starts included, on a 2-core machine shared with
// other builds and clusters (examples/spark-pi.yaml took 10 minutes under a load of 40).
const appTimeout = 20 * time.Minute
