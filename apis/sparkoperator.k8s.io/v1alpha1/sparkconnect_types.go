/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// SparkConnect is a long-running Spark Connect server (a Spark driver in client mode that
// clients reach over gRPC on port 15002) with its executors. The operator runs the server in a
// pod named "<name>-server" behind a Service, and reports in status whether clients can connect.
//
// +kubebuilder:object:root=true
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=https://github.com/kubeflow/spark-operator/pull/1298"
// +kubebuilder:resource:scope=Namespaced,shortName=sparkconn,singular=sparkconnect
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="PodName",type=string,JSONPath=`.status.server.podName`
// +kubebuilder:printcolumn:name="Service",type=string,JSONPath=`.status.server.serviceName`
// +kubebuilder:printcolumn:name="Executors",type=integer,JSONPath=`.status.executors.running`,description="running executor pods"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Waiting",type=string,JSONPath=`.status.conditions[?(@.reason=="Queued")].message`,description="why its batch scheduler holds the server back (while queued)"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter): it names the server's Service"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 56",message="metadata.name must be no more than 56 characters, so that the server's Service name \"<name>-server\" fits in 63"
type SparkConnect struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	Spec   SparkConnectSpec   `json:"spec"`
	Status SparkConnectStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SparkConnectList is a list of SparkConnects.
type SparkConnectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SparkConnect `json:"items"`
}

// SparkConnectSpec is the desired Spark Connect server. The server pod is built from it once;
// later changes apply to the next server pod (delete the current one to get it).
//
// +kubebuilder:validation:XValidation:rule="!has(self.dynamicAllocation) || !has(self.dynamicAllocation.minExecutors) || !has(self.dynamicAllocation.maxExecutors) || self.dynamicAllocation.minExecutors <= self.dynamicAllocation.maxExecutors",message="dynamicAllocation.minExecutors must not be greater than dynamicAllocation.maxExecutors"
// +kubebuilder:validation:XValidation:rule="!has(self.dynamicAllocation) || !has(self.dynamicAllocation.initialExecutors) || ((!has(self.dynamicAllocation.minExecutors) || self.dynamicAllocation.initialExecutors >= self.dynamicAllocation.minExecutors) && (!has(self.dynamicAllocation.maxExecutors) || self.dynamicAllocation.initialExecutors <= self.dynamicAllocation.maxExecutors))",message="dynamicAllocation.initialExecutors must lie between minExecutors and maxExecutors"
type SparkConnectSpec struct {
	// SparkVersion is the version of Spark the server runs, such as "4.0.4". It labels the
	// server pod (spark-version).
	// +kubebuilder:validation:MinLength=1
	SparkVersion string `json:"sparkVersion"`

	// Image is the container image of the server and the executors. An image set on the
	// server's container (spark-kubernetes-driver) or the executors' container
	// (spark-kubernetes-executor) in their templates takes precedence.
	// +optional
	Image *string `json:"image,omitempty"`

	// HadoopConf holds Hadoop configuration properties; each is passed to Spark with the
	// prefix "spark.hadoop." (added when missing).
	// +optional
	HadoopConf map[string]string `json:"hadoopConf,omitempty"`

	// SparkConf holds Spark configuration properties, passed to the server as --conf options.
	// Properties the operator sets itself (the driver pod name, host and ports, the executor
	// pod name prefix, the namespace) cannot be overridden.
	// +optional
	SparkConf map[string]string `json:"sparkConf,omitempty"`

	// Server is the Spark Connect server (the driver).
	Server ServerSpec `json:"server"`

	// Executor is the executors the server starts.
	Executor ExecutorSpec `json:"executor"`

	// DynamicAllocation lets the server add and remove executors with the load.
	// +optional
	DynamicAllocation *v1beta2.DynamicAllocation `json:"dynamicAllocation,omitempty"`

	// BatchSchedulerOptions are the session's options for the operator's batch scheduler, as
	// a SparkApplication's spec.batchSchedulerOptions: the queue its servers wait in and the
	// PriorityClass that orders them there. Not part of the Kubeflow API.
	// +optional
	BatchSchedulerOptions *BatchSchedulerOptions `json:"batchSchedulerOptions,omitempty"`
}

// BatchSchedulerOptions name where a session's servers queue. The fields mean what they mean
// in a SparkApplication's spec.batchSchedulerOptions.
type BatchSchedulerOptions struct {
	// Queue is the batch scheduler's queue the session's servers wait in (for the embedded
	// gang scheduler, a Queue of scheduling.sparkop.dev); unset, the scheduler's default.
	// +optional
	Queue *string `json:"queue,omitempty"`

	// PriorityClassName is the PriorityClass whose value orders the session among the
	// workloads of its queue; unset, that of the server's pod template, else none.
	// +optional
	PriorityClassName *string `json:"priorityClassName,omitempty"`
}

