/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxSparkApplicationNameLength is the longest metadata.name a SparkApplication
// may have. The name is copied into label values and into the names of the
// Services created for the driver, which are limited to 63 characters.
const MaxSparkApplicationNameLength = 63

// SparkApplicationSpec is everything needed to run one Spark application: what
// to run, with which Spark version and image, and how the driver and executor
// pods are shaped. It covers what a spark-submit command line can express.
type SparkApplicationSpec struct {
	// Type is the language the application is written in: Java, Python, Scala or R.
	// Defaults to Scala when left empty by Go callers; the API server requires it.
	// +kubebuilder:validation:Enum={Java,Python,Scala,R}
	Type SparkApplicationType `json:"type"`

	// SparkVersion is the Spark version the application is built for, for
	// example "3.5.3". It is used to decide which Spark features are available.
	SparkVersion string `json:"sparkVersion"`

	// Mode is the spark-submit deploy mode: "cluster" runs the driver in its own
	// pod, "client" runs it inside the submitting process. Defaults to cluster.
	// +kubebuilder:validation:Enum={cluster,client}
	// +optional
	Mode DeployMode `json:"mode,omitempty"`

	// ProxyUser is the user to impersonate when submitting the application,
	// passed to spark-submit as --proxy-user.
	// +optional
	ProxyUser *string `json:"proxyUser,omitempty"`

	// Image is the default container image for the driver and executors. An
	// image set in spec.driver or spec.executor takes precedence.
	// +optional
	Image *string `json:"image,omitempty"`

	// ImagePullPolicy is the pull policy (Always, Never or IfNotPresent) for the
	// driver and executor images. When unset, the Kubernetes default applies.
	// +optional
	ImagePullPolicy *string `json:"imagePullPolicy,omitempty"`

	// ImagePullSecrets lists names of Secrets in the application's namespace
	// used to pull the driver and executor images.
	// +optional
	ImagePullSecrets []string `json:"imagePullSecrets,omitempty"`

	// MainClass is the fully qualified entry-point class. Only used for Java and
	// Scala applications.
	// +optional
	MainClass *string `json:"mainClass,omitempty"`

	// MainApplicationFile is the location of the application's main artifact:
	// a JAR, a Python file or an R file, e.g. local:///opt/app/app.jar or an
	// s3a://, gs:// or https:// URL.
	MainApplicationFile string `json:"mainApplicationFile"`

	// Arguments are passed to the application's main method or script, in order.
	// +optional
	Arguments []string `json:"arguments,omitempty"`

	// SparkConf holds Spark properties, each passed to spark-submit as
	// --conf key=value.
	// +optional
	SparkConf map[string]string `json:"sparkConf,omitempty"`

	// HadoopConf holds Hadoop properties. Each key is given the "spark.hadoop."
	// prefix and passed to spark-submit with --conf.
	// +optional
	HadoopConf map[string]string `json:"hadoopConf,omitempty"`

	// SparkConfigMap names a ConfigMap with Spark configuration files (such as
	// spark-defaults.conf or log4j2.properties). It is mounted into the driver and
	// executors and SPARK_CONF_DIR points at the mount.
	// +optional
	SparkConfigMap *string `json:"sparkConfigMap,omitempty"`

	// HadoopConfigMap names a ConfigMap with Hadoop configuration files (such as
	// core-site.xml). It is mounted into the driver and executors and
	// HADOOP_CONF_DIR points at the mount.
	// +optional
	HadoopConfigMap *string `json:"hadoopConfigMap,omitempty"`

	// Volumes are Kubernetes volumes that the driver and executors can mount
	// through their volumeMounts.
	// +optional
	Volumes []corev1.Volume `json:"volumes,omitempty"`

	// Driver describes the driver pod.
	Driver DriverSpec `json:"driver"`

	// Executor describes the executor pods.
	Executor ExecutorSpec `json:"executor"`

	// Deps lists extra JARs, files, Python files, archives and Maven packages
	// the application needs.
	// +optional
	Deps Dependencies `json:"deps,omitzero"`

	// RestartPolicy decides whether and when the operator reruns the
	// application after it ends. Defaults to type Never.
	// +optional
	RestartPolicy RestartPolicy `json:"restartPolicy,omitzero"`

	// NodeSelector is applied to both the driver and executor pods. Prefer the
	// nodeSelector of spec.driver and spec.executor; do not set both levels.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// FailureRetries is how many times a failed application is retried before
	// the operator gives up. Retrying is best effort, so the real number of
	// attempts may be higher.
	// +kubebuilder:validation:Minimum=0
	// +optional
	FailureRetries *int32 `json:"failureRetries,omitempty"`

	// RetryInterval is the base delay, in seconds, between submission retries.
	// +kubebuilder:validation:Minimum=0
	// +optional
	RetryInterval *int64 `json:"retryInterval,omitempty"`

	// PythonVersion is the major Python version ("2" or "3") of the image used
	// by a Python application. When unset, Spark's own default is used.
	// +kubebuilder:validation:Enum={"2","3"}
	// +optional
	PythonVersion *string `json:"pythonVersion,omitempty"`

	// MemoryOverheadFactor is the fraction of memory set aside for non-JVM use,
	// as a decimal string such as "0.2". Spark defaults to 0.10 for JVM
	// applications and 0.40 otherwise. An explicit memoryOverhead on the driver or
	// executor takes precedence.
	// +optional
	MemoryOverheadFactor *string `json:"memoryOverheadFactor,omitempty"`

	// Monitoring configures metrics collection for the driver and executors.
	// +optional
	Monitoring *MonitoringSpec `json:"monitoring,omitempty"`

	// BatchScheduler names a batch scheduler (for example volcano, yunikorn or
	// kube-scheduler) used to schedule the driver and executor pods.
	// +optional
	BatchScheduler *string `json:"batchScheduler,omitempty"`

	// BatchSchedulerOptions carries extra settings for the batch scheduler.
	// +optional
	BatchSchedulerOptions *BatchSchedulerConfiguration `json:"batchSchedulerOptions,omitempty"`

	// TimeToLiveSeconds is how long, in seconds, the SparkApplication is kept
	// after it terminates. Once it has elapsed, the operator deletes the object.
	// When unset, the object is kept until deleted by someone else.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TimeToLiveSeconds *int64 `json:"timeToLiveSeconds,omitempty"`

	// SparkUIOptions customizes the Service and Ingress that expose the Spark
	// web UI.
	// +optional
	SparkUIOptions *SparkUIConfiguration `json:"sparkUIOptions,omitempty"`

	// DriverIngressOptions exposes further driver ports, each through its own
	// Service and Ingress.
	// +optional
	DriverIngressOptions []DriverIngressConfiguration `json:"driverIngressOptions,omitempty"`

	// DynamicAllocation configures Spark dynamic allocation of executors
	// (Spark 3.0 or later on Kubernetes).
	// +optional
	DynamicAllocation *DynamicAllocation `json:"dynamicAllocation,omitempty"`

	// Suspend pauses the application when true: a not yet submitted application
	// is not submitted, and a running one has its driver and executor pods
	// deleted. Setting it back to false resumes the application by submitting it
	// again. The application itself must tolerate being stopped this way.
	// Defaults to false.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// DriverPodDisruptionBudget asks for a PodDisruptionBudget protecting the
	// driver pod from voluntary evictions (such as a node drain) while the
	// application runs. It only has an effect if the operator has the driver PDB
	// feature turned on. Defaults to false.
	// +optional
	DriverPodDisruptionBudget *bool `json:"driverPodDisruptionBudget,omitempty"`
}

