/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package chart

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/test/promnames"
)

// TestRenderMonitoring checks the Kubeflow chart's prometheus values and the dashboard and
// rules: the metrics flags and pod annotations, the PodMonitor, the PrometheusRule and the
// dashboard ConfigMap, with the metrics prefix carried into their queries.
func TestRenderMonitoring(t *testing.T) {
	const ns = "ops"
	monitoring := []string{"--api-versions", "monitoring.coreos.com/v1/PodMonitor", "--api-versions", "monitoring.coreos.com/v1/PrometheusRule"}
	args := append([]string{"template", "rel", chartDir, "--namespace", ns}, monitoring...)
	args = append(args, setFlags([]string{"prometheus.podMonitor.create=true", "prometheus.rules.create=true", "prometheus.dashboard.create=true",
		"prometheus.metrics.port=9090", "prometheus.metrics.portName=prom", "prometheus.metrics.endpoint=/prom", "prometheus.metrics.prefix=kf_",
		"prometheus.metrics.labels=app_type\\,team", "prometheus.metrics.jobStartLatencyBuckets=30\\,60",
		"controller.podAnnotations.example\\.com/a=b"})...)
	out, err := helm(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decode(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"rel-spark-operator-controller", "rel-spark-operator-webhook"} {
		dep := find(objs, "Deployment", ns, d)
		got := containerArgs(t, dep)
		for _, want := range []string{"--metrics-bind-address=:9090", "--metrics-endpoint=/prom", "--metrics-prefix=kf_",
			"--metrics-labels=app_type,team", "--metrics-job-start-latency-buckets=30,60"} {
			if !slices.Contains(got, want) {
				t.Errorf("%s args %v lack %s", d, got, want)
			}
		}
		ann, _, _ := unstructured.NestedStringMap(dep.Object, "spec", "template", "metadata", "annotations")
		if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != "9090" || ann["prometheus.io/path"] != "/prom" {
			t.Errorf("%s pod annotations %v: want Prometheus's scrape annotations", d, ann)
		}
		ports, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
		if !strings.Contains(toYAML(t, ports), "name: prom") {
			t.Errorf("%s: no container port named prom", d)
		}
	}
	ann, _, _ := unstructured.NestedStringMap(find(objs, "Deployment", ns, "rel-spark-operator-controller").Object, "spec", "template", "metadata", "annotations")
	if ann["example.com/a"] != "b" {
		t.Errorf("controller pod annotations %v lack the podAnnotations", ann)
	}

	pm := find(objs, "PodMonitor", ns, "rel-spark-operator-podmonitor")
	if pm == nil {
		t.Fatal("no PodMonitor")
	}
	endpoints, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	if y := toYAML(t, endpoints); !strings.Contains(y, "port: prom") || !strings.Contains(y, "path: /prom") || !strings.Contains(y, "interval: 5s") {
		t.Errorf("PodMonitor endpoints %s", y)
	}

	rule := find(objs, "PrometheusRule", ns, "rel-spark-operator")
	if rule == nil {
		t.Fatal("no PrometheusRule")
	}
	spec, _, _ := unstructured.NestedMap(rule.Object, "spec")
	ruleNames, err := promnames.InRules([]byte(toYAML(t, spec)))
	if err != nil {
		t.Fatal(err)
	}
	cm := find(objs, "ConfigMap", ns, "rel-spark-operator-dashboard")
	if cm == nil {
		t.Fatal("no dashboard ConfigMap")
	}
	if cm.GetLabels()["grafana_dashboard"] != "1" {
		t.Errorf("dashboard labels %v: no label for Grafana's sidecar", cm.GetLabels())
	}
	dashboard, _, _ := unstructured.NestedString(cm.Object, "data", "spark-operator.json")
	dashNames, err := promnames.InDashboard([]byte(dashboard))
	if err != nil {
		t.Fatal(err)
	}
	prefixed := 0
	for _, n := range append(ruleNames, dashNames...) {
		if strings.HasPrefix(n, "spark_application_") || strings.HasPrefix(n, "spark_executor_") {
			t.Errorf("%s: not prefixed", n)
		}
		if strings.HasPrefix(n, "kf_spark_") {
			prefixed++
		}
	}
	if prefixed == 0 {
		t.Error("no query names a prefixed metric")
	}

	// Without the Prometheus Operator's kinds, asking for them fails and says why.
	for _, set := range []string{"prometheus.podMonitor.create=true", "prometheus.rules.create=true"} {
		if out, err := render(t, ns, set); err == nil || !strings.Contains(err.Error(), "monitoring.coreos.com/v1") {
			t.Errorf("%s without the Prometheus Operator: %v\n%s", set, err, out)
		}
	}
	// Nothing of it by default.
	objs, err = render(t, ns)
	if err != nil {
		t.Fatal(err)
	}
	if n := kinds(objs); n["PodMonitor"]+n["PrometheusRule"] != 0 || find(objs, "ConfigMap", ns, "rel-spark-operator-dashboard") != nil {
		t.Errorf("kinds %v: monitoring objects by default", n)
	}
}

func toYAML(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
