/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// SparkApplicationType is the language a Spark application is written in.
type SparkApplicationType string

const (
	// SparkApplicationTypeJava is an application written in Java.
	SparkApplicationTypeJava SparkApplicationType = "Java"
	// SparkApplicationTypeScala is an application written in Scala.
	SparkApplicationTypeScala SparkApplicationType = "Scala"
	// SparkApplicationTypePython is a PySpark application.
	SparkApplicationTypePython SparkApplicationType = "Python"
	// SparkApplicationTypeR is a SparkR application.
	SparkApplicationTypeR SparkApplicationType = "R"
)

// DeployMode is the spark-submit deploy mode.
type DeployMode string

const (
	// DeployModeCluster runs the driver in a pod of its own.
	DeployModeCluster DeployMode = "cluster"
	// DeployModeClient runs the driver inside the submitting process.
	DeployModeClient DeployMode = "client"
	// DeployModeInClusterClient runs the driver in a pod the user created
	// (see spec.driver.podName). It is reserved: the CRD schema does not
	// accept it yet, as in the upstream v1beta2 API.
	DeployModeInClusterClient DeployMode = "in-cluster-client"
)

// RestartPolicyType says when an application that has ended is run again.
type RestartPolicyType string

const (
	// RestartPolicyNever never reruns the application.
	RestartPolicyNever RestartPolicyType = "Never"
	// RestartPolicyOnFailure reruns the application only after it failed, up to
	// onFailureRetries times (and resubmits after failed submissions, up to
	// onSubmissionFailureRetries times).
	RestartPolicyOnFailure RestartPolicyType = "OnFailure"
	// RestartPolicyAlways reruns the application whenever it ends, whether it
	// failed or succeeded.
	RestartPolicyAlways RestartPolicyType = "Always"
)

// Default values applied by SetSparkApplicationDefaults.
const (
	// DefaultCores is the default number of cores of the driver and each executor.
	DefaultCores int32 = 1
	// DefaultMemory is the default memory of the driver and each executor.
	DefaultMemory = "1g"
	// DefaultExecutorInstances is the default number of executors without
	// dynamic allocation.
	DefaultExecutorInstances int32 = 1
	// DefaultRetryIntervalSeconds is the default delay between retries under the
	// OnFailure and Always restart policies.
	DefaultRetryIntervalSeconds int64 = 5
	// DefaultRunHistoryLimit is the default number of successful and of failed
	// runs a ScheduledSparkApplication keeps.
	DefaultRunHistoryLimit int32 = 1
)

// RestartPolicy decides whether and when an application is run again after
// it ends.
type RestartPolicy struct {
	// Type is Never, OnFailure or Always. Defaults to Never.
	// +kubebuilder:validation:Enum={Never,Always,OnFailure}
	// +optional
	Type RestartPolicyType `json:"type,omitempty"`

	// OnSubmissionFailureRetries is how many times a failed submission is
	// retried before giving up. Best effort: the real number of attempts may be
	// higher. Used by OnFailure and Always.
	// +kubebuilder:validation:Minimum=0
	// +optional
	OnSubmissionFailureRetries *int32 `json:"onSubmissionFailureRetries,omitempty"`

	// OnFailureRetries is how many times an application that failed while
	// running is run again before giving up. Used by OnFailure and Always.
	// +kubebuilder:validation:Minimum=0
	// +optional
	OnFailureRetries *int32 `json:"onFailureRetries,omitempty"`

	// OnSubmissionFailureRetryInterval is the delay in seconds before a failed
	// submission is retried. Defaults to 5 for OnFailure and Always.
	// +kubebuilder:validation:Minimum=1
	// +optional
	OnSubmissionFailureRetryInterval *int64 `json:"onSubmissionFailureRetryInterval,omitempty"`

	// OnFailureRetryInterval is the delay in seconds before a failed run is
	// started again. Defaults to 5 for OnFailure and Always.
	// +kubebuilder:validation:Minimum=1
	// +optional
	OnFailureRetryInterval *int64 `json:"onFailureRetryInterval,omitempty"`
}

