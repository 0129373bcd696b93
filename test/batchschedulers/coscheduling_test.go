/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package batchschedulers

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/coscheduling"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestCoscheduling runs 20 applications naming spec.batchScheduler: kube-scheduler, as
// Kubeflow's do, through scheduler-plugins' kube-scheduler with the Coscheduling plugin
// (`hack/local-cluster.sh coscheduling`), behind the operator's whole-gang admission and with
// its webhooks, on a cluster that fits 4: all complete, none in part,
// each run in a PodGroup of its own (owned by the application, minMember 1, minResources the
// whole gang) that its pods name, placed by that scheduler. Before the scheduler's CRDs are
// installed, an application naming it is refused, saying so (by the controller, and by the
// validating webhook), and so is one naming Volcano (the cluster, of its own, has neither: the
// package needs no shared cluster); `down` stops what `coscheduling` started.
func TestCoscheduling(t *testing.T) {
	ctx := context.Background()
	state, kubeconfig := fourAppCluster(t)
	c, _ := cluster.Clients(t, kubeconfig)
	ns := cluster.Namespace(t, c, "coscheduling")
	t.Cleanup(func() { describe(t, c, ns) })
	op := cluster.StartOperator(t, "operator", "--kubeconfig", kubeconfig, "--namespaces", ns, "--submission-workers", "8",
		"--enable-spark-connect=false", "--enable-batch-scheduler", "--kube-scheduler-names", coscheduling.DefaultName,
		"--coscheduling-schedule-timeout", "2m", "-logtostderr", "-v=1")

	t.Run("refused while the PodGroup CRD is not installed", func(t *testing.T) {
		app := newApp(ns, "no-crd", 0)
		app.Spec.BatchScheduler = ptr.To(coscheduling.DefaultName)
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		const want = "batch scheduler kube-scheduler needs the CRD podgroups.scheduling.x-k8s.io (scheduling.x-k8s.io/v1alpha1, Kind=PodGroup), which is not installed in the cluster"
		cluster.Eventually(t, time.Minute, "the application to be refused", func() (bool, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(app), app)
			return app.Status.AppState.State == v1beta2.ApplicationStateFailed, err
		})
		if msg := app.Status.AppState.ErrorMessage; !strings.HasPrefix(msg, want) {
			t.Errorf("refused with %q, want %q", msg, want)
		}
		if err := c.Delete(ctx, app); err != nil {
			t.Fatal(err)
		}

		// The validating webhook refuses it at once, saying the same.
		const configName = "coscheduling-webhook"
		t.Cleanup(func() {
			_ = c.Delete(context.Background(), &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configName}})
			_ = c.Delete(context.Background(), &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configName}})
		})
		hook := cluster.StartOperator(t, "webhook", "--kubeconfig", kubeconfig, "--namespaces", ns, "--enable-controller=false",
			"--enable-webhook", "--webhook-failure-policy=Ignore", "--webhook-url-host", "localhost",
			"--webhook-port", strconv.Itoa(cluster.FreePort(t)), "--webhook-secret-namespace", ns, "--webhook-config-name", configName,
			"--webhook-cert-dir", t.TempDir(), "--enable-batch-scheduler", "--kube-scheduler-names", coscheduling.DefaultName)
		var refused error
		cluster.Eventually(t, 30*time.Second, "the webhook to refuse the application", func() (bool, error) {
			app := newApp(ns, "no-crd-webhook", 0)
			app.Spec.BatchScheduler = ptr.To(coscheduling.DefaultName)
			refused = c.Create(ctx, app)
			if refused == nil {
				// Created before the API server called the webhook: again.
				return false, c.Delete(ctx, app)
			}
			return true, nil
		})
		if !strings.Contains(refused.Error(), `spec.batchScheduler: Invalid value: "kube-scheduler": `+want) {
			t.Errorf("refused with %v, want spec.batchScheduler invalid: %s", refused, want)
		}
		hook.Stop()
	})
	t.Run("volcano refused while its CRDs are not installed", func(t *testing.T) { volcanoRefusedWithoutCRDs(t, c, ns) })

	if _, err := cluster.Script(ctx, state, "coscheduling"); err != nil {
		t.Fatal(err)
	}
	// As it is installed (the chart's default): with its webhooks, which confine each executor
	// to the node planned for it. Without them, executors are confined only to the run's
	// planned nodes, and two can take each other's slots (2 of these 20 ran in part so).
	op.Stop()
	startWithWebhooks(t, kubeconfig, ns, "--enable-batch-scheduler", "--kube-scheduler-names", coscheduling.DefaultName,
		"--coscheduling-schedule-timeout", "2m")
	for i := range apps {
		app := newApp(ns, "cosched", i)
		app.Spec.BatchScheduler = ptr.To(coscheduling.DefaultName)
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	f := newFixture(t, c, ns, allAtOnce)
	var list []v1beta2.SparkApplication
	cluster.Eventually(t, 6*time.Minute, "all applications to finish", func() (bool, error) {
		all, finished, err := f.step()
		list = all
		return finished == apps, err
	})
	for app, why := range f.Partial() {
		t.Errorf("%s ran in part: %s", app, why)
	}
	if peak := f.PeakDrivers(); peak > fitAtOnce || peak == 0 {
		t.Errorf("at most %d drivers ran at once; %d fit", peak, fitAtOnce)
	}
	t.Logf("coscheduling: at most %d drivers running at once, %d applications in part", f.PeakDrivers(), len(f.Partial()))

	for _, app := range list {
		if app.Status.AppState.State != v1beta2.ApplicationStateCompleted || app.Status.ExecutionAttempts != 1 {
			t.Errorf("%s: %s after %d attempts: %s", app.Name, app.Status.AppState.State, app.Status.ExecutionAttempts, app.Status.AppState.ErrorMessage)
			continue
		}
		if app.Status.BatchScheduler != coscheduling.DefaultName {
			t.Errorf("%s was admitted by %q", app.Name, app.Status.BatchScheduler)
		}
		// 3 pods of 2 CPU; 512m of memory and Spark's 384Mi overhead each.
		checkPodGroup(t, c, &app, map[string]any{"cpu": "6", "memory": "2688Mi"})
	}
	// Every pod, executors included, named its run's group and the scheduler from its creation.
	runs := map[string]string{}
	for _, app := range list {
		runs[app.Name] = coscheduling.PodGroupName(app.Name, app.Status.SubmissionID)
	}
	executors := 0
	for _, p := range f.Seen() {
		if p.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleExecutor {
			executors++
		}
		if want := runs[p.Labels[v1beta2.LabelAppName]]; p.Labels[coscheduling.LabelPodGroup] != want || p.Spec.SchedulerName != coscheduling.DefaultName {
			t.Errorf("pod %s created in pod group %q, scheduler %q; want %q, %q", p.Name, p.Labels[coscheduling.LabelPodGroup],
				p.Spec.SchedulerName, want, coscheduling.DefaultName)
		}
	}
	if executors != apps*executorCount {
		t.Errorf("%d executors seen, want %d", executors, apps*executorCount)
	}

	t.Run("examples/spark-pi-kube-scheduler.yaml runs", func(t *testing.T) {
		app := example(t, c, ns, "spark-pi-kube-scheduler.yaml")
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		cluster.Eventually(t, 2*time.Minute, "the example to complete", func() (bool, error) {
			if _, _, err := f.step(); err != nil {
				return false, err
			}
			err := c.Get(ctx, client.ObjectKeyFromObject(app), app)
			return app.Status.AppState.State == v1beta2.ApplicationStateCompleted, err
		})
		// A driver and 3 executors of 1 CPU and 512m (896Mi with the overhead).
		checkPodGroup(t, c, app, map[string]any{"cpu": "4", "memory": "3584Mi"})
	})

	t.Run("down stops the Coscheduling scheduler and controller", func(t *testing.T) {
		downStops(t, state, "kube-scheduler-plugins", "scheduler-plugins-controller")
	})
}

