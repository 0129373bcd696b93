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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/test/cluster"
)

// flavorLabel is the node label of the test's ResourceFlavor: Kueue puts it in the node
// selector of the applications it admits, and the operator must honour it.
const flavorLabel = "test.sparkop.dev/kueue-flavor"

// TestKueue runs 20 applications labelled for a LocalQueue of Kueue v0.17.0's (its own
// SparkApplication integration, `hack/local-cluster.sh kueue`) whose ClusterQueue has quota for
// 4: Kueue's webhook creates them suspended, Kueue resumes at most 4 at a time, with its
// ResourceFlavor's node label in their node selectors, which the operator honours; all complete,
// none in part, each with its Workload admitted and finished; `down` stops Kueue. The operator
// runs with no batch scheduler: Kueue manages spec.suspend, which the operator honours as it
// does for any user.
func TestKueue(t *testing.T) {
	ctx := context.Background()
	state, kubeconfig := fourAppCluster(t)
	c, _ := cluster.Clients(t, kubeconfig)
	if _, err := cluster.Script(ctx, state, "kueue"); err != nil {
		t.Fatal(err)
	}
	ns := cluster.Namespace(t, c, "kueue")
	t.Cleanup(func() { describe(t, c, ns) })

	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"on"}}}`, flavorLabel)
		if err := c.Patch(ctx, &n, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	// 4 applications of 6 CPU (Kueue counts coreRequest) and 1.5Gi (spec memory).
	kueueQueue(t, c, ns, *resource.NewQuantity(fitAtOnce*(executorCount+1)*podCPU, resource.DecimalSI))

	cluster.StartOperator(t, "operator", "--kubeconfig", kubeconfig, "--namespaces", ns, "--submission-workers", "8",
		"--enable-spark-connect=false", "-logtostderr", "-v=1")
	for i := range apps {
		app := newApp(ns, "kueue", i)
		app.Labels = map[string]string{scheduler.LabelKueueQueueName: "spark"}
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		// Kueue's webhook suspends it on its creation, before the operator sees it.
		if !ptr.Deref(app.Spec.Suspend, false) {
			t.Errorf("%s was created unsuspended", app.Name)
		}
	}

	f := runUnderKueue(t, c, ns, apps, fitAtOnce, 1)
	drivers := 0
	for _, p := range f.Seen() {
		if p.Labels[v1beta2.SparkRoleLabel] != v1beta2.SparkRoleDriver {
			continue
		}
		drivers++
		if p.Spec.NodeSelector[flavorLabel] != "on" {
			t.Errorf("driver %s was created without the node selector Kueue set (%s=on): %v", p.Name, flavorLabel, p.Spec.NodeSelector)
		}
	}
	if drivers != apps {
		t.Errorf("%d drivers seen, want %d", drivers, apps)
	}

	t.Run("examples/spark-pi-kueue.yaml runs", func(t *testing.T) {
		app := example(t, c, ns, "spark-pi-kueue.yaml")
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		if !ptr.Deref(app.Spec.Suspend, false) {
			t.Error("the example was created unsuspended")
		}
		cluster.Eventually(t, 2*time.Minute, "the example to complete", func() (bool, error) {
			if _, _, err := f.step(); err != nil {
				return false, err
			}
			err := c.Get(ctx, client.ObjectKeyFromObject(app), app)
			return app.Status.AppState.State == v1beta2.ApplicationStateCompleted, err
		})
		checkWorkload(t, c, app)
	})

	t.Run("held-out shapes, with make dev's operator", func(t *testing.T) {
		testKueueCount(t, c, kubeconfig)
	})

	t.Run("the gang core admits Kueue's applications by the nodes", func(t *testing.T) {
		testKueueGang(t, c, kubeconfig)
	})

	t.Run("down stops Kueue", func(t *testing.T) {
		downStops(t, state, "kueue")
	})
}

// kueueQueue makes the LocalQueue "spark" in ns, of a ClusterQueue named ns whose flavor puts
// flavorLabel in the node selector, with quota of cpu (and ample memory), and waits until Kueue
// has it active; the ClusterQueue and flavor go when the test ends.
func kueueQueue(t *testing.T, c client.Client, ns string, cpu resource.Quantity) {
	t.Helper()
	createKueueQueue(t, c, cluster.NewKueueQueue(ns, map[string]string{flavorLabel: "on"}, corev1.ResourceList{
		corev1.ResourceCPU:    cpu,
		corev1.ResourceMemory: resource.MustParse("100Gi"),
	}, ns, "spark"))
}

// checkWorkload checks that Kueue made a Workload for app, admitted it to the test's
// ClusterQueue and saw it finish. Kueue marks the Workload finished after it sees the
// application's end, on its own time, so an application that has just completed is given a
// while for that.
func checkWorkload(t *testing.T, c client.Client, app *v1beta2.SparkApplication) {
	t.Helper()
	var state string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (done bool, err error) {
		state, done, err = workloadOf(ctx, c, app)
		return done, err
	})
	if err != nil {
		t.Errorf("%s: %s: %v", app.Name, state, err)
	}
}

// workloadOf reports the Workload Kueue made for app: whether it was admitted to the
// ClusterQueue named after the application's namespace and is finished, and if not, what it is.
func workloadOf(ctx context.Context, c client.Client, app *v1beta2.SparkApplication) (state string, done bool, err error) {
	var wls unstructured.UnstructuredList
	wls.SetGroupVersionKind(cluster.KueueGV.WithKind("WorkloadList"))
	if err := c.List(ctx, &wls, client.InNamespace(app.Namespace)); err != nil {
		return "", false, err
	}
	for _, wl := range wls.Items {
		owned := false
		for _, ref := range wl.GetOwnerReferences() {
			owned = owned || ref.UID == app.UID
		}
		if !owned {
			continue
		}
		cq, _, _ := unstructured.NestedString(wl.Object, "status", "admission", "clusterQueue")
		conds, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
		finished := false
		for _, cond := range conds {
			if m, _ := cond.(map[string]any); m["type"] == "Finished" && m["status"] == "True" {
				finished = true
			}
		}
		state = fmt.Sprintf("Workload %s admitted to %q, finished %v", wl.GetName(), cq, finished)
		return state, cq == app.Namespace && finished, nil
	}
	return "no Workload of Kueue's owned by it", false, nil
}

// runUnderKueue runs a namespace's total applications, queued by Kueue in a ClusterQueue with
// room for fit at a time, to their end: never more than fit unsuspended at once (and at least
// least), none in part, each COMPLETED on its first attempt with its Workload finished.
func runUnderKueue(t *testing.T, c client.Client, ns string, total, fit, least int) *fixture {
	t.Helper()
	f := newFixture(t, c, ns, allAtOnce)
	maxResumed := 0
	var list []v1beta2.SparkApplication
	cluster.Eventually(t, 6*time.Minute, "all applications to finish", func() (bool, error) {
		all, finished, err := f.step()
		if err != nil {
			return false, err
		}
		list = all
		now := resumed(all)
		maxResumed = max(maxResumed, now)
		if now > fit {
			return false, fmt.Errorf("%d applications unsuspended at once; the ClusterQueue has room for %d", now, fit)
		}
		return finished == total, nil
	})
	t.Logf("kueue: at most %d applications unsuspended and %d drivers running at once, %d in part", maxResumed, f.PeakDrivers(), len(f.Partial()))
	for app, why := range f.Partial() {
		t.Errorf("%s ran in part: %s", app, why)
	}
	if maxResumed < least {
		t.Errorf("at most %d applications unsuspended at once, want at least %d of the ClusterQueue's %d", maxResumed, least, fit)
	}
	for _, app := range list {
		if app.Status.AppState.State != v1beta2.ApplicationStateCompleted || app.Status.ExecutionAttempts != 1 {
			t.Errorf("%s: %s after %d attempts: %s", app.Name, app.Status.AppState.State, app.Status.ExecutionAttempts, app.Status.AppState.ErrorMessage)
		}
		checkWorkload(t, c, &app)
	}
	return f
}
