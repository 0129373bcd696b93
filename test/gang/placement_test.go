/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
)

// TestExecutorsPlacedAtCreation runs the operator with its webhooks. The executors Spark
// creates for an admitted application are placed by the pod webhook as they are created, each
// on its planned node and without the gang gate, so none waits for a cycle to release it. An
// executor beyond the plan is created gated, and a cycle releases it.
func TestExecutorsPlacedAtCreation(t *testing.T) {
	f := newFixture(t)
	f.node("a", "4", nil)
	f.node("b", "4", nil)
	configName := "gang-webhook-" + f.ns
	t.Cleanup(func() {
		_ = f.c.Delete(context.Background(), &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configName}})
		_ = f.c.Delete(context.Background(), &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configName}})
	})
	// Advisory: with placeholders an executor waits gated for its swap (docs/design/gang-enforcement.md).
	f.startOperator("--gang-enforcement=advisory", "--enable-webhook", "--webhook-url-host", "localhost",
		"--webhook-port", strconv.Itoa(cluster.FreePort(t)), "--webhook-secret-namespace", f.ns,
		"--webhook-config-name", configName, "--webhook-cert-dir", t.TempDir())
	const planned = 5 // with the driver, more than one node holds
	f.create(f.app("placed", "default", planned))

	driver := &corev1.Pod{}
	cluster.Eventually(t, 90*time.Second, "the driver running", func() (bool, error) {
		app := f.get("placed")
		if app.Status.SubmissionID == "" {
			return false, nil
		}
		err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: app.DriverPodName()}, driver)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && driver.Status.Phase == corev1.PodRunning, err
	})
	res, ok := reservationOf(f.c, f.get("placed"))
	if !ok {
		t.Fatal("the application runs with no reservation")
	}
	// The plan's slots in executor id order: nodes by name, each as many times as planned.
	var slots []string
	for _, n := range slices.Sorted(maps.Keys(res.Executors)) {
		for range res.Executors[n] {
			slots = append(slots, n)
		}
	}
	if len(slots) != planned || len(res.Executors) < 2 {
		t.Fatalf("plan %v: want %d executors over both nodes", res.Executors, planned)
	}
	template, err := executors.TemplateOf(f.ctx, f.c, driver)
	if err != nil || template == nil {
		t.Fatalf("the driver's executor template: %v, %v", template, err)
	}

	for id := 1; id <= planned+1; id++ {
		pod, err := executors.Build(driver, id, executors.Options{Cores: 1, MemoryMiB: 512, Template: template})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.c.Create(f.ctx, pod); err != nil {
			t.Fatal(err)
		}
		// pod is now what the API server stored: the webhook's answer applied.
		gated := slices.ContainsFunc(pod.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == gang.GateExecutor })
		node := pod.Annotations[gang.AnnotationNode]
		if id <= planned && (gated || node != slots[id-1]) {
			t.Errorf("executor %d created gated=%v on node %q, want placed ungated on its planned node %s", id, gated, node, slots[id-1])
		}
		if id > planned && (!gated || node != "") {
			t.Errorf("executor %d, beyond the plan, created gated=%v on node %q, want gated for a cycle", id, gated, node)
		}
	}

	// The kube-scheduler binds the placed executors where they were placed; a cycle releases
	// the one beyond the plan onto the room left.
	cluster.Eventually(t, 60*time.Second, "every executor bound, each placed one to its planned node", func() (bool, error) {
		for id := 1; id <= planned+1; id++ {
			p := &corev1.Pod{}
			if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: executors.Name(driver, id)}, p); err != nil {
				return false, err
			}
			if p.Spec.NodeName == "" {
				return false, nil
			}
			if id <= planned && p.Spec.NodeName != slots[id-1] {
				t.Fatalf("executor %d bound to %s, planned on %s", id, p.Spec.NodeName, slots[id-1])
			}
		}
		return true, nil
	})
}
