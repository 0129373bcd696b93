/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
)

// TestLapsedReservation: an executor that appears after its application's reservation timeout
// is not sent to its planned node, whose capacity another pod took once the reservation
// lapsed, but onto the other node, which has room, and runs there.
func TestLapsedReservation(t *testing.T) {
	// The reservation lapses at once: the executor, which Spark creates only once the driver
	// runs (created, bound and started after the admission), appears after the timeout by the
	// order of events, with no wait for a clock.
	const timeout = time.Millisecond
	f := newFixture(t)
	nodes := []string{f.node("a", "2", nil), f.node("b", "2", nil)}
	f.startOperator("--gang-reservation-timeout=" + timeout.String())
	f.create(f.app("late", "default", 1))

	// The driver runs; the fixture does not play Spark yet, so no executor exists.
	var res gang.Reservation
	cluster.Eventually(t, 60*time.Second, "late's driver to run", func() (bool, error) {
		app := f.get("late")
		r, ok := reservationOf(f.c, app)
		if !ok || r.SubmissionID != app.Status.SubmissionID {
			return false, nil
		}
		res = r
		driver := &corev1.Pod{}
		err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: app.DriverPodName()}, driver)
		return err == nil && driver.Status.Phase == corev1.PodRunning, client.IgnoreNotFound(err)
	})
	planned, spare := nodes[0], nodes[1]
	if res.Executors[spare] == 1 {
		planned, spare = spare, planned
	}
	if res.Executors[planned] != 1 || len(res.Executors) != 1 {
		t.Fatalf("planned executors %v; want one, on one of %v", res.Executors, nodes)
	}
	free := "2" // the cpu left on the executor's planned node, which the filler takes
	if res.Driver == planned {
		free = "1"
	}
	filler := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "filler"},
		Spec: corev1.PodSpec{NodeName: planned, Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(free)}}}}},
	}
	if err := f.c.Create(f.ctx, filler); err != nil {
		t.Fatal(err)
	}

	// Now Spark starts the executor.
	f.waitFor("late's executor to run on "+spare, func() (bool, error) {
		for _, p := range f.pods("late") {
			if p.Labels[v1beta2.SparkRoleLabel] != v1beta2.SparkRoleExecutor {
				continue
			}
			if n := p.Annotations[gang.AnnotationNode]; n != "" && n != spare {
				return false, fmt.Errorf("executor %s was given node %s; want %s (%s is full)", p.Name, n, spare, planned)
			}
			return p.Spec.NodeName == spare && p.Status.Phase == corev1.PodRunning, nil
		}
		return false, nil
	})
}

// TestExecutorNotSeenKeepsItsSlot: Spark creates executors side by side, and their pods reach
// the gang scheduler in any order. While executor 2 runs and executor 1 has not appeared, the
// slot planned for 1 stays kept: another application that would fit only in it is not
// admitted, and executor 1, once there, runs on its planned node.
func TestExecutorNotSeenKeepsItsSlot(t *testing.T) {
	f := newFixture(t)
	node := f.node("a", "4", nil)
	f.startOperator()
	f.create(f.app("first", "default", 2)) // 1 + 2 × 1 CPU of the node's 4

	var driver *corev1.Pod
	cluster.Eventually(t, 60*time.Second, "first's driver to run", func() (bool, error) {
		app := f.get("first")
		driver = &corev1.Pod{}
		err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: app.DriverPodName()}, driver)
		return err == nil && driver.Status.Phase == corev1.PodRunning, client.IgnoreNotFound(err)
	})
	f.played[driver.UID] = true // this test is first's Spark
	// The submitter creates the template just after the driver.
	var template *corev1.Pod
	cluster.Eventually(t, 30*time.Second, "first's executor template", func() (bool, error) {
		var err error
		template, err = executors.TemplateOf(f.ctx, f.c, driver)
		return template != nil, client.IgnoreNotFound(err)
	})
	startExecutor := func(id int) {
		t.Helper()
		pod, err := executors.Build(driver, id, executors.Options{Cores: 1, MemoryMiB: 512, Template: template})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.c.Create(f.ctx, pod); err != nil {
			t.Fatal(err)
		}
		cluster.Eventually(t, 60*time.Second, pod.Name+" to run on "+node, func() (bool, error) {
			err := f.c.Get(f.ctx, client.ObjectKeyFromObject(pod), pod)
			return err == nil && pod.Spec.NodeName == node && pod.Status.Phase == corev1.PodRunning, err
		})
	}
	startExecutor(2)

	// 2 CPU would be free if executor 1's slot were kept for no one: a cycle judges second
	// on the node as it is, and finds no room for its executor.
	f.create(f.app("second", "default", 1))
	f.waitWaiting("second", "no node fits")
	// Later cycles judge it again, on the same world, and keep the slot too.
	f.awaitCycle("probe")
	f.requireNotAdmitted("second")

	startExecutor(1)
	f.requireNotAdmitted("second")
}

// awaitCycle creates application name, whose driver no node of the scenario can ever hold, and
// waits until the gang scheduler has rejected it: a cycle has judged the scenario again since
// the call.
func (f *fixture) awaitCycle(name string) {
	f.t.Helper()
	app := f.app(name, "default", 1)
	app.Spec.Driver.Cores = ptr.To[int32](1000)
	f.create(app)
	if msg := f.waitState(name, v1beta2.ApplicationStateFailed).Status.AppState.ErrorMessage; !strings.Contains(msg, "more than any matching node's allocatable") {
		f.t.Fatalf("%s failed with %q, want it rejected by the gang scheduler for its size", name, msg)
	}
}
