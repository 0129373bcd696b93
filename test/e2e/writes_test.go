/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
)

// statusWriteExecutors is the number of executors of the counted application.
const statusWriteExecutors = 6

// TestStatusWritesPerApplication: an application's life, from creation to COMPLETED with
// several executors that start and end together, is written as it goes: its states come in the
// order of its life, each in one unbroken run of writes, and every write changes what the
// status tells (the application's state, its executors' states, its driver, its run), never
// only when something was last seen, whatever the number of executor pod changes (each executor
// is created, bound, runs and is deleted: about two dozen pod events here, most of which change
// nothing the status tells). Seen as a watch sees the writes: each write that changes the
// object is one event. How many writes a life takes depends on how the executors' pod changes
// fall within the operator's batching of them (2 s; TestHoldExecutorWrite checks what it
// holds back): that figure is the benchmark's (app_writes_per_app in bench --scenario gang's
// RESULT line; this test counted 6, as docs/benchmarks.md records).
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
	writes := watchToCompletion(t, c, w, ns)
	var states []string
	for i, a := range writes {
		states = append(states, string(a.Status.AppState.State))
		prev := app
		if i > 0 {
			prev = writes[i-1]
		}
		if sameButTimes(prev.Status, a.Status) {
			t.Errorf("write %d of the application changed only times: %+v", i+1, a.Status)
		}
	}
	t.Logf("%d writes of the application: %s", len(writes), strings.Join(states, " "))
	if err := inLifeOrder(states); err != nil {
		t.Error(err)
	}
}

// watchToCompletion returns the versions of the application the watch w delivers until it is
// COMPLETED, its creation left out; meanwhile, once its driver runs, it plays Spark, asking for
// all its executors at once.
func watchToCompletion(t *testing.T, c client.Client, w watch.Interface, ns string) []*v1beta2.SparkApplication {
	t.Helper()
	ctx := context.Background()
	var writes []*v1beta2.SparkApplication
	played := false
	deadline := time.After(2 * time.Minute)
	tick := time.NewTicker(200 * time.Millisecond) // how often the driver is looked at, as Spark would
	defer tick.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch ended")
			}
			got, isApp := ev.Object.(*v1beta2.SparkApplication)
			if ev.Type != watch.Modified || !isApp {
				continue
			}
			writes = append(writes, got)
			if got.Status.AppState.State == v1beta2.ApplicationStateCompleted {
				return writes
			}
		case <-tick.C:
			if !played {
				played = playExecutors(t, ctx, c, ns)
			}
		case <-deadline:
			t.Fatalf("not COMPLETED in time; %d writes so far", len(writes))
		}
	}
}

// playExecutors asks, as Spark does, for all the executors at once once the driver runs; they
// end when the driver does. It reports whether it did.
func playExecutors(t *testing.T, ctx context.Context, c client.Client, ns string) bool {
	driver := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "counted-driver"}, driver); err != nil || driver.Status.Phase != corev1.PodRunning {
		return false
	}
	template, err := executors.TemplateOf(ctx, c, driver)
	if err != nil {
		return false
	}
	if _, err := executors.Create(ctx, c, driver, statusWriteExecutors, executors.Options{Template: template,
		Annotations: map[string]string{executors.AnnotationRunSeconds: "6"}}); err != nil {
		t.Fatal(err)
	}
	return true
}

// sameButTimes reports whether two statuses differ in their times alone (when the submission
// was last attempted, when the run ended, when conditions last changed), or not at all.
func sameButTimes(a, b v1beta2.SparkApplicationStatus) bool {
	untimed := func(s v1beta2.SparkApplicationStatus) v1beta2.SparkApplicationStatus {
		s = *s.DeepCopy()
		s.LastSubmissionAttemptTime, s.TerminationTime = metav1.Time{}, metav1.Time{}
		for i := range s.Conditions {
			s.Conditions[i].LastTransitionTime = metav1.Time{}
		}
		return s
	}
	return equality.Semantic.DeepEqual(untimed(a), untimed(b))
}

// lifeOrder is the order of the states of a run that completes.
var lifeOrder = []v1beta2.ApplicationStateType{v1beta2.ApplicationStateNew, v1beta2.ApplicationStateSubmitted,
	v1beta2.ApplicationStateRunning, v1beta2.ApplicationStateSucceeding, v1beta2.ApplicationStateCompleted}

// inLifeOrder checks that the states written come in the order of a run's life, each in one
// unbroken run of writes (none written again once left), ending COMPLETED.
func inLifeOrder(states []string) error {
	at := -1
	for i, s := range states {
		next := slices.Index(lifeOrder, v1beta2.ApplicationStateType(s))
		if next < at { // not a state of the life (-1), or one left already
			return fmt.Errorf("state %q written after %v: not the order of a run's life %v", s, states[:i], lifeOrder)
		}
		at = next
	}
	if len(states) == 0 || states[len(states)-1] != string(v1beta2.ApplicationStateCompleted) {
		return fmt.Errorf("states written %v, want them to end COMPLETED", states)
	}
	return nil
}
