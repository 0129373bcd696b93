/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/controllers/metrics"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/promnames"
)

// TestDashboardAndRulesQueryServedMetrics holds the chart's Grafana dashboard and Prometheus
// rules to what the operator serves: an operator with the gang scheduler, the webhook and
// leader election runs an application to its end while another waits in its queue, and every
// metric their queries name is then on its /metrics endpoint, as are Kubeflow's names.
func TestDashboardAndRulesQueryServedMetrics(t *testing.T) {
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var queried []string
	for file, parse := range map[string]func([]byte) ([]string, error){
		"files/dashboard.json": promnames.InDashboard, "files/prometheus-rules.yaml": promnames.InRules,
	} {
		b, err := os.ReadFile(filepath.Join(root, "charts/spark-operator", file))
		if err != nil {
			t.Fatal(err)
		}
		names, err := parse(b)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		queried = append(queried, names...)
	}

	f := newFixture(t)
	f.node("a", "4", nil)
	queue := f.queue("q", schedv1alpha1.QueueSpec{})
	configName := "metrics-webhook-" + f.ns
	t.Cleanup(func() {
		_ = f.c.Delete(context.Background(), &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configName}})
		_ = f.c.Delete(context.Background(), &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configName}})
	})
	metricsAddr := "127.0.0.1:" + strconv.Itoa(cluster.FreePort(t))
	f.startOperator("--metrics-bind-address="+metricsAddr, "--leader-elect", "--leader-election-namespace", f.ns,
		"--enable-webhook", "--webhook-url-host", "localhost", "--webhook-port", strconv.Itoa(cluster.FreePort(t)),
		"--webhook-secret-namespace", f.ns, "--webhook-config-name", configName, "--webhook-cert-dir", t.TempDir())

	// One fills the node and ends; the other waits for room meanwhile, then runs.
	f.create(runFor(f.app("first", queue, 2), 5))
	f.waitRunning("first")
	f.create(f.app("second", queue, 3))
	f.waitWaiting("second", "")
	var served promnames.Served
	scrape := func() (bool, error) {
		resp, err := http.Get("http://" + metricsAddr + "/metrics")
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Errorf("GET /metrics: %s", resp.Status)
		}
		served, err = promnames.Parse(resp.Body)
		return err == nil, err
	}
	cluster.Eventually(t, 30*time.Second, "the queue's gauge showing the waiting application", func() (bool, error) {
		ok, err := scrape()
		return ok && served.Has("spark_operator_gang_queue_pending_applications"), err
	})
	f.waitState("first", v1beta2.ApplicationStateCompleted)
	f.waitRunning("second")
	if _, err := scrape(); err != nil {
		t.Fatal(err)
	}

	for _, name := range append(queried, metrics.KubeflowNames...) {
		if !served.Has(name) {
			t.Errorf("%s: queried by the chart's dashboard or rules (or Kubeflow's), not served by the operator", name)
		}
	}
}
