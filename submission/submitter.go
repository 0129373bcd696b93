/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package submission starts SparkApplications: it turns a SparkApplication into a running
// driver. Submitters do the work (natively in Go, or through spark-submit); a bounded worker
// pool runs them, apart from the reconcilers, so slow submissions never delay status updates.
package submission

import (
	"context"
	"fmt"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
)

// Mode names a submitter.
type Mode string

const (
	// ModeNative builds the driver pod, its ConfigMap and Service in Go, as spark-submit would.
	ModeNative Mode = "native"
	// ModeSparkSubmit runs the real spark-submit.
	ModeSparkSubmit Mode = "spark-submit"
)

// ParseMode accepts the names of the submitters.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeNative, ModeSparkSubmit:
		return m, nil
	}
	return "", fmt.Errorf("unknown submission mode %q: want %q or %q", s, ModeNative, ModeSparkSubmit)
}

// Attempt identifies one submission of an application. The controller records it in the
// application's status before anything is created, so that a submitter interrupted half-way
// (the operator killed) can be resumed without starting a second driver.
type Attempt struct {
	// SubmissionID is status.submissionID; it labels every pod of this attempt
	// (v1beta2.LabelSubmissionID).
	SubmissionID string
	// DriverPodName is the deterministic driver pod name (app.DriverPodName()).
	DriverPodName string
	// Scheduling is the batch scheduler's decision for the pods of this attempt: both
	// submitters apply it to the driver pod and to the executor pod template.
	Scheduling sparkpod.RoleScheduling
}

// Result is what a successful submission reports back for the status.
type Result struct {
	// SparkApplicationID is Spark's application ID (spark.app.id, the spark-app-selector label).
	SparkApplicationID string
	// DriverPodName is the name of the driver pod that was created (or found).
	DriverPodName string
}

// Submitter creates the driver of one attempt of a SparkApplication.
//
// Submit must be idempotent per attempt: if the driver pod of the attempt already exists and
// carries the attempt's submission ID (an operator stopped half-way), it creates no other
// driver; it completes what the attempt still lacks (the driver's ConfigMaps, Service) where it
// can, and reports success. If a driver pod of that name exists for another attempt, it
// returns an error and creates nothing.
// The application passed in is already defaulted; Submit must not modify it.
type Submitter interface {
	Submit(ctx context.Context, app *v1beta2.SparkApplication, attempt Attempt) (Result, error)
}

// Error is a submission failure that the user can act on (a rejected spec, spark-submit's own
// complaint); its message goes into the application's status as it is.
type Error struct {
	Message string
}

func (e *Error) Error() string { return e.Message }
