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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

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
//     executors, one at a time.
//
// In each: never more drivers run at once than fit by the nodes, no executor of a running
// driver waits for a node (no partial start), and every application completes.
const (
	shapeNodes   = 5
	shapeNodeCPU = 3
)

func TestShapesVolcano(t *testing.T) {
	requireThirdParty(t, "volcano-v1.15.1.tar.gz")
	testShapes(t, "volcano", volcano.Name)
}

func TestShapesYuniKorn(t *testing.T) {
	requireThirdParty(t, "yunikorn-k8shim-v1.8.0.tar.gz", "yunikorn-core-v1.8.0-1.tar.gz", "yunikorn-scheduler-interface-v1.8.0-0.tar.gz")
	testShapes(t, "yunikorn", yunikorn.Name)
}

func TestShapesCoscheduling(t *testing.T) {
	testShapes(t, "coscheduling", coscheduling.DefaultName, "--kube-scheduler-names", coscheduling.DefaultName)
}

// testShapes runs both shapes through batchScheduler, started by `hack/local-cluster.sh script`
// on a cluster of the test's own, with the operator as a user runs it for Kubeflow's batch
// schedulers (--enable-batch-scheduler, and flags) and its webhooks.
func testShapes(t *testing.T, script, batchScheduler string, flags ...string) {
	kubeconfig, _ := ownCluster(t, script, shapeNodes, shapeNodeCPU)
	c, _ := cluster.Clients(t, kubeconfig)
	ns := cluster.Namespace(t, c, script)
	startWithWebhooks(t, kubeconfig, ns, append([]string{"--enable-batch-scheduler"}, flags...)...)

	t.Run("more than fits, executors not made yet", func(t *testing.T) {
		f := newFixture(t, c, ns, sparkplay.Options{})
		t.Cleanup(f.describeOnFailure)
		apps := names("many", 12)
		f.createAtOnce(apps, func(name string) *v1beta2.SparkApplication {
			return f.app(name, batchScheduler, 2, fixtureDriverSeconds)
		})
		f.runToCompletion(5*time.Minute, apps, nil)
		f.checkNoPartialStarts(t, 5)
		f.checkExecutorsMade(t, apps)
		t.Logf("peak drivers %d", f.PeakDrivers())
	})

	t.Run("fragmentation and dynamic allocation, executors in batches after the driver runs", func(t *testing.T) {
		f := newFixture(t, c, ns, sparkplay.Options{Delay: 3 * time.Second, Batch: 1})
		t.Cleanup(f.describeOnFailure)
		apps := names("frag", 6)
		f.createAtOnce(apps, func(name string) *v1beta2.SparkApplication {
			app := f.app(name, batchScheduler, 2, fixtureDriverSeconds+5)
			app.Spec.Executor.Cores = ptr.To[int32](2)
			if name == "frag-1" || name == "frag-4" {
				app.Spec.Executor.Instances = nil
				app.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, MinExecutors: ptr.To[int32](2), MaxExecutors: ptr.To[int32](4)}
			}
			return app
		})
		f.runToCompletion(5*time.Minute, apps, nil)
		f.checkNoPartialStarts(t, 2)
		f.checkExecutorsMade(t, apps)
		t.Logf("peak drivers %d", f.PeakDrivers())
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
