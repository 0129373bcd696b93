/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// TestSuspend drives gang applications through spec.suspend as Kueue's SparkApplication
// integration does: a suspended application is never admitted; resumed, it queues again and
// runs once there is room; suspending an admitted, running one gives its reservation back,
// which the queue's status shows.
func TestSuspend(t *testing.T) {
	f := newFixture(t)
	f.node("n", "3", nil) // room for one application of 2 CPU at a time
	queue := f.queue("q", schedv1alpha1.QueueSpec{})
	f.startOperator()
	suspend := func(name string, on bool) {
		f.update(name, func(app *v1beta2.SparkApplication) { app.Spec.Suspend = ptr.To(on) })
	}

	first := f.app("first", queue, 1)
	first.Spec.Suspend = ptr.To(true)
	f.create(first)
	f.waitState("first", v1beta2.ApplicationStateSuspended)
	// Created later, it is admitted past the suspended one.
	f.create(f.app("other", queue, 1))
	f.running("other")
	f.requireNotAdmitted("first")
	f.waitQueue(queue, "2", 1, 0)

	// Resumed, it queues again: the node has no room while other runs.
	suspend("first", false)
	f.waitWaiting("first", "no node fits")
	f.waitQueue(queue, "2", 1, 1)

	// Suspending the running one gives its room back: first is admitted and runs.
	suspend("other", true)
	f.waitState("other", v1beta2.ApplicationStateSuspended)
	f.running("first")
	f.requireNotAdmitted("other")
	if pods := f.pods("other"); len(pods) != 0 {
		t.Errorf("suspended other still has %d pods", len(pods))
	}
	f.waitQueue(queue, "2", 1, 0)

	suspend("first", true)
	f.waitState("first", v1beta2.ApplicationStateSuspended)
	f.requireNotAdmitted("first")
	f.waitQueue(queue, "0", 0, 0)
}

// TestSuspendAdmittedNotStarted suspends an application that was admitted but whose driver
// pacing has not let start yet: it gives its reservation back and starts nothing; resumed, it
// queues again and runs.
func TestSuspendAdmittedNotStarted(t *testing.T) {
	f := newFixture(t)
	first, second := f.pacedPair()
	if p, err := f.driverOf(second); err != nil || p != nil {
		t.Fatalf("%s's driver exists before the test suspends it (%v): pacing did not hold it", second, err)
	}
	f.update(second, func(app *v1beta2.SparkApplication) { app.Spec.Suspend = ptr.To(true) })
	f.waitState(second, v1beta2.ApplicationStateSuspended)
	f.requireNotAdmitted(second)
	f.waitQueue(schedv1alpha1.DefaultQueueName, "4", 1, 0) // first's driver and 3 executors
	f.waitRunning(first)
	if pods := f.pods(second); len(pods) != 0 {
		t.Errorf("suspended before it started, %s has %d pods", second, len(pods))
	}

	f.update(second, func(app *v1beta2.SparkApplication) { app.Spec.Suspend = ptr.To(false) })
	f.running(second)
}

// waitQueue waits until the queue's status shows cpu admitted, in admitted applications,
// with pending waiting.
func (f *fixture) waitQueue(name, cpu string, admitted, pending int32) {
	f.t.Helper()
	f.waitFor(fmt.Sprintf("queue %s to show %s cpu in %d admitted applications, %d pending", name, cpu, admitted, pending), func() (bool, error) {
		st := f.queueStatus(name)
		got := st.Admitted[corev1.ResourceCPU]
		return got.String() == cpu && st.AdmittedApplications == admitted && st.PendingApplications == pending, nil
	})
}