// Dependencies lists what the application needs besides its main file. Each
// list maps to the spark-submit option of the same name.
type Dependencies struct {
	// Jars are JAR files added to the driver and executor classpaths (--jars).
	// +optional
	Jars []string `json:"jars,omitempty"`

	// Files are files placed in the working directory of each executor (--files).
	// +optional
	Files []string `json:"files,omitempty"`

	// PyFiles are .py, .zip or .egg files added to the Python path (--py-files).
	// +optional
	PyFiles []string `json:"pyFiles,omitempty"`

	// Packages are Maven coordinates ("groupId:artifactId:version") of JARs to
	// resolve and add to the driver and executor classpaths (--packages).
	// +optional
	Packages []string `json:"packages,omitempty"`

	// ExcludePackages are "groupId:artifactId" pairs left out when resolving
	// packages, to avoid dependency conflicts (--exclude-packages).
	// +optional
	ExcludePackages []string `json:"excludePackages,omitempty"`

	// Repositories are extra Maven repositories searched for packages
	// (--repositories).
	// +optional
	Repositories []string `json:"repositories,omitempty"`

	// Archives are archives unpacked into the working directory of each
	// executor (--archives).
	// +optional
	Archives []string `json:"archives,omitempty"`
}

// DynamicAllocation configures Spark dynamic allocation, which grows and
// shrinks the number of executors with the workload.
// +kubebuilder:validation:XValidation:rule="!has(self.minExecutors) || !has(self.maxExecutors) || self.minExecutors <= self.maxExecutors",message="minExecutors must not be greater than maxExecutors"
type DynamicAllocation struct {
	// Enabled turns dynamic allocation on. Defaults to false.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// InitialExecutors is the number of executors to start with. If
	// spec.executor.instances is also set, the larger of the two is used.
	// +kubebuilder:validation:Minimum=0
	// +optional
	InitialExecutors *int32 `json:"initialExecutors,omitempty"`

	// MinExecutors is the lowest number of executors to keep.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinExecutors *int32 `json:"minExecutors,omitempty"`

	// MaxExecutors is the highest number of executors to run.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxExecutors *int32 `json:"maxExecutors,omitempty"`

	// ShuffleTrackingEnabled keeps executors that hold shuffle data of active
	// jobs alive, so that dynamic allocation works without an external shuffle
	// service. Set it to false when an external shuffle service is used.
	// Defaults to true when dynamic allocation is enabled.
	// +optional
	ShuffleTrackingEnabled *bool `json:"shuffleTrackingEnabled,omitempty"`

	// ShuffleTrackingTimeout is how long, in milliseconds, an executor holding
	// shuffle data may be kept while shuffle tracking is on. When unset, Spark's
	// default (no timeout) applies.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ShuffleTrackingTimeout *int64 `json:"shuffleTrackingTimeout,omitempty"`
}

// MonitoringSpec configures how the driver and executors expose metrics.
type MonitoringSpec struct {
	// ExposeDriverMetrics exposes the driver's metrics when true.
	ExposeDriverMetrics bool `json:"exposeDriverMetrics"`

	// ExposeExecutorMetrics exposes the executors' metrics when true.
	ExposeExecutorMetrics bool `json:"exposeExecutorMetrics"`

	// MetricsProperties is the content of a metrics.properties file for the
	// Spark metrics system. When unset, the file shipped in the image is used.
	// +optional
	MetricsProperties *string `json:"metricsProperties,omitempty"`

	// MetricsPropertiesFile is the path of a metrics.properties file inside the
	// container. Defaults to /etc/metrics/conf/metrics.properties.
	// +optional
	MetricsPropertiesFile *string `json:"metricsPropertiesFile,omitempty"`

	// Prometheus configures the Prometheus JMX exporter Java agent.
	// +optional
	Prometheus *PrometheusSpec `json:"prometheus,omitempty"`
}

