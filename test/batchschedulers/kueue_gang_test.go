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
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/sparkplay"
)

// Kueue admits against its ClusterQueue's quota, a sum over the cluster; with make dev's
// operator (the gang core running) the core then admits each application Kueue resumed by the
// nodes' fit. The shapes, on TestKueue's 4 nodes of 6 CPU:
//
//   - fragmentation: a 1-CPU driver and 2 executors of 4 CPU; a 6-CPU node holds one such
//     executor, so the nodes fit 2 applications while the ClusterQueue's CPU has room for 3;
//   - a memory-bound quota: memory for 3 applications by what their pods request (Spark's
//     memory overhead included), which Kueue's count without the overhead would fill with 4;
//   - priorities between two LocalQueues, with Kueue's preemption: an application of the
//     high-priority LocalQueue, on nodes full of two low-priority ones.
const (
	fragExecutorCPU = 4
	fragNodeFit     = 2
	fragQuotaFit    = 3
)

// testKueueGang runs the three shapes, each in a namespace of its own with make dev's operator.
func testKueueGang(t *testing.T, c client.Client, kubeconfig string) {
	t.Run("fragmentation, executors after the driver runs", func(t *testing.T) {
		testKueueFragmentation(t, c, kubeconfig)
	})
	t.Run("a memory-bound quota", func(t *testing.T) {
		testKueueMemory(t, c, kubeconfig)
	})
	t.Run("priorities between two LocalQueues, with preemption", func(t *testing.T) {
		testKueuePriorities(t, c, kubeconfig)
	})
}

// fragApp is a fixture application of the fragmentation shape labelled for the LocalQueue
// local, batchScheduler unset (gang the operator's default) or default: Kueue alone queues it.
func fragApp(f *fixture, name, local string, unset bool) *v1beta2.SparkApplication {
	app := f.app(name, scheduler.DefaultName, 2)
	if unset {
		app.Spec.BatchScheduler = nil
	}
	app.Labels = map[string]string{scheduler.LabelKueueQueueName: local}
	app.Spec.Executor.Cores = ptr.To[int32](fragExecutorCPU)
	return app
}

// testKueueFragmentation: 6 applications of the fragmentation shape, each driver asking for its
// executors one at a time after it has run 3 s; Kueue resumes up to 3 (its quota), the core
// starts at most 2 (the nodes): none in part, all complete, each Workload finished.
func testKueueFragmentation(t *testing.T, c client.Client, kubeconfig string) {
	ns := cluster.Namespace(t, c, "kueue-frag")
	kueueQueue(t, c, ns, *resource.NewQuantity(fragQuotaFit*(1+2*fragExecutorCPU), resource.DecimalSI))
	startDevOperator(t, c, kubeconfig, ns)
	f := newFixture(t, c, ns, sparkplay.Options{Delay: 3 * time.Second, Batch: 1, UnschedulableIsPartial: true})
	t.Cleanup(f.describeOnFailure)
	apps := names("frag", 6)
	f.createAtOnce(apps, func(name string) *v1beta2.SparkApplication {
		return fragApp(f, name, "spark", name[len(name)-1]%2 == 0)
	})
	maxResumed := 0
	waited := map[string]string{} // resumed applications seen held by the core, with the reason shown
	f.runToCompletion(8*time.Minute, apps, func() error {
		var list v1beta2.SparkApplicationList
		err := c.List(context.Background(), &list, client.InNamespace(ns))
		maxResumed = max(maxResumed, resumed(list.Items))
		for _, app := range list.Items {
			cond := meta.FindStatusCondition(app.Status.Conditions, scheduler.ConditionQueued)
			if !ptr.Deref(app.Spec.Suspend, false) && app.Status.AppState.State == v1beta2.ApplicationStateResuming && cond != nil && cond.Status == metav1.ConditionTrue {
				waited[app.Name] = cond.Message
			}
		}
		return err
	})
	f.checkNoPartialStarts(t, fragNodeFit)
	f.checkExecutorsMade(t, apps)
	if maxResumed <= fragNodeFit {
		t.Errorf("at most %d applications resumed at once: Kueue's quota (room for %d) never let more through than the nodes fit (%d), so the test shows nothing", maxResumed, fragQuotaFit, fragNodeFit)
	}
	if len(waited) == 0 {
		t.Error("no application Kueue resumed was seen RESUMING with Queued=True, waiting for the nodes")
	}
	for _, name := range apps {
		checkWorkload(t, c, f.get(name))
	}
	t.Logf("at most %d resumed by Kueue and %d drivers running at once; resumed and held by the nodes: %v", maxResumed, f.PeakDrivers(), waited)
}

