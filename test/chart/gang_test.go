/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package chart

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
)

// TestInstallWithGangScheduler installs the chart with the gang scheduler on (the default
// batch scheduler, with backfill and preemption) and runs the controller and the webhook with
// only their service accounts' rights: the webhook refuses an unknown queue (it reads Queues);
// an application of a queue of its own is admitted (its reservation written on it), its
// executor, made by the driver's service account on the gated template, is given its node
// and ungated, it completes, and the queue's status is written; a Spark Connect session is
// admitted and its server started. Neither process logs a refusal by the API server.
func TestInstallWithGangScheduler(t *testing.T) {
	ctx := context.Background()
	r := install(t, "controller.batchScheduler.gang.enable=true", "controller.batchScheduler.default=gang",
		"controller.batchScheduler.gang.backfill=true", "controller.batchScheduler.gang.preemption=true")
	r.routeServiceHere(t)
	controller := r.run(t, r.name+"-controller", "")
	webhook := r.run(t, r.name+"-webhook", t.TempDir())
	r.requireValidatedThroughService(t)

	lost := r.app("lost")
	lost.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To(r.name + "-missing")}
	if err := r.c.Create(ctx, lost, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "spec.batchSchedulerOptions.queue") {
		t.Errorf("an application of a queue that does not exist: %v, want refused by the webhook", err)
	}

	queue := &schedv1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: r.name}}
	if err := r.c.Create(ctx, queue); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.c.Delete(context.Background(), queue) })
	app := r.app("gang-pi") // names no batch scheduler: gang is the default
	app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To(queue.Name)}
	if err := r.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	driver := &corev1.Pod{}
	cluster.Eventually(t, 60*time.Second, "the driver pod", func() (bool, error) {
		err := r.c.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: app.DriverPodName()}, driver)
		return err == nil && driver.Status.Phase == corev1.PodRunning, client.IgnoreNotFound(err)
	})
	if err := r.c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
		t.Fatal(err)
	}
	if _, ok := reservationOf(r.c, app); !ok {
		t.Errorf("the application runs without a reservation: %v", app.Annotations)
	}
	var template *corev1.Pod
	cluster.Eventually(t, 30*time.Second, "the executor pod template", func() (bool, error) {
		var err error
		template, err = executors.TemplateOf(ctx, r.c, driver)
		return template != nil, client.IgnoreNotFound(err)
	})
	asDriver := r.saClient(t, app.Namespace, *app.Spec.Driver.ServiceAccount)
	executor, err := executors.Build(driver, 1, executors.Options{Template: template, Cores: 1, MemoryMiB: 512,
		Annotations: map[string]string{executors.AnnotationRunSeconds: "2"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(executor.Spec.SchedulingGates) == 0 {
		t.Fatalf("the executor template is not gated by the gang scheduler: %+v", template.Spec)
	}
	if err := asDriver.Create(ctx, executor); err != nil {
		t.Fatalf("creating an executor with the driver's service account: %v", err)
	}
	cluster.Eventually(t, 60*time.Second, "the executor to be given its node and run", func() (bool, error) {
		err := r.c.Get(ctx, client.ObjectKeyFromObject(executor), executor)
		return err == nil && executor.Annotations[gang.AnnotationNode] != "" && len(executor.Spec.SchedulingGates) == 0 &&
			executor.Status.Phase != corev1.PodPending, err
	})
	r.requireCompleted(t, app)
	cluster.Eventually(t, 30*time.Second, "the queue's status", func() (bool, error) {
		err := r.c.Get(ctx, client.ObjectKeyFromObject(queue), queue)
		return err == nil && meta.FindStatusCondition(queue.Status.Conditions, schedv1alpha1.QueueConditionActive) != nil, err
	})

	// A Spark Connect session is a gang workload too (gang is the default): admitted, its
	// reservation kept on it, its server started.
	conn := &v1alpha1.SparkConnect{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.jobNamespace, Name: "session"},
		Spec: v1alpha1.SparkConnectSpec{SparkVersion: "4.0.4", Image: ptr.To("docker.io/apache/spark:4.0.4"),
			Executor: v1alpha1.ExecutorSpec{Instances: ptr.To[int32](1)}},
	}
	if err := r.c.Create(ctx, conn); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 60*time.Second, "the session's server, admitted by the gang scheduler", func() (bool, error) {
		if err := r.c.Get(ctx, client.ObjectKeyFromObject(conn), conn); err != nil {
			return false, err
		}
		_, admitted := reservationOf(r.c, conn)
		err := r.c.Get(ctx, client.ObjectKey{Namespace: conn.Namespace, Name: conn.ServerPodName()}, &corev1.Pod{})
		return admitted && err == nil, client.IgnoreNotFound(err)
	})

	controller.Stop()
	webhook.Stop()
	for _, op := range []*cluster.Operator{controller, webhook} {
		log, err := os.ReadFile(op.Log)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(log), "\n") {
			if strings.Contains(line, "forbidden") {
				t.Errorf("refused by the API server under the chart's RBAC: %s", line)
			}
		}
	}
}

// reservationOf reads the reservation of obj, an application or session: false when it has
// none (or it cannot be read now; callers poll).
func reservationOf(c client.Reader, obj client.Object) (gang.Reservation, bool) {
	r, ok, err := gang.GetReservation(context.Background(), c, obj)
	return r, ok && err == nil
}
