/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
)

// SecretType tells the operator how to use a Secret mounted into the driver
// or executor pods.
type SecretType string

const (
	// SecretTypeGCPServiceAccount marks a Secret holding a Google Cloud service
	// account key file; GOOGLE_APPLICATION_CREDENTIALS is pointed at it.
	SecretTypeGCPServiceAccount SecretType = "GCPServiceAccount"
	// SecretTypeHadoopDelegationToken marks a Secret holding a Hadoop delegation
	// token file; HADOOP_TOKEN_FILE_LOCATION is pointed at it.
	SecretTypeHadoopDelegationToken SecretType = "HadoopDelegationToken"
	// SecretTypeGeneric marks any other Secret: it is only mounted.
	SecretTypeGeneric SecretType = "Generic"
)

// SparkPodSpec holds the settings the driver and executor pods have in common.
type SparkPodSpec struct {
	// Template is a pod template (Spark 3.0 or later) for settings that have no
	// dedicated field here. Fields set through this spec or Spark properties take
	// precedence over the template, and CPU and memory requests and limits in it
	// are not used. Its content is not validated by the API server.
	// See https://spark.apache.org/docs/latest/running-on-kubernetes.html#pod-template.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Template *corev1.PodTemplateSpec `json:"template,omitempty"`

	// Cores is the number of CPU cores Spark uses for the pod's tasks
	// (spark.driver.cores or spark.executor.cores). Defaults to 1.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Cores *int32 `json:"cores,omitempty"`

	// CoreRequest is the pod's CPU request as a Kubernetes quantity, such as
	// "500m" or "2" (spark.kubernetes.driver.request.cores or
	// spark.kubernetes.executor.request.cores). When unset, cores is requested.
	// +optional
	CoreRequest *string `json:"coreRequest,omitempty"`

	// CoreLimit is the pod's CPU limit as a Kubernetes quantity, such as "1200m".
	// When unset, no CPU limit is set.
	// +optional
	CoreLimit *string `json:"coreLimit,omitempty"`

	// Memory is the JVM heap size of the driver or executor, in Spark's format
	// (e.g. "512m", "2g"). Defaults to "1g".
	// +optional
	Memory *string `json:"memory,omitempty"`

	// MemoryOverhead is the extra non-heap memory added to the pod's memory
	// request, in Spark's format (MiB when no unit is given). When unset,
	// Spark derives it from memoryOverheadFactor.
	// +optional
	MemoryOverhead *string `json:"memoryOverhead,omitempty"`

	// MemoryLimit replaces the pod's memory limit, which otherwise equals
	// memory plus memoryOverhead.
	// +optional
	MemoryLimit *string `json:"memoryLimit,omitempty"`

	// GPU requests GPUs for the pod.
	// +optional
	GPU *GPUSpec `json:"gpu,omitempty"`

	// Image is the container image for this pod. It takes precedence over spec.image.
	// +optional
	Image *string `json:"image,omitempty"`

	// ConfigMaps are ConfigMaps of the application's namespace to mount into
	// the pod, each at the given path.
	// +optional
	ConfigMaps []NamePath `json:"configMaps,omitempty"`

	// Secrets are Secrets of the application's namespace to mount into the pod,
	// each at the given path and used according to its type.
	// +optional
	Secrets []SecretInfo `json:"secrets,omitempty"`

	// Env are environment variables for the main Spark container.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`

	// EnvVars are environment variables for the main Spark container, as plain
	// name/value pairs. Deprecated: use env.
	// +optional
	EnvVars map[string]string `json:"envVars,omitempty"`

	// EnvFrom fills environment variables of the main Spark container from
	// ConfigMaps or Secrets.
	// +optional
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`

	// EnvSecretKeyRefs maps environment variable names to Secret keys whose
	// values they take. Deprecated: use env with valueFrom.secretKeyRef.
	// +optional
	EnvSecretKeyRefs map[string]NameKey `json:"envSecretKeyRefs,omitempty"`

	// Labels are added to the pod.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations are added to the pod.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// VolumeMounts mount volumes declared in spec.volumes into the main Spark container.
	// +optional
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`

	// Affinity sets the pod's node and pod affinity and anti-affinity rules.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// Tolerations are the pod's tolerations of node taints.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// PodSecurityContext is the pod-level security context.
	// +optional
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`

	// SecurityContext is the security context of the main Spark container.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	// SchedulerName is the Kubernetes scheduler that places the pod. When unset,
	// the cluster's default scheduler (or the batch scheduler) is used.
	// +optional
	SchedulerName *string `json:"schedulerName,omitempty"`

	// Sidecars are extra containers that run next to the main Spark container.
	// +optional
	Sidecars []corev1.Container `json:"sidecars,omitempty"`

	// InitContainers run to completion before the main Spark container starts.
	// +optional
	InitContainers []corev1.Container `json:"initContainers,omitempty"`

	// HostNetwork puts the pod in the node's network namespace when true.
	// Defaults to false.
	// +optional
	HostNetwork *bool `json:"hostNetwork,omitempty"`

	// NodeSelector restricts the pod to nodes with these labels. Do not combine
	// with spec.nodeSelector.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// DNSConfig adds DNS settings (nameservers, searches, options) to the pod.
	// +optional
	DNSConfig *corev1.PodDNSConfig `json:"dnsConfig,omitempty"`

	// TerminationGracePeriodSeconds is how long the pod may take to stop
	// gracefully, in seconds. When unset, the Kubernetes default (30) applies.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`

	// ServiceAccount is the Kubernetes service account the pod runs as. The
	// driver's account needs permission to manage executor pods.
	// +optional
	ServiceAccount *string `json:"serviceAccount,omitempty"`

	// HostAliases are entries added to the pod's /etc/hosts.
	// +optional
	HostAliases []corev1.HostAlias `json:"hostAliases,omitempty"`

	// ShareProcessNamespace makes all containers of the pod share one process
	// namespace when true. Defaults to false.
	// +optional
	ShareProcessNamespace *bool `json:"shareProcessNamespace,omitempty"`

	// JavaOptions are extra JVM options for the driver or executor, such as
	// garbage collector or logging flags
	// (spark.driver.extraJavaOptions or spark.executor.extraJavaOptions).
	// +optional
	JavaOptions *string `json:"javaOptions,omitempty"`

	// Lifecycle holds postStart and preStop hooks for the main Spark container.
	// +optional
	Lifecycle *corev1.Lifecycle `json:"lifecycle,omitempty"`

	// Ports are extra container ports to expose on the main Spark container.
	// +optional
	Ports []Port `json:"ports,omitempty"`

	// PriorityClassName is the PriorityClass of the pod.
	// +optional
	PriorityClassName *string `json:"priorityClassName,omitempty"`
}

