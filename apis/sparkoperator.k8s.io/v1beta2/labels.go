/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package v1beta2

import (
	"crypto/sha256"
	"encoding/hex"
)

// Labels and annotations the operator puts on what it creates. They are part of the API: users
// select pods by them, and the Kubeflow operator used the same keys.
const (
	// LabelAppName carries the name of the SparkApplication a pod, Service or ConfigMap belongs to.
	LabelAppName = GroupName + "/app-name"
	// LabelLaunchedByOperator ("true") marks everything the operator launched; its caches and the
	// webhook select on it, so unrelated objects in the cluster are never watched or touched.
	LabelLaunchedByOperator = GroupName + "/launched-by-spark-operator"
	// LabelSubmissionID ties a pod to one submission attempt (status.submissionID); pods of an
	// earlier attempt are recognised and ignored by it.
	LabelSubmissionID = GroupName + "/submission-id"
	// LabelScheduledAppName carries the ScheduledSparkApplication that created a SparkApplication.
	LabelScheduledAppName = GroupName + "/scheduled-app-name"
	// LabelCustomised ("true") marks a driver pod the native submitter built with every
	// customisation of its application already written (sparkpod.Customise): the pod-mutating
	// webhook would change nothing, so its configuration leaves such pods out, and their
	// creation costs no admission round trip. It is the operator's to set: a user's label of
	// that key is dropped (sparkconf).
	LabelCustomised = GroupName + "/customised"

	// AnnotationSubmitter overrides, per application, the operator's submission mode:
	// "native" or "spark-submit".
	AnnotationSubmitter = GroupName + "/submitter"
)

// Labels and names that Spark itself uses on Kubernetes.
const (
	// SparkRoleLabel is "driver" or "executor".
	SparkRoleLabel        = "spark-role"
	SparkRoleDriver       = "driver"
	SparkRoleExecutor     = "executor"
	SparkAppSelectorLabel = "spark-app-selector" // the Spark application ID (spark.app.id)
	SparkAppNameLabel     = "spark-app-name"
	SparkExecutorIDLabel  = "spark-exec-id"

	SparkDriverContainerName   = "spark-kubernetes-driver"
	SparkExecutorContainerName = "spark-kubernetes-executor"
)

// maxNameLength is the limit of a DNS-1035 label, and so of a Service name.
const maxNameLength = 63

// DriverPodName is the deterministic name of the application's driver pod: spec.driver.podName
// when set, else "<app>-driver". Being deterministic is what makes submission idempotent: a
// second attempt to create the same driver finds it instead of starting another.
func (a *SparkApplication) DriverPodName() string {
	if a.Spec.Driver.PodName != nil && *a.Spec.Driver.PodName != "" {
		return *a.Spec.Driver.PodName
	}
	return a.Name + "-driver"
}

// UIServiceName is the name of the Service exposing the Spark UI: "<app>-ui-svc", shortened
// with a hash suffix when that would exceed 63 characters, so it stays unique and valid.
func (a *SparkApplication) UIServiceName() string {
	return ShortName(a.Name, "-ui-svc")
}

// The files of the application's metrics ConfigMap (MetricsConfigMapName).
const (
	MetricsPropertiesKey = "metrics.properties"
	PrometheusConfigKey  = "prometheus.yaml"
)

// InlineMetricsConfig is the monitoring configuration the application gives as text rather than
// as files inside its image, keyed by file name: what its metrics ConfigMap holds. Empty when
// there is none, and then no ConfigMap is needed. A file path, where given, wins over text.
func (a *SparkApplication) InlineMetricsConfig() map[string]string {
	m := a.Spec.Monitoring
	if m == nil {
		return nil
	}
	files := map[string]string{}
	if m.MetricsProperties != nil && (m.MetricsPropertiesFile == nil || *m.MetricsPropertiesFile == "") {
		files[MetricsPropertiesKey] = *m.MetricsProperties
	}
	if p := m.Prometheus; p != nil && p.Configuration != nil && (p.ConfigFile == nil || *p.ConfigFile == "") {
		files[PrometheusConfigKey] = *p.Configuration
	}
	return files
}

// MetricsConfigMapName is the ConfigMap holding the metrics.properties and Prometheus JMX
// exporter configuration given inline in spec.monitoring; it is mounted at /etc/metrics/conf.
func (a *SparkApplication) MetricsConfigMapName() string {
	return ShortName(a.Name, "-prom-conf")
}

// ShortName joins base and suffix, cutting base and appending a short hash of it when the
// result would be longer than a DNS-1035 label allows.
func ShortName(base, suffix string) string {
	if len(base)+len(suffix) <= maxNameLength {
		return base + suffix
	}
	sum := sha256.Sum256([]byte(base))
	hash := hex.EncodeToString(sum[:])[:8]
	keep := maxNameLength - len(suffix) - len(hash) - 1
	return base[:keep] + "-" + hash + suffix
}
