/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package v1beta2

// ApplicationStateType is the lifecycle state of a SparkApplication.
type ApplicationStateType string

const (
	// ApplicationStateNew is the state of an application not processed yet.
	ApplicationStateNew ApplicationStateType = ""
	// ApplicationStateSubmitted means spark-submit succeeded and the driver is starting.
	ApplicationStateSubmitted ApplicationStateType = "SUBMITTED"
	// ApplicationStateRunning means the driver is running.
	ApplicationStateRunning ApplicationStateType = "RUNNING"
	// ApplicationStateCompleted means the application finished successfully. Terminal.
	ApplicationStateCompleted ApplicationStateType = "COMPLETED"
	// ApplicationStateFailed means the application failed and will not be retried. Terminal.
	ApplicationStateFailed ApplicationStateType = "FAILED"
	// ApplicationStateFailedSubmission means spark-submit failed; the submission
	// may be retried according to the restart policy.
	ApplicationStateFailedSubmission ApplicationStateType = "SUBMISSION_FAILED"
	// ApplicationStatePendingRerun means the application is waiting to be
	// submitted again, after a retry was decided or its spec changed.
	ApplicationStatePendingRerun ApplicationStateType = "PENDING_RERUN"
	// ApplicationStateInvalidating means the spec changed while the application
	// was running and the old run is being torn down.
	ApplicationStateInvalidating ApplicationStateType = "INVALIDATING"
	// ApplicationStateSucceeding means the driver finished successfully and the
	// operator is deciding whether to rerun (restart policy Always).
	ApplicationStateSucceeding ApplicationStateType = "SUCCEEDING"
	// ApplicationStateFailing means the driver failed and the operator is
	// deciding whether to retry.
	ApplicationStateFailing ApplicationStateType = "FAILING"
	// ApplicationStateUnknown means the driver's state cannot be determined,
	// for example because its pod is gone.
	ApplicationStateUnknown ApplicationStateType = "UNKNOWN"
	// ApplicationStateSuspending means spec.suspend was set and the
	// application's pods are being deleted.
	ApplicationStateSuspending ApplicationStateType = "SUSPENDING"
	// ApplicationStateSuspended means the application is suspended and has no pods.
	ApplicationStateSuspended ApplicationStateType = "SUSPENDED"
	// ApplicationStateResuming means spec.suspend was cleared and the
	// application is about to be submitted again.
	ApplicationStateResuming ApplicationStateType = "RESUMING"
)

// IsTerminal reports whether s is a final state, COMPLETED or FAILED, from
// which the operator does not move the application any further.
func (s ApplicationStateType) IsTerminal() bool {
	return s == ApplicationStateCompleted || s == ApplicationStateFailed
}

// DriverState is the state of a driver pod, derived from its phase.
type DriverState string

const (
	// DriverStatePending means the driver pod is not running yet.
	DriverStatePending DriverState = "PENDING"
	// DriverStateRunning means the driver pod is running.
	DriverStateRunning DriverState = "RUNNING"
	// DriverStateCompleted means the driver pod exited successfully.
	DriverStateCompleted DriverState = "COMPLETED"
	// DriverStateFailed means the driver pod failed.
	DriverStateFailed DriverState = "FAILED"
	// DriverStateUnknown means the driver pod's state cannot be determined.
	DriverStateUnknown DriverState = "UNKNOWN"
)

// IsTerminal reports whether s is COMPLETED or FAILED.
func (s DriverState) IsTerminal() bool {
	return s == DriverStateCompleted || s == DriverStateFailed
}

// ExecutorState is the state of an executor pod, derived from its phase.
type ExecutorState string

const (
	// ExecutorStatePending means the executor pod is not running yet.
	ExecutorStatePending ExecutorState = "PENDING"
	// ExecutorStateRunning means the executor pod is running.
	ExecutorStateRunning ExecutorState = "RUNNING"
	// ExecutorStateCompleted means the executor pod exited successfully.
	ExecutorStateCompleted ExecutorState = "COMPLETED"
	// ExecutorStateFailed means the executor pod failed.
	ExecutorStateFailed ExecutorState = "FAILED"
	// ExecutorStateUnknown means the executor pod's state cannot be determined.
	ExecutorStateUnknown ExecutorState = "UNKNOWN"
)

// IsTerminal reports whether s is COMPLETED or FAILED.
func (s ExecutorState) IsTerminal() bool {
	return s == ExecutorStateCompleted || s == ExecutorStateFailed
}
