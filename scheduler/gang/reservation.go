/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"encoding/json"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/sparkpod"
)

// AnnotationAdmission holds an application's reservation (a Reservation in JSON). It is kept
// on the application itself: written before the application is woken, so an operator that
// restarts finds every reservation and admits nothing twice; and deleted with the application,
// so a reservation can never outlive what it was made for (no finalizer is needed).
const AnnotationAdmission = "scheduling.sparkop.dev/admission"

// LabelQueue is set on the pods of an admitted application: the queue it was admitted from.
const LabelQueue = "scheduling.sparkop.dev/queue"

// Reservation is an admission as stored on the application.
type Reservation struct {
	// SubmissionID is the submission (status.submissionID) the admission is for: a rerun
	// records a new submission and so needs a new admission.
	SubmissionID string `json:"submissionID"`
	Queue        string `json:"queue"`
	// Driver is the node planned for the driver; Executors the executors planned per node.
	Driver    string           `json:"driver"`
	Executors map[string]int32 `json:"executors,omitempty"`
	// Admitted is when the admission was made; node reservations of members still unbound
	// after the reservation timeout stop counting.
	Admitted time.Time `json:"admitted"`
}

func newReservation(submissionID string, a Admission, now time.Time) Reservation {
	return Reservation{SubmissionID: submissionID, Queue: a.Queue, Driver: a.Driver,
		Executors: maps.Clone(a.Executors), Admitted: now.UTC().Truncate(time.Second)}
}

// Admission is the reservation as the decision core sees it.
func (r Reservation) Admission() *Admission {
	return &Admission{Queue: r.Queue, Driver: r.Driver, Executors: maps.Clone(r.Executors)}
}

func (r Reservation) encode() string {
	data, _ := json.Marshal(r) // plain strings, numbers and a time: never fails
	return string(data)
}

// ReservationOf reads app's stored reservation; ok is false when it has none or it does not
// read (a hand-edited annotation is ignored rather than trusted).
func ReservationOf(app *v1beta2.SparkApplication) (Reservation, bool) {
	v, ok := app.Annotations[AnnotationAdmission]
	if !ok {
		return Reservation{}, false
	}
	var r Reservation
	if err := json.Unmarshal([]byte(v), &r); err != nil || r.SubmissionID == "" {
		return Reservation{}, false
	}
	return r, true
}

// liveReservation returns app's reservation if it still holds: made for the current
// submission of an application whose run has not ended, been preempted, suspended or deleted.
// A reservation that no longer holds counts for nothing, whether or not Release has removed it
// yet; so capacity is freed on every way out even before the controller's release (a
// preempted application's, from the cycle that preempted it: the preemptor was admitted into
// that room).
func liveReservation(app *v1beta2.SparkApplication) (Reservation, bool) {
	r, ok := ReservationOf(app)
	if !ok || r.SubmissionID != app.Status.SubmissionID || !app.DeletionTimestamp.IsZero() || app.IsSuspended() || preempted(app) {
		return Reservation{}, false
	}
	switch app.Status.AppState.State {
	case v1beta2.ApplicationStateNew, v1beta2.ApplicationStatePendingRerun, v1beta2.ApplicationStateResuming,
		v1beta2.ApplicationStateSubmitted, v1beta2.ApplicationStateRunning, v1beta2.ApplicationStateUnknown:
		return r, true
	}
	return Reservation{}, false
}

// awaitingAdmission reports whether app waits for a decision: a submission is recorded and
// nothing has run it yet, and it is neither suspended, preempted (it comes back with a new
// submission) nor being deleted.
func awaitingAdmission(app *v1beta2.SparkApplication) bool {
	switch app.Status.AppState.State {
	case v1beta2.ApplicationStateNew, v1beta2.ApplicationStatePendingRerun, v1beta2.ApplicationStateResuming:
	default:
		return false
	}
	return app.Status.SubmissionID != "" && !app.IsSuspended() && app.DeletionTimestamp.IsZero() && !preempted(app)
}

// preempted reports whether app's current submission was preempted (marked with
// scheduler.AnnotationPreempted) and is on its way out.
func preempted(app *v1beta2.SparkApplication) bool {
	id := app.Status.SubmissionID
	return id != "" && app.Annotations[scheduler.AnnotationPreempted] == id
}

// Pods turns a reservation into pod settings: the driver on its planned node, the executors
// gated until the gang scheduler gives each its node (GateExecutor), and every pod labelled
// with the queue. The executor template names no nodes: the gate alone keeps executors back,
// and each one's node is set as it is released, a planned one or, beyond the plan (dynamic
// allocation), any node its own placement rules allow.
func (r Reservation) Pods() sparkpod.RoleScheduling {
	labels := map[string]string{LabelQueue: r.Queue}
	return sparkpod.RoleScheduling{
		Driver: sparkpod.Scheduling{Labels: labels, NodeNames: []string{r.Driver}},
		Executor: sparkpod.Scheduling{Labels: maps.Clone(labels),
			SchedulingGates: []corev1.PodSchedulingGate{{Name: GateExecutor}}},
	}
}