// ApplicationState is the current state of an application with, for failure
// states, the reason.
type ApplicationState struct {
	// State is the application's lifecycle state, for example SUBMITTED,
	// RUNNING, COMPLETED or FAILED. The empty string means not yet processed.
	State ApplicationStateType `json:"state"`

	// ErrorMessage explains a failure state. Empty otherwise.
	// +optional
	ErrorMessage string `json:"errorMessage,omitempty"`
}

// DriverInfo records where the driver runs and how its web UI can be reached.
type DriverInfo struct {
	// WebUIServiceName is the name of the Service in front of the Spark UI.
	// +optional
	WebUIServiceName string `json:"webUIServiceName,omitempty"`

	// WebUIAddress is the in-cluster address (IP:port) of the Spark UI Service.
	// +optional
	WebUIAddress string `json:"webUIAddress,omitempty"`

	// WebUIPort is the Service port of the Spark UI.
	// +optional
	WebUIPort int32 `json:"webUIPort,omitempty"`

	// WebUIIngressName is the name of the Ingress for the Spark UI, if one was created.
	// +optional
	WebUIIngressName string `json:"webUIIngressName,omitempty"`

	// WebUIIngressAddress is the URL at which the Spark UI Ingress serves, if one was created.
	// +optional
	WebUIIngressAddress string `json:"webUIIngressAddress,omitempty"`

	// PodName is the name of the driver pod.
	// +optional
	PodName string `json:"podName,omitempty"`
}