// checkPodGroup checks app's PodGroup (named after its run, owned by it, minMember 1,
// minResources the whole gang, finished), and that its pods name it and were placed by the
// Coscheduling scheduler.
func checkPodGroup(t *testing.T, c client.Client, app *v1beta2.SparkApplication, minResources map[string]any) {
	t.Helper()
	ctx := context.Background()
	name := coscheduling.PodGroupName(app.Name, app.Status.SubmissionID)
	pg := &unstructured.Unstructured{}
	pg.SetGroupVersionKind(coscheduling.PodGroupCRD.GVK)
	if err := c.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: name}, pg); err != nil {
		t.Errorf("%s: PodGroup: %v", app.Name, err)
		return
	}
	owners := pg.GetOwnerReferences()
	if len(owners) != 1 || owners[0].Kind != "SparkApplication" || owners[0].UID != app.UID {
		t.Errorf("%s: PodGroup owned by %v", app.Name, owners)
	}
	spec, _, _ := unstructured.NestedMap(pg.Object, "spec")
	want := map[string]any{"minMember": int64(1), "scheduleTimeoutSeconds": int64(120), "minResources": minResources}
	if diff := cmp.Diff(want, spec); diff != "" {
		t.Errorf("%s: PodGroup spec (-want +got):\n%s", app.Name, diff)
	}
	// scheduler-plugins' controller: the driver, its one member, succeeded.
	if phase, _, _ := unstructured.NestedString(pg.Object, "status", "phase"); phase != "Finished" {
		cluster.Eventually(t, 30*time.Second, app.Name+"'s PodGroup to be Finished", func() (bool, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(pg), pg)
			phase, _, _ = unstructured.NestedString(pg.Object, "status", "phase")
			return phase == "Finished", err
		})
	}

	driver := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: app.DriverPodName()}, driver); err != nil {
		t.Errorf("%s: driver: %v", app.Name, err)
		return
	}
	if driver.Labels[coscheduling.LabelPodGroup] != name || driver.Spec.SchedulerName != coscheduling.DefaultName {
		t.Errorf("%s: driver in pod group %q, scheduler %q; want %q, %q", app.Name, driver.Labels[coscheduling.LabelPodGroup],
			driver.Spec.SchedulerName, name, coscheduling.DefaultName)
	}
	var events eventsv1.EventList
	if err := c.List(ctx, &events, client.InNamespace(app.Namespace),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("regarding.name", driver.Name)}); err != nil {
		t.Error(err)
		return
	}
	scheduledBy := ""
	for _, e := range events.Items {
		if e.Reason == "Scheduled" {
			scheduledBy = e.ReportingController
		}
	}
	if scheduledBy != coscheduling.DefaultName {
		t.Errorf("%s: driver scheduled by %q, want %s", app.Name, scheduledBy, coscheduling.DefaultName)
	}
}
