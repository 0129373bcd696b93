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
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/coscheduling"
	"github.com/sparkop/spark-operator/scheduler/volcano"
	"github.com/sparkop/spark-operator/scheduler/yunikorn"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/sparkplay"
)

// The shapes of issue #47, on 5 nodes of 3 CPU (15 CPU), each run by the real scheduler:
//
//   - more than fits, executors not made yet: 12 applications of a 1-CPU driver and 2 executors
//     of 1 CPU; 5 fit (one a node), all 12 are created at once, and a driver's executors are
//     made only once it runs;
//   - fragmentation and dynamic allocation, executors made as a Spark driver makes them: 6
//     applications of a 1-CPU driver and 2 executors of 2 CPU (2 of them with dynamic
//     allocation, minExecutors 2, no instances); the totals say 3 fit (15 CPU), the nodes only
//     2 (a 3-CPU node holds one 2-CPU executor); each driver runs a while before it asks for
//     executors, one at a time;
//   - a queue's capacity: 6 applications as in the first shape, in a queue of the scheduler
//     whose capacity (Volcano's capability, YuniKorn's max) fits 2 of them (6 CPU) where the
//     nodes fit 5 (coscheduling has no queues): no more than 2 runs are started at once, and
//     one of a higher priority, created after three others wait, starts before them.
//
// In each: never more drivers run at once than fit by the nodes, no executor of a running
// driver waits for a node (no partial start), and every application completes.
const (
	shapeNodes   = 5
	shapeNodeCPU = 3
)

func TestShapesVolcano(t *testing.T) {
	requireThirdParty(t, "volcano-v1.15.1.tar.gz")
	testShapes(t, "volcano", volcano.Name, cappedVolcanoQueue())
}

func TestShapesYuniKorn(t *testing.T) {
	requireThirdParty(t, "yunikorn-k8shim-v1.8.0.tar.gz", "yunikorn-core-v1.8.0-1.tar.gz", "yunikorn-scheduler-interface-v1.8.0-0.tar.gz")
	testShapes(t, "yunikorn", yunikorn.Name, cappedYuniKornQueue())
}

func TestShapesCoscheduling(t *testing.T) {
	testShapes(t, "coscheduling", coscheduling.DefaultName, nil, "--kube-scheduler-names", coscheduling.DefaultName)
}

// cappedQueue is a queue of the scheduler's own whose capacity fits 2 of the shapes'
// applications (6 CPU): setup makes it, before the operator starts.
type cappedQueue struct {
	name  string
	setup func(t *testing.T, c client.Client)
}

// cappedCPU is the capped queue's CPU: 2 applications of a 1-CPU driver and 2 1-CPU executors.
const cappedCPU = "6"

