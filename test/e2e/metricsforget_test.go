/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package e2e

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/controllers/metrics"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
)

// TestDeletedRunningApplicationLeavesGauges: an application deleted while it runs (its driver
// and executor never end on the simulated node, and nothing reconciles a deleted application,
// so no end is ever reported) leaves the running gauges, its own and its executors', as
// served on /metrics.
func TestDeletedRunningApplicationLeavesGauges(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "e2e-forget")
	port := strconv.Itoa(cluster.FreePort(t))
	startOperator(t, ns, "--metrics-bind-address=127.0.0.1:"+port)
	gauges := func() map[string]float64 {
		resp, err := http.Get("http://127.0.0.1:" + port + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, line := range strings.Split(string(b), "\n") {
			name, value, ok := strings.Cut(line, " ")
			if ok && (name == metrics.Running || name == metrics.ExecutorRunning) {
				got[name], _ = strconv.ParseFloat(value, 64)
			}
		}
		return got
	}

	app := cluster.SparkPi(ns, "deleted")
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	want := func(v float64) func() (bool, error) {
		return func() (bool, error) {
			g := gauges()
			return g[metrics.Running] == v && g[metrics.ExecutorRunning] == v, nil
		}
	}
	var got v1beta2.SparkApplication
	cluster.Eventually(t, 3*time.Minute, "the application to run", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(app), &got)
		return got.Status.AppState.State == v1beta2.ApplicationStateRunning, err
	})
	// Its executor, as its driver would make it.
	var driver corev1.Pod
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: got.Status.DriverInfo.PodName}, &driver); err != nil {
		t.Fatal(err)
	}
	if _, err := executors.Create(ctx, c, &driver, 1, executors.Options{}); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 3*time.Minute, "the application and its executor counted as running", want(1))
	if err := c.Delete(ctx, app); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, time.Minute, "the deleted application and its executor out of the running gauges", want(0))
}
