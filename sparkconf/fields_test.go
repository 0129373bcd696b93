/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkconf

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// TestLesserSpecFields shows what spec fields no example sets turn into (test/fields lists
// this test as their evidence).
func TestLesserSpecFields(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*v1beta2.SparkApplication)
		want   map[string]string // a subset of Map(); "" for absent
	}{{
		name: "driver kubernetesMaster, serviceLabels and serviceAnnotations",
		modify: func(a *v1beta2.SparkApplication) {
			a.Spec.Driver.KubernetesMaster = ptr.To("https://api.example.com:6443")
			a.Spec.Driver.ServiceLabels = map[string]string{"team": "data"}
			a.Spec.Driver.ServiceAnnotations = map[string]string{"note": "svc"}
		},
		want: map[string]string{
			"spark.kubernetes.driver.master":                  "https://api.example.com:6443",
			"spark.kubernetes.driver.service.label.team":      "data",
			"spark.kubernetes.driver.service.annotation.note": "svc",
		},
	}, {
		name: "dynamicAllocation shuffleTrackingEnabled false",
		modify: func(a *v1beta2.SparkApplication) {
			a.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, ShuffleTrackingEnabled: ptr.To(false)}
		},
		want: map[string]string{"spark.dynamicAllocation.shuffleTracking.enabled": "false"},
	}, {
		name: "dynamicAllocation shuffleTrackingEnabled unset defaults to true",
		modify: func(a *v1beta2.SparkApplication) {
			a.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true}
		},
		want: map[string]string{"spark.dynamicAllocation.shuffleTracking.enabled": "true"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := baseApp()
			tt.modify(app)
			s, err := Build(app, testAttempt)
			if err != nil {
				t.Fatal(err)
			}
			m := s.Map()
			got := map[string]string{}
			for k := range tt.want {
				got[k] = m[k]
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Map (-want +got):\n%s", d)
			}
		})
	}

	t.Run("prometheus portName names the exporter's container port", func(t *testing.T) {
		app := baseApp()
		app.Spec.Monitoring = &v1beta2.MonitoringSpec{ExposeDriverMetrics: true,
			Prometheus: &v1beta2.PrometheusSpec{JmxExporterJar: "/j.jar", PortName: ptr.To("metrics")}}
		want := &corev1.ContainerPort{Name: "metrics", ContainerPort: 8090, Protocol: corev1.ProtocolTCP}
		if d := cmp.Diff(want, MetricsPort(app, Driver)); d != "" {
			t.Errorf("MetricsPort (-want +got):\n%s", d)
		}
	})
}