// DriverSpec describes the driver pod.
type DriverSpec struct {
	SparkPodSpec `json:",inline"`

	// PodName is the name of a driver pod the user created themselves, for the
	// in-cluster-client mode. It must not be set in other modes.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +kubebuilder:validation:MaxLength=253
	// +optional
	PodName *string `json:"podName,omitempty"`

	// KubernetesMaster is the URL of the Kubernetes API server the driver uses
	// to manage executor pods. Defaults to https://kubernetes.default.svc.
	// +optional
	KubernetesMaster *string `json:"kubernetesMaster,omitempty"`

	// ServiceAnnotations are added to the headless Service through which
	// executors reach the driver.
	// +optional
	ServiceAnnotations map[string]string `json:"serviceAnnotations,omitempty"`

	// ServiceLabels are added to the headless Service through which executors
	// reach the driver.
	// +optional
	ServiceLabels map[string]string `json:"serviceLabels,omitempty"`
}

// ExecutorSpec describes the executor pods.
type ExecutorSpec struct {
	SparkPodSpec `json:",inline"`

	// Instances is the number of executors (spark.executor.instances). Defaults
	// to 1, or left unset when dynamic allocation is enabled.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Instances *int32 `json:"instances,omitempty"`

	// DeleteOnTermination says whether executor pods are deleted when they end,
	// whether they failed or not (spark.kubernetes.executor.deleteOnTermination,
	// Spark 3.0 or later). When unset, Spark deletes them.
	// +optional
	DeleteOnTermination *bool `json:"deleteOnTermination,omitempty"`
}

// NamePath names an object (a ConfigMap or Secret) and where to mount it.
type NamePath struct {
	// Name is the object's name.
	Name string `json:"name"`
	// Path is the directory in the container the object is mounted at.
	Path string `json:"path"`
}

// NameKey points at one key of a Secret.
type NameKey struct {
	// Name is the Secret's name.
	Name string `json:"name"`
	// Key is the key in the Secret's data.
	Key string `json:"key"`
}

// SecretInfo names a Secret to mount and how it is used.
type SecretInfo struct {
	// Name is the Secret's name.
	Name string `json:"name"`
	// Path is the directory in the container the Secret is mounted at.
	Path string `json:"path"`
	// Type is the kind of Secret: GCPServiceAccount, HadoopDelegationToken or Generic.
	// +kubebuilder:validation:Enum={GCPServiceAccount,HadoopDelegationToken,Generic}
	Type SecretType `json:"secretType"`
}

// GPUSpec requests GPUs of one resource type.
type GPUSpec struct {
	// Name is the extended resource name of the GPU, such as nvidia.com/gpu or amd.com/gpu.
	Name string `json:"name"`
	// Quantity is how many GPUs the pod requests.
	// +kubebuilder:validation:Minimum=0
	Quantity int64 `json:"quantity"`
}

// Port is an extra port of the main Spark container.
type Port struct {
	// Name is the port's name, unique within the pod.
	Name string `json:"name"`
	// Protocol is the port's protocol: TCP, UDP or SCTP.
	Protocol corev1.Protocol `json:"protocol"`
	// ContainerPort is the port number in the container.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	ContainerPort int32 `json:"containerPort"`
}
