/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
)

// statusWriteBudget is the most writes an application of statusWriteExecutors executors may
// take from creation to COMPLETED: recording the submission, SUBMITTED, RUNNING, the executors
// coming up (one write for all of them, give or take the scheduler's pace), their end, and
// COMPLETED (written at once: nothing follows a run of restart policy Never). Each write is an
// API request, a watch event for every client, and a reconcile.
const (
	statusWriteExecutors = 6
	statusWriteBudget    = 8
)

// TestStatusWritesPerApplication: an application's life, from creation to COMPLETED with
// several executors that start and end together, costs a bounded number of writes of the
// application, whatever the number of executor pod changes (each executor is created, bound,
// runs and is deleted: about two dozen pod events here). Counted as a watch sees them: each
// write that changes the object is one event.
func TestStatusWritesPerApplication(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "writes")
	startOperator(t, ns)

	app := cluster.SparkPi(ns, "counted")
	app.Spec.Executor.Instances = ptr.To[int32](statusWriteExecutors)
	app.Spec.Driver.Annotations = map[string]string{executors.AnnotationRunSeconds: "8"}
	wc, err := client.NewWithWatch(cluster.Config(t), client.Options{Scheme: cluster.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &v1beta2.SparkApplicationList{}, client.InNamespace(ns), client.MatchingFields{"metadata.name": "counted"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}

	var states []string
	writes := 0
	done := false
	played := false
	deadline := time.After(2 * time.Minute)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for !done {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch ended")
			}
			if ev.Type != watch.Modified {
				continue
			}
			writes++
			if got, ok := ev.Object.(*v1beta2.SparkApplication); ok {
				states = append(states, string(got.Status.AppState.State))
				done = got.Status.AppState.State == v1beta2.ApplicationStateCompleted
			}
		case <-tick.C:
			if played {
				continue
			}
			driver := &corev1.Pod{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "counted-driver"}, driver); err != nil || driver.Status.Phase != corev1.PodRunning {
				continue
			}
			template, err := executors.TemplateOf(ctx, c, driver)
			if err != nil {
				continue
			}
			// As Spark does: all executors asked for at once; they end when the driver does.
			if _, err := executors.Create(ctx, c, driver, statusWriteExecutors, executors.Options{Template: template,
				Annotations: map[string]string{executors.AnnotationRunSeconds: "6"}}); err != nil {
				t.Fatal(err)
			}
			played = true
		case <-deadline:
			t.Fatalf("not COMPLETED in time; %d writes so far: %s", writes, strings.Join(states, " "))
		}
	}
	t.Logf("%d writes of the application: %s", writes, strings.Join(states, " "))
	if writes > statusWriteBudget {
		t.Errorf("%d writes of the application from creation to COMPLETED, more than %d: %s", writes, statusWriteBudget, strings.Join(states, " "))
	}
}
