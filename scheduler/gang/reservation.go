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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/sparkpod"
)

// AnnotationAdmission holds a workload's reservation (a Reservation in JSON). It is kept on the
// SparkApplication or SparkConnect itself: written before the workload is woken, so an operator
// that restarts finds every reservation and admits nothing twice; and deleted with the object,
// so a reservation can never outlive what it was made for (no finalizer is needed).
const AnnotationAdmission = "scheduling.sparkop.dev/admission"

// LabelQueue is set on the pods of an admitted application: the queue it was admitted from.
const LabelQueue = "scheduling.sparkop.dev/queue"

// Reservation is an admission as stored on the application or session.
type Reservation struct {
	// SubmissionID is the run the admission is for: an application's status.submissionID, a
	// session's status.server.submissionID. A rerun, or a session's next server, records a new
	// one and so needs a new admission.
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

// keepsNodes reports whether r still keeps node capacity for its members not bound yet: until
// o.ReservationTimeout after the admission (for ever when it is not positive). Its queue's
// quota is kept either way, until the run ends.
func (r Reservation) keepsNodes(o snapshotOptions) bool {
	return o.ReservationTimeout <= 0 || o.Now.Sub(r.Admitted) < o.ReservationTimeout
}

func (r Reservation) encode() string {
	data, _ := json.Marshal(r) // plain strings, numbers and a time: never fails
	return string(data)
}

// ReservationOf reads the reservation stored on a workload's object (a SparkApplication or a
// SparkConnect); ok is false when it has none or it does not read (a hand-edited annotation is
// ignored rather than trusted).
func ReservationOf(obj client.Object) (Reservation, bool) {
	v, ok := obj.GetAnnotations()[AnnotationAdmission]
	if !ok {
		return Reservation{}, false
	}
	var r Reservation
	if err := json.Unmarshal([]byte(v), &r); err != nil || r.SubmissionID == "" {
		return Reservation{}, false
	}
	return r, true
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