// PrometheusSpec configures the Prometheus JMX exporter Java agent run in the
// driver and executor JVMs.
type PrometheusSpec struct {
	// JmxExporterJar is the path of the JMX exporter agent JAR inside the image.
	JmxExporterJar string `json:"jmxExporterJar"`

	// Port is the port the exporter's HTTP server listens on. Defaults to 8090.
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=49151
	// +optional
	Port *int32 `json:"port,omitempty"`

	// PortName is the name of the exporter's container port. Defaults to jmx-exporter.
	// +optional
	PortName *string `json:"portName,omitempty"`

	// ConfigFile is the path of an exporter configuration file inside the image.
	// It takes precedence over configuration.
	// +optional
	ConfigFile *string `json:"configFile,omitempty"`

	// Configuration is the content of the exporter configuration. When neither
	// it nor configFile is set, the configuration shipped in the image is used.
	// +optional
	Configuration *string `json:"configuration,omitempty"`
}

// BatchSchedulerConfiguration carries settings for the batch scheduler named
// in spec.batchScheduler.
type BatchSchedulerConfiguration struct {
	// Queue is the scheduler queue the application is placed in (used by
	// Volcano and YuniKorn).
	// +optional
	Queue *string `json:"queue,omitempty"`

	// PriorityClassName is the PriorityClass of the application's pod group
	// (used by Volcano).
	// +optional
	PriorityClassName *string `json:"priorityClassName,omitempty"`

	// Resources is the minimum amount of resources the scheduler must find
	// before starting the application's pods. When unset, it is computed from the
	// driver and executor specs.
	// +optional
	Resources corev1.ResourceList `json:"resources,omitempty"`
}

// SparkUIConfiguration customizes the Service and Ingress that expose the
// Spark web UI.
type SparkUIConfiguration struct {
	// ServicePort is the Service's port for the UI, which may differ from the
	// UI's container port (spark.ui.port). Defaults to the container port.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	ServicePort *int32 `json:"servicePort,omitempty"`

	// ServicePortName is the name of the Service port. Some service meshes use
	// it to detect the protocol. Defaults to spark-driver-ui-port.
	// +optional
	ServicePortName *string `json:"servicePortName,omitempty"`

	// ServiceType is the type of the Service. Defaults to ClusterIP.
	// +optional
	ServiceType *corev1.ServiceType `json:"serviceType,omitempty"`

	// ServiceAnnotations are added to the Service.
	// +optional
	ServiceAnnotations map[string]string `json:"serviceAnnotations,omitempty"`

	// ServiceLabels are added to the Service.
	// +optional
	ServiceLabels map[string]string `json:"serviceLabels,omitempty"`

	// IngressAnnotations are added to the Ingress, for example to pick an
	// ingress class.
	// +optional
	IngressAnnotations map[string]string `json:"ingressAnnotations,omitempty"`

	// IngressTLS is the TLS configuration (hosts and certificate Secret) of the Ingress.
	// +optional
	IngressTLS []networkingv1.IngressTLS `json:"ingressTLS,omitempty"`
}

// DriverIngressConfiguration exposes one more driver port through a Service
// and an Ingress.
type DriverIngressConfiguration struct {
	// ServicePort is the port to expose, both on the driver and on the Service.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	ServicePort int32 `json:"servicePort"`

	// ServicePortName is the name of the Service port.
	ServicePortName string `json:"servicePortName"`

	// ServiceType is the type of the Service. Defaults to ClusterIP.
	// +optional
	ServiceType *corev1.ServiceType `json:"serviceType,omitempty"`

	// ServiceAnnotations are added to the Service.
	// +optional
	ServiceAnnotations map[string]string `json:"serviceAnnotations,omitempty"`

	// ServiceLabels are added to the Service.
	// +optional
	ServiceLabels map[string]string `json:"serviceLabels,omitempty"`

	// IngressURLFormat is the URL (host and optional path) of the Ingress. It
	// may contain the placeholders {{$appName}} and {{$appNamespace}}.
	// +optional
	IngressURLFormat string `json:"ingressURLFormat,omitempty"`

	// IngressAnnotations are added to the Ingress, for example to pick an
	// ingress class.
	// +optional
	IngressAnnotations map[string]string `json:"ingressAnnotations,omitempty"`

	// IngressTLS is the TLS configuration (hosts and certificate Secret) of the Ingress.
	// +optional
	IngressTLS []networkingv1.IngressTLS `json:"ingressTLS,omitempty"`
}