// resumed counts the applications Kueue has resumed that have not finished.
func resumed(apps []v1beta2.SparkApplication) int {
	n := 0
	for _, app := range apps {
		st := app.Status.AppState.State
		if !ptr.Deref(app.Spec.Suspend, false) && st != v1beta2.ApplicationStateCompleted && st != v1beta2.ApplicationStateFailed {
			n++
		}
	}
	return n
}

// Memory-bound quota: each application a driver and 2 executors of Spark's memory 1g, given
// in sparkConf; each pod requests 1408Mi (the overhead is 384 MiB), 4224Mi an application.
const (
	memoryApps     = 6
	memoryFit      = 3
	memoryPerAppMi = 3 * 1408
)

// testKueueMemory: a ClusterQueue whose memory quota has room for 3 applications by what their
// pods request, CPU ample. The webhook sets memoryLimit to the pods' memory where Spark's
// memory is in sparkConf, and Kueue counts it: at most 3 at once (by memory alone Kueue would
// have admitted 4, counting 3Gi an application), none in part, all complete.
func testKueueMemory(t *testing.T, c client.Client, kubeconfig string) {
	ns := cluster.Namespace(t, c, "kueue-memory")
	t.Cleanup(func() { describe(t, c, ns) })
	q := cluster.NewKueueQueue(ns, map[string]string{flavorLabel: "on"}, corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("100"),
		corev1.ResourceMemory: *resource.NewQuantity(memoryFit*memoryPerAppMi<<20, resource.BinarySI),
	}, ns, "spark")
	createKueueQueue(t, c, q)
	startDevOperator(t, c, kubeconfig, ns)
	for i := range memoryApps {
		app := cluster.SparkPi(ns, fmt.Sprintf("memory-%02d", i))
		app.Labels = map[string]string{scheduler.LabelKueueQueueName: "spark"}
		app.Spec.BatchScheduler = ptr.To(scheduler.DefaultName)
		app.Spec.Driver.Memory, app.Spec.Executor.Memory = nil, nil
		app.Spec.Executor.Instances = ptr.To[int32](2)
		app.Spec.SparkConf = map[string]string{"spark.driver.memory": "1g", "spark.executor.memory": "1g"}
		if err := c.Create(context.Background(), app); err != nil {
			t.Fatal(err)
		}
		if got := ptr.Deref(app.Spec.Executor.MemoryLimit, ""); got != "1408Mi" {
			t.Errorf("%s: spec.executor.memoryLimit %q after the webhook, want 1408Mi (Spark's 1g and its overhead)", app.Name, got)
		}
	}
	runUnderKueue(t, c, ns, memoryApps, memoryFit, 2)
}

// createKueueQueue creates q's objects, deletes its ClusterQueue and flavor when the test ends,
// and waits until Kueue has the ClusterQueue active.
func createKueueQueue(t *testing.T, c client.Client, q cluster.KueueQueue) {
	t.Helper()
	ctx := context.Background()
	for _, o := range q.Objects() {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	cq := q.ClusterQueue
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), cq)
		_ = c.Delete(context.Background(), q.Flavor)
	})
	cluster.Eventually(t, time.Minute, "the ClusterQueue to be active", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(cq), cq)
		return cluster.KueueActive(cq), err
	})
}

