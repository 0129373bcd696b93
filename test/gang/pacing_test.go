/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestStartPacing: two applications admitted together, with a start backlog smaller than one's
// executors. One driver starts; the other keeps its reservation but its driver is created only
// once the first one's executors have been released to their nodes; then both run.
func TestStartPacing(t *testing.T) {
	f := newFixture(t)
	states := f.recordPods()
	first, second := f.pacedPair()

	// Spark creates the first's executors (none existed: they were all owed); once they are
	// released, the second starts.
	var driver string
	f.waitFor(second+"'s driver", func() (bool, error) {
		p, err := f.driverOf(second)
		if p != nil {
			driver = p.Name
		}
		return p != nil, err
	})
	// In the order the API server wrote them: with a backlog of 2, the gate lets the second's
	// driver be created once at most one of the first's 3 executors is owed, so 2 or more were
	// released before it.
	var released int
	f.waitFor("the creation of "+driver+" among the pods' writes", func() (bool, error) {
		var seen bool
		released, seen = releasedBefore(states(), first, driver)
		return seen, nil
	})
	if released < 2 {
		t.Errorf("%s was created with %d of %s's 3 executors released; want it held while 2 or more were owed", driver, released, first)
	}
	f.waitRunning(first)
	f.waitRunning(second)
}

// releasedBefore counts the executors of app seen released (without scheduling gates) in the
// pod states before the first of pod, and reports whether pod is among them.
func releasedBefore(states []corev1.Pod, app, pod string) (released int, seen bool) {
	executors := map[string]bool{}
	for _, p := range states {
		if p.Name == pod {
			return len(executors), true
		}
		if p.Labels[v1beta2.LabelAppName] == app && p.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleExecutor && len(p.Spec.SchedulingGates) == 0 {
			executors[p.Name] = true
		}
	}
	return len(executors), false
}

// pacedPair creates two applications of 3 executors that are admitted together on one node,
// with a start backlog of 2, and waits until both are admitted and one's driver runs: first is
// that one, second the one pacing holds back (admitted, its driver not created). Spark is not
// played: no executor exists yet.
func (f *fixture) pacedPair() (first, second string) {
	f.t.Helper()
	f.node("a", "16", nil)
	f.startOperator("--gang-start-backlog=2")
	f.create(f.app("one", "default", 3), f.app("two", "default", 3))
	cluster.Eventually(f.t, 60*time.Second, "both admitted and one driver running", func() (bool, error) {
		for _, name := range []string{"one", "two"} {
			if _, ok := reservationOf(f.c, f.get(name)); !ok {
				return false, nil
			}
		}
		for _, pair := range [][2]string{{"one", "two"}, {"two", "one"}} {
			p, err := f.driverOf(pair[0])
			if err != nil || p == nil || p.Status.Phase != corev1.PodRunning {
				continue
			}
			first, second = pair[0], pair[1]
			return true, nil
		}
		return false, nil
	})
	return first, second
}

// driverOf is the driver pod of name's current submission (nil while there is none).
func (f *fixture) driverOf(name string) (*corev1.Pod, error) {
	app := f.get(name)
	if app.Status.SubmissionID == "" {
		return nil, nil
	}
	p := &corev1.Pod{}
	err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: app.DriverPodName()}, p)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return p, err
}
