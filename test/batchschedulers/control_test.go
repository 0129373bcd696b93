/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package batchschedulers

import (
	"context"
	"testing"
	"time"

	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/sparkplay"
)

// TestWithoutAGangPartialStartsAreSeen is the control of the checks above: 8 applications with
// no batch scheduler, on the cluster that fits 4 whole, created at once. kube-scheduler binds
// their drivers pod by pod, which leaves no room for their executors, and the fixture must say
// that they ran in part (an executor waiting while no node has room for it): a check that
// never fires would pass every scheduler.
func TestWithoutAGangPartialStartsAreSeen(t *testing.T) {
	_, kubeconfig := fourAppCluster(t)
	c, _ := cluster.Clients(t, kubeconfig)
	ns := cluster.Namespace(t, c, "control")
	cluster.StartOperator(t, "operator", "--kubeconfig", kubeconfig, "--namespaces", ns, "--submission-workers", "8",
		"--enable-spark-connect=false", "-logtostderr", "-v=1")
	for i := range 2 * fitAtOnce {
		if err := c.Create(context.Background(), newApp(ns, "no-gang", i)); err != nil {
			t.Fatal(err)
		}
	}
	f := newFixture(t, c, ns, sparkplay.Options{})
	t.Cleanup(f.describeOnFailure)
	cluster.Eventually(t, 4*time.Minute, "an application seen running in part", func() (bool, error) {
		_, _, err := f.step()
		return len(f.Partial()) > 0, err
	})
	t.Logf("in part: %v", f.Partial())
}
