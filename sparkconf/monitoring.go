/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkconf

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// monitoringConf adds the metrics properties and returns the extra JVM options (the Prometheus
// JMX exporter agent) for the driver and the executors. The ConfigMap holding a generated
// metrics.properties or exporter configuration is not created here: that is the controller's
// work, as it outlives one submission.
func monitoringConf(c *confList, app *v1beta2.SparkApplication) [2]string {
	m := app.Spec.Monitoring
	if m == nil {
		return [2]string{}
	}
	metricsFile := defaultMetricsPropFile
	if m.MetricsPropertiesFile != nil && *m.MetricsPropertiesFile != "" {
		metricsFile = *m.MetricsPropertiesFile
	}
	c.add(confMetricsConf, metricsFile)
	// Without a namespace the metric names carry the random application ID, which changes
	// on every run and defeats dashboards.
	c.add(confMetricsNamespace, app.Namespace+"."+app.Name)

	p := m.Prometheus
	if p == nil || p.JmxExporterJar == "" {
		return [2]string{}
	}
	configFile := defaultPromConfigFile
	if p.ConfigFile != nil && *p.ConfigFile != "" {
		configFile = *p.ConfigFile
	}
	agent := fmt.Sprintf("-javaagent:%s=%d:%s", p.JmxExporterJar, prometheusPort(p), configFile)
	var out [2]string
	if m.ExposeDriverMetrics {
		out[0] = agent
	}
	if m.ExposeExecutorMetrics {
		out[1] = agent
	}
	return out
}

func prometheusPort(p *v1beta2.PrometheusSpec) int32 {
	if p.Port != nil {
		return *p.Port
	}
	return defaultPrometheusPort
}

// MetricsPort is the container port of the Prometheus JMX exporter in the role's JVM, nil when
// that role does not expose metrics.
func MetricsPort(app *v1beta2.SparkApplication, r Role) *corev1.ContainerPort {
	m := app.Spec.Monitoring
	if m == nil || m.Prometheus == nil || m.Prometheus.JmxExporterJar == "" ||
		(r == Driver && !m.ExposeDriverMetrics) || (r == Executor && !m.ExposeExecutorMetrics) {
		return nil
	}
	name := defaultPromPortName
	if n := m.Prometheus.PortName; n != nil && *n != "" {
		name = *n
	}
	return &corev1.ContainerPort{Name: name, ContainerPort: prometheusPort(m.Prometheus), Protocol: corev1.ProtocolTCP}
}
