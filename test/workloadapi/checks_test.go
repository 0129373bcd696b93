/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package workloadapi runs spec.batchScheduler: kubernetes end to end: the gang scheduler's
// admission, with executors placed by the real kube-scheduler's GangScheduling plugin through
// the Workload API of Kubernetes 1.37. Its own local cluster serves that API (local-cluster.sh
// up --workload-api; the shared test cluster does not, which the last test relies on): 4 kwok
// nodes of 16 CPU, on which 4 applications of a 1-CPU driver and 7 executors of 2 CPU fit at
// once, never 5. Executors are made by test/executors once a driver runs, from the executor
// pod template the driver was given, as Spark would.
package workloadapi

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/scheduler/workloadapi"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
	"github.com/sparkop/spark-operator/test/sparkplay"
)

// probePod is a pod of no application that asks for nothing, so fits on any node.
func probePod(ns string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

// load creates the 20 applications at once, naming scheduler, and plays Spark for them until
// they all end.
func (e *env) load(scheduler string) *run {
	e.t.Helper()
	// The gang plugin holds a group's executors back until all of them exist: an executor
	// Unschedulable beside a complete group was tried with all of it, and found no room.
	admitted := scheduler == workloadapi.Name
	play := sparkplay.New(e.c, e.ns, sparkplay.Options{ExecutorSeconds: executorRunSeconds, UnschedulableIsPartial: true, EndDrivers: admitted})
	r := &run{env: e, play: play, admitted: admitted, runs: map[string]string{}}
	for i := range apps {
		app := newApp(e.ns, fmt.Sprintf("app-%02d", i))
		app.Spec.BatchScheduler = ptr.To(scheduler)
		if admitted {
			delete(app.Spec.Driver.Annotations, executors.AnnotationRunSeconds)
		}
		if err := e.c.Create(e.ctx, app); err != nil {
			e.t.Fatal(err)
		}
	}
	cluster.Eventually(e.t, 8*time.Minute, "all applications to finish", func() (bool, error) {
		return r.step()
	})
	return r
}

// waitDriverRunning waits for name's driver pod to run. Its bound allows for spark-submit's JVM
// on a loaded 2-core machine (over 90 s seen while other clusters ran beside it).
func (e *env) waitDriverRunning(name string) *corev1.Pod {
	e.t.Helper()
	driver := &corev1.Pod{}
	cluster.Eventually(e.t, 5*time.Minute, name+"'s driver running", func() (bool, error) {
		app := &v1beta2.SparkApplication{}
		if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, app); err != nil {
			return false, err
		}
		if app.Status.SubmissionID == "" {
			return false, nil
		}
		err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: app.DriverPodName()}, driver)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && driver.Status.Phase == corev1.PodRunning, err
	})
	return driver
}

// checkTemplate checks that the executor pod template the submitter gave driver, which Spark
// builds every executor on, carries the run's executors' group and no gate.
func (e *env) checkTemplate(driver *corev1.Pod) {
	e.t.Helper()
	var template *corev1.Pod
	cluster.Eventually(e.t, 30*time.Second, "the executor pod template", func() (bool, error) {
		var err error
		template, err = executors.TemplateOf(e.ctx, e.c, driver)
		return template != nil, client.IgnoreNotFound(err)
	})
	app := driver.Labels[v1beta2.LabelAppName]
	names, err := workloadapi.NamesOf(scheduler.Workload{Key: scheduler.ApplicationKey(client.ObjectKey{Namespace: e.ns, Name: app}),
		Run: driver.Labels[v1beta2.LabelSubmissionID]})
	if err != nil {
		e.t.Fatal(err)
	}
	if g := template.Spec.SchedulingGroup; g == nil || ptr.Deref(g.PodGroupName, "") != names.Executors {
		e.t.Errorf("the executor template's scheduling group is %v, want PodGroup %s", g, names.Executors)
	}
	if len(template.Spec.SchedulingGates) > 0 {
		e.t.Errorf("the executor template is gated: %v", template.Spec.SchedulingGates)
	}
}

func (e *env) executors(app string) []corev1.Pod {
	e.t.Helper()
	var pods corev1.PodList
	if err := e.c.List(e.ctx, &pods, client.InNamespace(e.ns), client.MatchingLabels{
		v1beta2.LabelAppName: app, v1beta2.SparkRoleLabel: v1beta2.SparkRoleExecutor}); err != nil {
		e.t.Fatal(err)
	}
	return pods.Items
}

