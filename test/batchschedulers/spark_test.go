/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package batchschedulers runs applications end to end through the real batch schedulers the
// operator integrates with, each started on a local cluster of the test's own by
// hack/local-cluster.sh (coscheduling, kueue): 20 applications on a cluster that fits 4,
// created at once, run to completion with no partial start. The test plays Spark: it creates
// each running driver's executors from the executor pod template the driver was given
// (test/executors), and kwok runs and ends them.
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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
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
	// Executors outlive their driver's run: the test ends them when the driver ends, as
	// Spark's driver does when it stops, so an application takes its capacity exactly while its
	// driver runs. A driver must run long enough for a step to see it running and make its
	// executors, on a loaded machine and through the webhook (at 8 s, 4 of 20 were missed).
	driverRunSeconds   = "15"
	executorRunSeconds = "600"
)

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

// example reads examples/NAME into namespace ns, its driver run for kwok's few seconds, and
// creates the service account it names.
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
	app.Spec.Driver.Annotations = map[string]string{executors.AnnotationRunSeconds: driverRunSeconds}
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
	app.Spec.Driver.Annotations = map[string]string{executors.AnnotationRunSeconds: driverRunSeconds}
	app.Spec.Executor.Cores, app.Spec.Executor.CoreRequest = ptr.To[int32](podCPU), ptr.To(cpu)
	app.Spec.Executor.Instances = ptr.To[int32](executorCount)
	return app
}

// sparkRun plays Spark for the applications of one namespace and records what it sees.
type sparkRun struct {
	c  client.Client
	ns string
	// started: drivers whose executors exist; stopped: drivers that ended, their executors
	// deleted; partial: applications that ran in part.
	started, stopped, partial map[string]bool
	maxRunning, partialStarts int
	// pods are the Spark pods seen, as first seen, by name.
	pods map[string]corev1.Pod
}

func newSparkRun(c client.Client, ns string) *sparkRun {
	return &sparkRun{c: c, ns: ns, started: map[string]bool{}, stopped: map[string]bool{}, partial: map[string]bool{}, pods: map[string]corev1.Pod{}}
}

// step looks at the applications and pods once: executors for each newly running driver, the
// executors of an ended driver deleted, partial starts counted (a running driver with an
// executor the scheduler could not place; a driver that ended with executors never placed).
// It returns the applications and how many have finished.
func (r *sparkRun) step(ctx context.Context) ([]v1beta2.SparkApplication, int, error) {
	var list v1beta2.SparkApplicationList
	if err := r.c.List(ctx, &list, client.InNamespace(r.ns)); err != nil {
		return nil, 0, err
	}
	var pods corev1.PodList
	if err := r.c.List(ctx, &pods, client.InNamespace(r.ns)); err != nil {
		return nil, 0, err
	}
	byName := map[string]*corev1.Pod{}
	unschedulable, unplaced := map[string]int{}, map[string]int{}
	for i := range pods.Items {
		p := &pods.Items[i]
		byName[p.Name] = p
		if _, ok := r.pods[p.Name]; !ok && p.Labels[v1beta2.SparkRoleLabel] != "" {
			r.pods[p.Name] = *p.DeepCopy()
		}
		if p.Labels[v1beta2.SparkRoleLabel] != v1beta2.SparkRoleExecutor || p.Spec.NodeName != "" {
			continue
		}
		app := p.Labels[v1beta2.LabelAppName]
		unplaced[app]++
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				unschedulable[app]++
			}
		}
	}
	running, finished := 0, 0
	for i := range list.Items {
		app := &list.Items[i]
		if st := app.Status.AppState.State; st == v1beta2.ApplicationStateCompleted || st == v1beta2.ApplicationStateFailed {
			finished++
		}
		driver := byName[app.DriverPodName()]
		if driver == nil {
			continue
		}
		if (driver.Status.Phase == corev1.PodSucceeded || driver.Status.Phase == corev1.PodFailed) && !r.stopped[driver.Name] {
			if unplaced[app.Name] > 0 {
				r.markPartial(app.Name)
			}
			if err := r.c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(r.ns), client.MatchingLabels{
				v1beta2.LabelAppName: app.Name, v1beta2.SparkRoleLabel: v1beta2.SparkRoleExecutor,
			}); err != nil {
				return nil, 0, err
			}
			r.stopped[driver.Name] = true
		}
		if driver.Status.Phase != corev1.PodRunning {
			continue
		}
		running++
		if unschedulable[app.Name] > 0 {
			r.markPartial(app.Name)
		}
		if r.started[driver.Name] {
			continue
		}
		started, err := r.startExecutors(ctx, app, driver)
		if err != nil {
			return nil, 0, err
		}
		r.started[driver.Name] = started
	}
	r.maxRunning = max(r.maxRunning, running)
	return list.Items, finished, nil
}

func (r *sparkRun) markPartial(app string) {
	if !r.partial[app] {
		r.partial[app] = true
		r.partialStarts++
	}
}

// startExecutors creates the driver's executors from the executor pod template its submitter
// gave it (its batch scheduler's labels and scheduler name included), as many and as big as
// app's spec says, as Spark would. It reports false, to be asked again, while the template's
// ConfigMap does not exist yet.
func (r *sparkRun) startExecutors(ctx context.Context, app *v1beta2.SparkApplication, driver *corev1.Pod) (bool, error) {
	template, err := executors.TemplateOf(ctx, r.c, driver)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	memory, err := sparkpod.ParseMiB(ptr.Deref(app.Spec.Executor.Memory, "1g"))
	if err != nil {
		return false, err
	}
	for id := 1; id <= int(ptr.Deref(app.Spec.Executor.Instances, 1)); id++ {
		pod, err := executors.Build(driver, id, executors.Options{Cores: int(ptr.Deref(app.Spec.Executor.Cores, 1)), MemoryMiB: int(memory), Template: template,
			Annotations: map[string]string{executors.AnnotationRunSeconds: executorRunSeconds}})
		if err != nil {
			return false, err
		}
		if err := r.c.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			return false, err
		}
	}
	return true, nil
}

// describe logs where each application is, for a failed test.
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
		t.Logf("pod %s: %s on %q, scheduler %s", p.Name, p.Status.Phase, p.Spec.NodeName, p.Spec.SchedulerName)
	}
}
