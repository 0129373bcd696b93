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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/test/cluster"
)

// Held-out shapes for Kueue: each application a driver of 1 CPU and 2 executors of 2 CPU,
// none with coreRequest, in three shapes; a ClusterQueue with CPU for heldOutFit of them.
const (
	heldOutApps = 12
	heldOutFit  = 3
	heldOutCPU  = 1 + 2*2
)

// heldOutApp is application i of the held-out load, labelled for the LocalQueue "spark" with
// batchScheduler default (the operator's default is gang, as in make dev): Kueue alone queues
// it. The shapes: cores without coreRequest and the default memory overhead; a driver
// coreLimit above its cores (Kueue took the limit for the request), memoryOverheadFactor, the
// executor count in sparkConf only; the driver's cores in sparkConf only and an explicit
// executor memory overhead.
func heldOutApp(ns string, i int) *v1beta2.SparkApplication {
	app := cluster.SparkPi(ns, fmt.Sprintf("held-out-%02d", i))
	app.Labels = map[string]string{scheduler.LabelKueueQueueName: "spark"}
	app.Spec.BatchScheduler = ptr.To(scheduler.DefaultName)
	app.Spec.Driver.Cores, app.Spec.Driver.CoreRequest = ptr.To[int32](1), nil
	app.Spec.Executor.Cores, app.Spec.Executor.Memory = ptr.To[int32](2), ptr.To("1g")
	app.Spec.Executor.Instances = ptr.To[int32](2)
	switch i % 3 {
	case 1:
		app.Spec.Driver.CoreLimit = ptr.To("2")
		app.Spec.MemoryOverheadFactor = ptr.To("0.5")
		app.Spec.Executor.Instances = nil
		app.Spec.SparkConf = map[string]string{"spark.executor.instances": "2"}
	case 2:
		app.Spec.Driver.Cores = nil
		app.Spec.SparkConf = map[string]string{"spark.driver.cores": "1"}
		app.Spec.Executor.MemoryOverhead = ptr.To("768m")
	}
	return app
}

// testKueueCount runs the held-out shapes through Kueue with make dev's operator (every batch
// scheduler enabled, gang the default, its webhooks on): the webhook fills in what Kueue counts,
// so Kueue's ClusterQueue with CPU for 3 runs at most 3 at once, each whole, and all complete;
// an application with dynamic allocation is refused by Kueue's webhook. Without the webhook's
// fill, Kueue counted no CPU for these applications and admitted all 12 at once.
func testKueueCount(t *testing.T, c client.Client, kubeconfig string) {
	ctx := context.Background()
	ns := cluster.Namespace(t, c, "kueue-held-out")
	t.Cleanup(func() { describe(t, c, ns) })
	kueueQueue(t, c, ns, *resource.NewQuantity(heldOutFit*heldOutCPU, resource.DecimalSI))
	startDevOperator(t, c, kubeconfig, ns)

	dynamic := heldOutApp(ns, 0)
	dynamic.Name, dynamic.Spec.Executor.Instances = "dynamic", nil
	dynamic.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, MinExecutors: ptr.To[int32](1), InitialExecutors: ptr.To[int32](2)}
	if err := c.Create(ctx, dynamic); err == nil || !strings.Contains(err.Error(), "dynamicAllocation") {
		t.Errorf("an application with dynamic allocation: %v; want Kueue's webhook to refuse it", err)
	}

	for i := range heldOutApps {
		if err := c.Create(ctx, heldOutApp(ns, i)); err != nil {
			t.Fatal(err)
		}
	}
	runUnderKueue(t, c, ns, heldOutApps, heldOutFit, 2)
	// Kueue counts memory without Spark's overhead: each application is told so when suspended.
	var events eventsv1.EventList
	if err := c.List(ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	told := map[string]bool{}
	for _, ev := range events.Items {
		if ev.Reason == "KueueCountShort" && ev.Type == corev1.EventTypeWarning && strings.Contains(ev.Note, "Spark's memory overhead") {
			told[ev.Regarding.Name] = true
		}
	}
	if len(told) != heldOutApps {
		t.Errorf("%d of %d applications got a KueueCountShort warning about the memory overhead: %v", len(told), heldOutApps, told)
	}
}
