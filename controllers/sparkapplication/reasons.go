/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

// The reasons of the events the controller records on a SparkApplication. Where the Kubeflow
// Spark operator records an event for the same thing, the reason is Kubeflow's, so that event
// exporters' routes and alerts written for it keep working; the conditions keep their own
// reasons (DriverRunning, …), which Kubeflow does not have.
const (
	ReasonSubmitted        = "SparkApplicationSubmitted"
	ReasonSubmissionFailed = "SparkApplicationSubmissionFailed"
	ReasonCompleted        = "SparkApplicationCompleted"
	ReasonFailed           = "SparkApplicationFailed"
	ReasonPendingRerun     = "SparkApplicationPendingRerun"
	ReasonSuspended        = "SparkApplicationSuspended"
	ReasonResuming         = "SparkApplicationResuming"
	ReasonDriverRunning    = "SparkDriverRunning"
	ReasonDriverCompleted  = "SparkDriverCompleted"
	ReasonDriverFailed     = "SparkDriverFailed"
	ReasonDriverNotFound   = "SparkDriverNotFound"
	ReasonExecutorFailed   = "SparkExecutorFailed"
)