// checkRun checks a running application's pods: each in its run's group, the executors on
// their planned nodes (each confined to its own by the webhook, if byWebhook), and its objects.
func (e *env) checkRun(name string, byWebhook bool) {
	e.t.Helper()
	app := &v1beta2.SparkApplication{}
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, app); err != nil {
		e.t.Fatal(err)
	}
	res, ok, err := gang.GetReservation(e.ctx, e.c, app)
	if err != nil {
		e.t.Fatal(err)
	}
	if !ok {
		e.t.Fatalf("%s runs with no reservation", name)
	}
	names := e.checkObjects(app, app.Status.SubmissionID)
	driver := &corev1.Pod{}
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: app.DriverPodName()}, driver); err != nil {
		e.t.Fatal(err)
	}
	if g := driver.Spec.SchedulingGroup; g == nil || ptr.Deref(g.PodGroupName, "") != names.Driver {
		e.t.Errorf("driver's scheduling group %v, want PodGroup %s", g, names.Driver)
	}
	if driver.Spec.NodeName != res.Driver {
		e.t.Errorf("driver on %q, planned on %s", driver.Spec.NodeName, res.Driver)
	}
	onNode := map[string]int32{}
	for _, p := range e.executors(name) {
		if g := p.Spec.SchedulingGroup; g == nil || ptr.Deref(g.PodGroupName, "") != names.Executors {
			e.t.Errorf("executor %s's scheduling group %v, want PodGroup %s", p.Name, g, names.Executors)
		}
		if len(p.Spec.SchedulingGates) > 0 {
			e.t.Errorf("executor %s is gated: %v", p.Name, p.Spec.SchedulingGates)
		}
		if want := p.Annotations[gang.AnnotationNode]; byWebhook && (want == "" || p.Spec.NodeName != want) {
			e.t.Errorf("executor %s on %q, placed by the webhook on %q", p.Name, p.Spec.NodeName, want)
		}
		onNode[p.Spec.NodeName]++
	}
	for node, n := range onNode {
		// Without the webhook the executors may go to any planned node, as many as fit.
		if byWebhook && n != res.Executors[node] || res.Executors[node] == 0 {
			e.t.Errorf("executors per node %v, planned %v", onNode, res.Executors)
			break
		}
	}
	// kube-scheduler's gang plugin marks a group it placed.
	cluster.Eventually(e.t, 30*time.Second, "PodGroup "+names.Executors+" marked scheduled", func() (bool, error) {
		pg := &schedulingv1beta1.PodGroup{}
		if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: names.Executors}, pg); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(pg.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled), nil
	})
}

// checkObjects checks app's run's Workload and PodGroups: owned by app, the executors' group
// a gang of the initial executors.
func (e *env) checkObjects(app *v1beta2.SparkApplication, submission string) workloadapi.Names {
	e.t.Helper()
	w := scheduler.ApplicationWorkload(app)
	w.Run = submission
	names, err := workloadapi.NamesOf(w)
	if err != nil {
		e.t.Fatal(err)
	}
	owned := func(obj client.Object) {
		if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: obj.GetName()}, obj); err != nil {
			e.t.Errorf("%s's %T %s: %v", app.Name, obj, obj.GetName(), err)
			return
		}
		refs := obj.GetOwnerReferences()
		if len(refs) != 1 || refs[0].UID != app.UID || refs[0].Kind != "SparkApplication" {
			e.t.Errorf("%T %s owned by %v, want %s", obj, obj.GetName(), refs, app.Name)
		}
	}
	wl := &schedulingv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: names.Workload}}
	owned(wl)
	driver := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: names.Driver}}
	owned(driver)
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: names.Executors}}
	owned(pg)
	if g := pg.Spec.SchedulingPolicy.Gang; g == nil || g.MinCount != executorCount {
		e.t.Errorf("PodGroup %s's policy %+v, want a gang of %d", pg.Name, pg.Spec.SchedulingPolicy, executorCount)
	}
	if ref := pg.Spec.WorkloadRef; ref == nil || ref.WorkloadName != names.Workload || ref.TemplateName != workloadapi.TemplateExecutors {
		e.t.Errorf("PodGroup %s refers to %+v", pg.Name, ref)
	}
	return names
}