// testKueuePriorities: one ClusterQueue, preempting lower priorities within it, with room for 2
// applications of the fragmentation shape (as the nodes), and two LocalQueues: "low", whose
// applications carry a low WorkloadPriorityClass, and "high". Two low applications run whole;
// then a high one comes: Kueue suspends a low one, whose driver the operator deletes and whose
// room the core releases, so the core admits the high one, which runs whole; the suspended one
// runs again later. All complete, none in part, never more than 2 at once.
func testKueuePriorities(t *testing.T, c client.Client, kubeconfig string) {
	ctx := context.Background()
	ns := cluster.Namespace(t, c, "kueue-prio")
	q := cluster.NewKueueQueue(ns, map[string]string{flavorLabel: "on"}, corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(fragNodeFit*(1+2*fragExecutorCPU), resource.DecimalSI),
		corev1.ResourceMemory: resource.MustParse("100Gi"),
	}, ns, "low")
	unstructured.SetNestedField(q.ClusterQueue.Object, "LowerPriority", "spec", "preemption", "withinClusterQueue")
	createKueueQueue(t, c, q)
	high := cluster.KueueObject("LocalQueue", ns, "high", map[string]any{"clusterQueue": q.ClusterQueue.GetName()})
	if err := c.Create(ctx, high); err != nil {
		t.Fatal(err)
	}
	for name, value := range map[string]int64{ns + "-low": 10, ns + "-high": 1000} {
		pc := cluster.KueueObject("WorkloadPriorityClass", "", name, nil)
		delete(pc.Object, "spec")
		pc.Object["value"] = value
		if err := c.Create(ctx, pc); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), pc) })
	}
	startDevOperator(t, c, kubeconfig, ns)

	f := newFixture(t, c, ns, sparkplay.Options{UnschedulableIsPartial: true})
	t.Cleanup(f.describeOnFailure)
	withPriority := func(app *v1beta2.SparkApplication, class string) *v1beta2.SparkApplication {
		app.Labels["kueue.x-k8s.io/priority-class"] = ns + "-" + class
		return app
	}
	lows := names("low", 2)
	f.createAtOnce(lows, func(name string) *v1beta2.SparkApplication {
		// Their executors run 40 s: long enough for the high one to come and Kueue to preempt.
		app := withPriority(fragApp(f, name, "low", true), "low")
		metav1.SetMetaDataAnnotation(&app.ObjectMeta, sparkplay.AnnotationExecutorSeconds, "40")
		return app
	})
	// Both low applications run whole before the high one comes.
	cluster.Eventually(t, 3*time.Minute, "both low applications to run with their executors", func() (bool, error) {
		r, err := f.Step(f.ctx)
		if err != nil {
			return false, err
		}
		bound := 0
		for _, p := range r.Pods {
			if p.Spec.NodeName != "" && !sparkplay.Ended(&p) && p.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleExecutor {
				bound++
			}
		}
		return bound == 2*len(lows), nil
	})
	f.createAtOnce([]string{"high-0"}, func(name string) *v1beta2.SparkApplication {
		return withPriority(fragApp(f, name, "high", false), "high")
	})
	preempted := map[string]bool{}
	f.runToCompletion(8*time.Minute, append(lows, "high-0"), func() error {
		var list v1beta2.SparkApplicationList
		err := c.List(ctx, &list, client.InNamespace(ns))
		for _, app := range list.Items {
			if ptr.Deref(app.Spec.Suspend, false) && app.Name != "high-0" {
				preempted[app.Name] = true
			}
		}
		return err
	})
	f.checkNoPartialStarts(t, fragNodeFit)
	if len(preempted) != 1 {
		t.Errorf("low applications suspended by Kueue for the high one: %v, want one", preempted)
	}
	for name := range preempted {
		if ended, high := f.get(name).Status.TerminationTime, f.get("high-0").Status.TerminationTime; !high.Before(&ended) {
			t.Errorf("high-0 finished at %s, not before %s, which Kueue suspended for it", high.Format(time.TimeOnly), name)
		}
	}
	var done []string
	for _, name := range append(lows, "high-0") {
		app := f.get(name)
		done = append(done, fmt.Sprintf("%s: finished %s", name, app.Status.TerminationTime.Format(time.TimeOnly)))
	}
	t.Logf("suspended: %v; %v", preempted, done)
}

// startDevOperator runs the operator for ns as make dev runs it: every batch scheduler
// enabled, gang the default, its webhooks on. It returns once the mutating webhook serves:
// a dry run of an application Kueue queues comes back with coreRequest filled in.
func startDevOperator(t *testing.T, c client.Client, kubeconfig, ns string) {
	t.Helper()
	cluster.StartOperator(t, "operator", "--kubeconfig", kubeconfig, "--namespaces", ns, "--submission-workers", "8",
		"--enable-spark-connect=false", "-logtostderr", "-v=1",
		"--enable-gang-scheduler", "--default-batch-scheduler=gang",
		"--enable-batch-scheduler", "--kube-scheduler-names", "kube-scheduler",
		"--enable-webhook", "--webhook-url-host", "localhost", "--webhook-port", fmt.Sprint(cluster.FreePort(t)),
		"--webhook-secret-namespace", ns, "--webhook-config-name", "kueue-"+ns, "--webhook-cert-dir", t.TempDir())
	cluster.Eventually(t, time.Minute, "the operator's webhook to fill in coreRequest", func() (bool, error) {
		probe := cluster.SparkPi(ns, "probe")
		probe.Labels = map[string]string{scheduler.LabelKueueQueueName: "spark"}
		probe.Spec.BatchScheduler = ptr.To(scheduler.DefaultName)
		probe.Spec.Driver.CoreRequest = nil
		if err := c.Create(context.Background(), probe, client.DryRunAll); err != nil {
			return false, nil // refused for want of the webhook, while it starts
		}
		return probe.Spec.Driver.CoreRequest != nil, nil
	})
}