// testShapes runs the shapes through batchScheduler, started by `hack/local-cluster.sh script`
// on a cluster of the test's own, with the operator as a user runs it for Kubeflow's batch
// schedulers (--enable-batch-scheduler, and flags) and its webhooks; the capped queue's shape
// where the scheduler has queues (capped not nil).
func testShapes(t *testing.T, script, batchScheduler string, capped *cappedQueue, flags ...string) {
	kubeconfig, _ := ownCluster(t, script, shapeNodes, shapeNodeCPU)
	c, _ := cluster.Clients(t, kubeconfig)
	ns := cluster.Namespace(t, c, script)
	if capped != nil {
		capped.setup(t, c)
	}
	startWithWebhooks(t, kubeconfig, ns, append([]string{"--enable-batch-scheduler"}, flags...)...)

	t.Run("more than fits, executors not made yet", func(t *testing.T) {
		f := newFixture(t, c, ns, sparkplay.Options{})
		t.Cleanup(f.describeOnFailure)
		apps := names("many", 12)
		f.createAtOnce(apps, func(name string) *v1beta2.SparkApplication {
			return f.app(name, batchScheduler, 2)
		})
		f.runToCompletion(8*time.Minute, apps, nil)
		f.checkNoPartialStarts(t, 5)
		f.checkExecutorsMade(t, apps)
		t.Logf("peak drivers %d", f.PeakDrivers())
	})

	t.Run("fragmentation and dynamic allocation, executors in batches after the driver runs", func(t *testing.T) {
		f := newFixture(t, c, ns, sparkplay.Options{Delay: 3 * time.Second, Batch: 1})
		t.Cleanup(f.describeOnFailure)
		apps := names("frag", 6)
		f.createAtOnce(apps, func(name string) *v1beta2.SparkApplication {
			app := f.app(name, batchScheduler, 2)
			app.Spec.Executor.Cores = ptr.To[int32](2)
			if name == "frag-1" || name == "frag-4" {
				app.Spec.Executor.Instances = nil
				app.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, MinExecutors: ptr.To[int32](2), MaxExecutors: ptr.To[int32](4)}
			}
			return app
		})
		f.runToCompletion(8*time.Minute, apps, nil)
		f.checkNoPartialStarts(t, 2)
		f.checkExecutorsMade(t, apps)
		t.Logf("peak drivers %d", f.PeakDrivers())
	})

	if capped == nil {
		return
	}
	t.Run("a queue's capacity fits 2, the nodes 5", func(t *testing.T) {
		f := newFixture(t, c, ns, sparkplay.Options{})
		t.Cleanup(f.describeOnFailure)
		urgent := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "capped-urgent"}, Value: 1000}
		if err := c.Create(context.Background(), urgent); err != nil {
			t.Fatal(err)
		}
		build := func(name string) *v1beta2.SparkApplication {
			app := f.app(name, batchScheduler, 2)
			app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To(capped.name)}
			if name == "capped-5" {
				app.Spec.BatchSchedulerOptions.PriorityClassName = ptr.To(urgent.Name)
			}
			return app
		}
		// Two fill the queue; then three more and one of a higher priority, created last,
		// which starts first once there is room.
		f.createAtOnce(names("capped", 2), build)
		cluster.Eventually(t, 2*time.Minute, "the first two to start", func() (bool, error) {
			_, _, err := f.step()
			created := f.driversCreated()
			return !created["capped-0"].IsZero() && !created["capped-1"].IsZero(), err
		})
		apps := names("capped", 6)
		f.createAtOnce(apps[2:], build)
		f.runToCompletion(8*time.Minute, apps, nil)
		f.checkNoPartialStarts(t, 2)
		f.checkExecutorsMade(t, apps)
		// A run started beyond the queue's room would wait for it, holding the room of the
		// nodes the operator planned for it.
		if peak := f.PeakCreated(); peak > 2 {
			t.Errorf("%d runs were started at once (their driver pods made) in a queue that fits 2", peak)
		}
		// capped-5 takes the first room that frees; when both rooms free at once, one of a lower
		// priority may be admitted beside it. In queue order (no priority), three would start
		// before it.
		created := f.driversCreated()
		var before []string
		for _, name := range apps[2:5] {
			if created[name].Before(created["capped-5"]) {
				before = append(before, name)
			}
		}
		if len(before) > 1 {
			t.Errorf("%v, of a lower priority, started before capped-5 (created after them): %v", before, created)
		}
		t.Logf("peak drivers %d (%d started)", f.PeakDrivers(), f.PeakCreated())
	})
}

// startWithWebhooks runs the operator for ns with its webhooks registered by URL (they place
// each executor on the node planned for it as it is created), with flags added.
func startWithWebhooks(t *testing.T, kubeconfig, ns string, flags ...string) {
	c, _ := cluster.Clients(t, kubeconfig)
	configName := "shapes-" + ns
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configName}})
		_ = c.Delete(context.Background(), &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configName}})
	})
	args := []string{"--kubeconfig", kubeconfig, "--namespaces", ns, "--submission-workers", "8", "--enable-spark-connect=false",
		"--enable-webhook", "--webhook-url-host", "localhost", "--webhook-port", strconv.Itoa(cluster.FreePort(t)),
		"--webhook-secret-namespace", ns, "--webhook-config-name", configName, "--webhook-cert-dir", t.TempDir(),
		"-logtostderr", "-v=1"}
	cluster.StartOperator(t, "operator", append(args, flags...)...)
}
