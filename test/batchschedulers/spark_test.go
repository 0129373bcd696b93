/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package batchschedulers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/sparkplay"
)

const (
	apps = 20
	// Each application: a driver of 2 CPU and 2 executors of 2 CPU. Nodes of 6 CPU hold 3 such
	// pods whatever the mix, so 4 nodes fit exactly 4 gangs, and capacity is never lost to
	// fragmentation: an executor left unplaced is a gang that did not hold.
	executorCount = 2
	podCPU        = 2
	nodes         = "4"
	nodeCPU       = "6"
	fitAtOnce     = 4
	// executorRunSeconds is how long an executor runs once on a node; play ends its driver
	// once all its executors have run, so an application holds its room at least that long,
	// however slow the machine: long enough that applications created together overlap.
	executorRunSeconds = 10
)

// allAtOnce plays Spark for the tests whose drivers make all their executors at once: one
// marked Unschedulable while its driver runs is a partial start.
var allAtOnce = sparkplay.Options{UnschedulableIsPartial: true}

// fourAppCluster starts a cluster of the test's own, sized to fit 4 applications, and stops it
// (with whatever hack/local-cluster.sh started on it) when the test ends.
func fourAppCluster(t *testing.T) (state, kubeconfig string) {
	t.Helper()
	state = filepath.Join(t.TempDir(), "cluster")
	kubeconfig, err := cluster.Up(context.Background(), state, "--nodes", nodes, "--node-cpu", nodeCPU, "--node-memory", "64Gi")
	t.Cleanup(func() {
		if err := cluster.Down(context.Background(), state); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return state, kubeconfig
}

// example reads examples/NAME into namespace ns and creates the service account it names.
func example(t *testing.T, c client.Client, ns, name string) *v1beta2.SparkApplication {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	app := &v1beta2.SparkApplication{}
	if err := yaml.UnmarshalStrict(data, app); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	app.Namespace = ns
	if sa := ptr.Deref(app.Spec.Driver.ServiceAccount, ""); sa != "" {
		if err := c.Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}}); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	return app
}

// downStops checks that `hack/local-cluster.sh down` stops the processes of the cluster in
// state that its on-demand commands started, named as in its pids folder.
func downStops(t *testing.T, state string, names ...string) {
	t.Helper()
	var pids []int
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(state, "pids", name+".pid"))
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		if !cluster.ProcessRunning(pid) {
			t.Fatalf("%s (process %d) is not running before down", name, pid)
		}
		pids = append(pids, pid)
	}
	if err := cluster.Down(context.Background(), state); err != nil {
		t.Fatal(err)
	}
	for i, pid := range pids {
		if cluster.ProcessRunning(pid) {
			t.Errorf("%s (process %d) still runs after down", names[i], pid)
		}
	}
}

// newApp is application i of the load: a 2-CPU driver and 2 executors of 2 CPU; coreRequest
// says the same as cores, so that every integration (Kueue reads coreRequest) counts 6 CPU.
func newApp(ns, prefix string, i int) *v1beta2.SparkApplication {
	app := cluster.SparkPi(ns, fmt.Sprintf("%s-%02d", prefix, i))
	cpu := fmt.Sprint(podCPU)
	app.Spec.Driver.Cores, app.Spec.Driver.CoreRequest = ptr.To[int32](podCPU), ptr.To(cpu)
	app.Spec.Executor.Cores, app.Spec.Executor.CoreRequest = ptr.To[int32](podCPU), ptr.To(cpu)
	app.Spec.Executor.Instances = ptr.To[int32](executorCount)
	return app
}

// describe logs where each application and Spark pod is, for a failed test.
func describe(t *testing.T, c client.Client, ns string) {
	if !t.Failed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var list v1beta2.SparkApplicationList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return
	}
	for _, app := range list.Items {
		t.Logf("%s: state %q %q, suspend %v, submission %s", app.Name, app.Status.AppState.State, app.Status.AppState.ErrorMessage,
			ptr.Deref(app.Spec.Suspend, false), app.Status.SubmissionID)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return
	}
	for _, p := range pods.Items {
		var why []string
		for _, c := range p.Status.Conditions {
			if c.Status != corev1.ConditionTrue && c.Message != "" {
				why = append(why, c.Message)
			}
		}
		t.Logf("pod %s: %s on %q, scheduler %s %s", p.Name, p.Status.Phase, p.Spec.NodeName, p.Spec.SchedulerName, strings.Join(why, "; "))
	}
}