// SparkApplicationStatus is the state of a SparkApplication as last observed
// by the operator.
type SparkApplicationStatus struct {
	// SparkApplicationID is the Spark application ID (spark.app.id) reported by
	// the driver and executor pods.
	// +optional
	SparkApplicationID string `json:"sparkApplicationId,omitempty"`

	// SubmissionID uniquely identifies the current submission of the application.
	// +optional
	SubmissionID string `json:"submissionID,omitempty"`

	// LastSubmissionAttemptTime is when the application was last submitted (or
	// a submission was last tried).
	// +nullable
	// +optional
	LastSubmissionAttemptTime metav1.Time `json:"lastSubmissionAttemptTime,omitempty"`

	// TerminationTime is when the application finished, successfully or not.
	// +nullable
	// +optional
	TerminationTime metav1.Time `json:"terminationTime,omitempty"`

	// DriverInfo describes the driver pod and its web UI.
	// +optional
	DriverInfo DriverInfo `json:"driverInfo,omitempty"`

	// AppState is the overall state of the application.
	// +optional
	AppState ApplicationState `json:"applicationState,omitempty"`

	// ExecutorState maps each executor pod name to that executor's state.
	// +optional
	ExecutorState map[string]ExecutorState `json:"executorState,omitempty"`

	// ExecutionAttempts counts the runs of the submitted application. It grows
	// with each run and is reset when the application is invalidated (its spec
	// changed).
	// +optional
	ExecutionAttempts int32 `json:"executionAttempts,omitempty"`

	// SubmissionAttempts counts the attempts to submit the application. It grows
	// with each attempt and is reset when the application is invalidated or rerun.
	// +optional
	SubmissionAttempts int32 `json:"submissionAttempts,omitempty"`

	// LastSubmittedSpecHash is a hash of the spec of the current submission, taken without
	// spec.suspend and spec.timeToLiveSeconds (changing those never reruns the application).
	// When the stored spec no longer matches it, the operator tears the run down and submits the
	// application again with the new spec. Not part of the Kubeflow API; clients may ignore it.
	// +optional
	LastSubmittedSpecHash string `json:"lastSubmittedSpecHash,omitempty"`

	// BatchScheduler is the batch scheduler that admitted the current run (submissionID),
	// recorded with the run's submission. What that scheduler holds for the run is released
	// through it when the run ends, even if spec.batchScheduler names another since; empty
	// until the run is admitted. Not part of the Kubeflow API; clients may ignore it.
	// +optional
	BatchScheduler string `json:"batchScheduler,omitempty"`

	// Conditions summarise the application's progress for tools that read conditions:
	// Submitted, Running, Completed, Failed, and Queued (held back by its batch scheduler, with
	// the scheduler's reason as message). Not part of the Kubeflow API; clients may ignore it.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Summary is what `kubectl get` shows in its Status and Waiting columns.
	// +optional
	Summary StatusSummary `json:"summary,omitempty"`
}

// StatusSummary is what `kubectl get sparkapplications` shows, derived by the operator from the
// state and the conditions at every status write. Not part of the Kubeflow API.
type StatusSummary struct {
	// State is the state as a user reads it: QUEUED while the application's batch scheduler
	// holds it back (applicationState.state stays as Kubeflow's tools know it: NEW,
	// PENDING_RERUN or RESUMING), NEW for the empty state, else applicationState.state.
	// +optional
	State string `json:"state,omitempty"`
	// Waiting is why the application waits, if it does: its batch scheduler's reason while it
	// is QUEUED, or, while SUBMITTED, why its driver does not run yet (no node can take it,
	// no scheduler picked it up, its image cannot be pulled).
	// +optional
	Waiting string `json:"waiting,omitempty"`
}

// SparkApplication runs one Apache Spark application on Kubernetes: the
// operator submits it, follows its driver and executors, and records the
// outcome in status.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=sparkapp
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=https://github.com/kubeflow/spark-operator/pull/1298"
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.summary.state`,description="the state; QUEUED while its batch scheduler holds it back"
// +kubebuilder:printcolumn:name="Attempts",type=integer,JSONPath=`.status.executionAttempts`
// +kubebuilder:printcolumn:name="Start",type=date,JSONPath=`.status.lastSubmissionAttemptTime`,description="when it was last submitted"
// +kubebuilder:printcolumn:name="Finish",type=date,JSONPath=`.status.terminationTime`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Waiting",type=string,JSONPath=`.status.summary.waiting`,description="why it waits: its batch scheduler's reason, or why its driver does not run yet"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="metadata.name must be no more than 63 characters"
type SparkApplication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	// Spec is the desired application.
	Spec SparkApplicationSpec `json:"spec"`

	// Status is the observed state of the application, maintained by the operator.
	// +optional
	Status SparkApplicationStatus `json:"status,omitempty"`
}

// SparkApplicationList is a list of SparkApplication objects.
//
// +kubebuilder:object:root=true
type SparkApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the SparkApplications in the list.
	Items []SparkApplication `json:"items"`
}
