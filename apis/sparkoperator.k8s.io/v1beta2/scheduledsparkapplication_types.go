/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConcurrencyPolicy says what to do when a scheduled run is due while the
// previous run is still going.
type ConcurrencyPolicy string

const (
	// ConcurrencyAllow starts the new run alongside the ones still running.
	ConcurrencyAllow ConcurrencyPolicy = "Allow"
	// ConcurrencyForbid skips the new run while an earlier one is still running.
	ConcurrencyForbid ConcurrencyPolicy = "Forbid"
	// ConcurrencyReplace stops the running one and starts the new run in its place.
	ConcurrencyReplace ConcurrencyPolicy = "Replace"
)

// ScheduleState is the scheduling state of a ScheduledSparkApplication.
type ScheduleState string

const (
	// ScheduleStateNew is the state of an object the operator has not processed yet.
	ScheduleStateNew ScheduleState = ""
	// ScheduleStateValidating means the operator is checking the schedule.
	ScheduleStateValidating ScheduleState = "Validating"
	// ScheduleStateScheduled means the schedule is valid and runs are being created.
	ScheduleStateScheduled ScheduleState = "Scheduled"
	// ScheduleStateFailedValidation means the schedule or time zone could not be
	// parsed; status.reason tells why.
	ScheduleStateFailedValidation ScheduleState = "FailedValidation"
)

// ScheduledSparkApplicationSpec describes a SparkApplication to create on a
// cron schedule.
type ScheduledSparkApplicationSpec struct {
	// Schedule is a cron expression (five fields, or a descriptor such as
	// "@hourly" or "@every 10m") telling when to start a run.
	Schedule string `json:"schedule"`

	// TimeZone is the time zone the schedule is read in: "Local", "UTC" or an
	// IANA name such as "Europe/Paris". Defaults to the operator's local time zone.
	// +optional
	TimeZone string `json:"timeZone,omitempty"`

	// Template is the spec of the SparkApplication created for each run.
	Template SparkApplicationSpec `json:"template"`

	// Suspend stops new runs from being started while true. Runs already
	// started are not affected. Defaults to false.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// ConcurrencyPolicy says what to do when a run is due while an earlier run
	// is still going: Allow, Forbid or Replace. Defaults to Allow.
	// +kubebuilder:validation:Enum={Allow,Forbid,Replace}
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// SuccessfulRunHistoryLimit is how many successfully finished runs are kept.
	// Older ones are deleted. Defaults to 1.
	// +kubebuilder:validation:Minimum=0
	// +optional
	SuccessfulRunHistoryLimit *int32 `json:"successfulRunHistoryLimit,omitempty"`

	// FailedRunHistoryLimit is how many failed runs are kept. Older ones are
	// deleted. Defaults to 1.
	// +kubebuilder:validation:Minimum=0
	// +optional
	FailedRunHistoryLimit *int32 `json:"failedRunHistoryLimit,omitempty"`
}

// ScheduledSparkApplicationStatus is the state of a ScheduledSparkApplication
// as last observed by the operator.
type ScheduledSparkApplicationStatus struct {
	// LastRun is when the most recent run was started.
	// +nullable
	// +optional
	LastRun metav1.Time `json:"lastRun,omitempty"`

	// NextRun is when the next run is due.
	// +nullable
	// +optional
	NextRun metav1.Time `json:"nextRun,omitempty"`

	// LastRunName is the name of the SparkApplication created for the most recent run.
	// +optional
	LastRunName string `json:"lastRunName,omitempty"`

	// PastSuccessfulRunNames are the names of the kept SparkApplications of
	// earlier runs that succeeded.
	// +optional
	PastSuccessfulRunNames []string `json:"pastSuccessfulRunNames,omitempty"`

	// PastFailedRunNames are the names of the kept SparkApplications of earlier
	// runs that failed.
	// +optional
	PastFailedRunNames []string `json:"pastFailedRunNames,omitempty"`

	// ScheduleState is the scheduling state: empty (new), Validating, Scheduled
	// or FailedValidation.
	// +optional
	ScheduleState ScheduleState `json:"scheduleState,omitempty"`

	// Reason explains the current schedule state, in particular why validation failed.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// ScheduledSparkApplication creates a new SparkApplication from a template on
// a cron schedule and keeps a bounded history of past runs.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=scheduledsparkapp
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=https://github.com/kubeflow/spark-operator/pull/1298"
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="TimeZone",type=string,JSONPath=`.spec.timeZone`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Last Run",type=date,JSONPath=`.status.lastRun`
// +kubebuilder:printcolumn:name="Last Run Name",type=string,JSONPath=`.status.lastRunName`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ScheduledSparkApplication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	// Spec is the desired schedule and the application to run.
	Spec ScheduledSparkApplicationSpec `json:"spec"`

	// Status is the observed scheduling state, maintained by the operator.
	// +optional
	Status ScheduledSparkApplicationStatus `json:"status,omitempty"`
}

// ScheduledSparkApplicationList is a list of ScheduledSparkApplication objects.
//
// +kubebuilder:object:root=true
type ScheduledSparkApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ScheduledSparkApplications in the list.
	Items []ScheduledSparkApplication `json:"items"`
}
