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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestStartPacing: two applications admitted together, with a start backlog smaller than one's
// executors. One driver starts; the other keeps its reservation but its driver is created only
// once the first one's executors have all been released to their nodes; then both run.
func TestStartPacing(t *testing.T) {
	f := newFixture(t)
	first, second := f.pacedPair()
	// The first's three executors are owed (the backlog is two): the second waits, well
	// within the time an executor stays owed.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		p, err := f.driverOf(second)
		if err != nil {
			t.Fatal(err)
		}
		if p != nil {
			t.Fatalf("%s's driver was created while the executors of %s, started just before, were owed", second, first)
		}
		time.Sleep(250 * time.Millisecond)
	}

	// Spark creates the first's executors; once they are released, the second starts.
	f.waitFor(second+"'s driver", func() (bool, error) {
		p, err := f.driverOf(second)
		if err != nil || p == nil {
			return false, err
		}
		// The second's driver was created once the first's executors showed released, and a
		// gate never comes back: all three are released now.
		released := 0
		for _, e := range f.pods(first) {
			if e.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleExecutor && len(e.Spec.SchedulingGates) == 0 {
				released++
			}
		}
		if released < 3 {
			return false, fmt.Errorf("%s's driver was created with %d of %s's 3 executors released", second, released, first)
		}
		return true, nil
	})
	f.waitRunning(first)
	f.waitRunning(second)
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