// ServerSpec is the Spark Connect server pod and the Service in front of it.
//
// +kubebuilder:validation:XValidation:rule="!has(self.service) || !has(self.service.metadata) || !has(self.service.metadata.name) || self.service.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && self.service.metadata.name.size() <= 63",message="server.service.metadata.name must be a DNS-1035 label of at most 63 characters"
type ServerSpec struct {
	SparkPodSpec `json:",inline"`

	// Service is the Service exposing the server: its name (default "<name>-server"),
	// labels, annotations and spec (type, ports, ...). The operator adds the server's ports
	// (15002 Spark Connect, 4040 UI, 7078 driver RPC, 7079 block manager) unless ports are
	// given, and always selects the server pod. Its namespace is always the SparkConnect's.
	// +optional
	Service *corev1.Service `json:"service,omitempty"`
}

// ExecutorSpec is the executors of the server.
type ExecutorSpec struct {
	SparkPodSpec `json:",inline"`

	// Instances is the number of executors to start (spark.executor.instances).
	// +kubebuilder:validation:Minimum=0
	// +optional
	Instances *int32 `json:"instances,omitempty"`
}

// SparkPodSpec is what the server and the executor pods have in common.
type SparkPodSpec struct {
	// Cores is spark.driver.cores for the server, spark.executor.cores for the executors.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Cores *int32 `json:"cores,omitempty"`

	// Memory is spark.driver.memory for the server, spark.executor.memory for the
	// executors, in Spark's format ("512m", "2g").
	// +kubebuilder:validation:Pattern=`^[0-9]+([bBkKmMgGtTpP]|[kKmMgGtTpP][bB])?$`
	// +optional
	Memory *string `json:"memory,omitempty"`

	// Template is the pod template: the server pod is created from it, and the server gives
	// it to Spark as the executor pod template (spark.kubernetes.executor.podTemplateFile).
	// Its content is not validated by the API server.
	// See https://spark.apache.org/docs/latest/running-on-kubernetes.html#pod-template.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Template *corev1.PodTemplateSpec `json:"template,omitempty"`
}

// SparkConnectStatus is what the operator observed of the server and its executors.
type SparkConnectStatus struct {
	// Conditions: ServerPodReady tells whether the server pod is ready to serve clients.
	// +patchMergeKey=type
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchMergeKey:"type" patchStrategy:"merge"`

	// State is Provisioning until the server pod is first ready, then Ready or NotReady
	// as its readiness changes; Failed when the server pod terminated or cannot be built.
	// +optional
	State SparkConnectState `json:"state,omitempty"`

	// Server is the server pod and its Service.
	// +optional
	Server SparkConnectServerStatus `json:"server,omitempty"`

	// Executors counts the executor pods by phase, in lower case ("running", "pending", ...).
	// +optional
	Executors map[string]int `json:"executors,omitempty"`

	// StartTime is when the operator first processed the SparkConnect.
	// +optional
	StartTime metav1.Time `json:"startTime,omitempty"`

	// LastUpdateTime is when the operator last changed this status.
	// +optional
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitempty"`
}

// SparkConnectServerStatus names the server pod and its Service.
type SparkConnectServerStatus struct {
	// PodName is the server pod's name.
	// +optional
	PodName string `json:"podName,omitempty"`

	// PodIP is the server pod's IP address.
	// +optional
	PodIP string `json:"podIp,omitempty"`

	// ServiceName is the name of the Service clients connect to (port 15002).
	// +optional
	ServiceName string `json:"serviceName,omitempty"`

	// SubmissionID identifies the current server: the operator records a new one before it
	// starts each server pod, which carries it (and passes it to its executors) in the label
	// sparkoperator.k8s.io/submission-id. A batch scheduler's admission is for one submission.
	// +optional
	SubmissionID string `json:"submissionID,omitempty"`

	// BatchScheduler is the batch scheduler that admitted the current server, recorded once
	// its pod is created. What that scheduler holds for the server is released through it,
	// even if the operator's default batch scheduler has changed since; empty until admitted.
	// +optional
	BatchScheduler string `json:"batchScheduler,omitempty"`
}

// SparkConnectState is the state of a SparkConnect as clients read it.
type SparkConnectState string

// The states, with the Kubeflow operator's values.
const (
	SparkConnectStateNew          SparkConnectState = ""
	SparkConnectStateProvisioning SparkConnectState = "Provisioning"
	SparkConnectStateReady        SparkConnectState = "Ready"
	SparkConnectStateNotReady     SparkConnectState = "NotReady"
	SparkConnectStateFailed       SparkConnectState = "Failed"
)

// ConditionServerPodReady is the condition type telling whether the server pod is ready.
const ConditionServerPodReady = "ServerPodReady"

// Reasons of the ServerPodReady condition. The first two are the Kubeflow operator's.
const (
	ReasonServerPodReady    = "ServerPodReady"
	ReasonServerPodNotReady = "ServerPodNotReady"
	// ReasonServerPodFailed: the server pod terminated; delete it for a new one.
	ReasonServerPodFailed = "ServerPodFailed"
	// ReasonInvalidSpec: no server pod can be built from the spec (no image, say).
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonQueued: the operator's batch scheduler holds the server back; the message says why.
	ReasonQueued = "Queued"
	// ReasonRejected: the batch scheduler can never admit the session as it is (bigger than
	// any node, or than its queue's quota); the message says why.
	ReasonRejected = "Rejected"
)
