/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package external is the wire protocol between the operator and an external scheduler
// (spec.batchScheduler: external), and the operator's client of it. Each admission cycle that
// has applications waiting for the external scheduler POSTs a Request (the queue snapshot) to
// its URL as JSON; the scheduler answers with a Response: which of them to admit now, and where.
// The operator checks every admission with the embedded gang scheduler's fit and quota rules
// before it applies it; what fails a check stays queued, with the reason shown.
//
// The schema is docs/external-scheduler.schema.json; APIVersion names its version. A change
// that an existing scheduler could misread gets a new version.
package external

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// APIVersion is the version of the protocol this package speaks, in both directions.
const APIVersion = "scheduling.sparkop.dev/external/v1"

// Request is the queue snapshot sent to the external scheduler.
type Request struct {
	APIVersion string `json:"apiVersion"`
	// Cycle numbers the operator's admission cycles (it restarts from 1 with the operator).
	Cycle uint64    `json:"cycle"`
	Time  time.Time `json:"time"`
	// Nodes are the schedulable nodes with their free capacity: allocatable minus what bound
	// pods request and what reservations keep for members not bound yet.
	Nodes []Node `json:"nodes"`
	// Queues are the operator's Queues, with what their admitted applications use.
	Queues []Queue `json:"queues"`
	// Pending are the applications waiting for this scheduler's decision, in the order the
	// embedded gang scheduler would admit them (queue priority, priority, age).
	Pending []Pending `json:"pending"`
	// Reservations are the admitted runs that still hold capacity, whichever scheduler admitted
	// them: their nodes' free capacity already excludes it.
	Reservations []Reservation `json:"reservations"`
}

// Node is a schedulable node.
type Node struct {
	Name          string              `json:"name"`
	Labels        map[string]string   `json:"labels,omitempty"`
	Unschedulable bool                `json:"unschedulable,omitempty"`
	Allocatable   corev1.ResourceList `json:"allocatable"`
	Free          corev1.ResourceList `json:"free"`
}

// Queue is one Queue with its quota and usage.
type Queue struct {
	Name     string `json:"name"`
	Parent   string `json:"parent,omitempty"`
	Priority int32  `json:"priority,omitempty"`
	// Quota limits what the queue's applications use at once; a resource absent is not limited.
	Quota corev1.ResourceList `json:"quota,omitempty"`
	// Used is what the queue's own admitted applications use.
	Used corev1.ResourceList `json:"used,omitempty"`
}

// Workload names an application (kind SparkApplication) or a SparkConnect session (kind
// SparkConnect).
type Workload struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Pending is an application waiting for admission.
type Pending struct {
	Workload
	Queue    string    `json:"queue"`
	Priority int32     `json:"priority"`
	Created  time.Time `json:"created"`
	// Driver and Executors are its gang: one driver, and the executors it starts with.
	Driver    Member `json:"driver"`
	Executors Member `json:"executors"`
}

// Member is one role of a gang: Count pods, each requesting Requests, each allowed on
// EligibleNodes only (by node selector, required node affinity and tolerations, as worked out by
// the operator).
type Member struct {
	Count         int32               `json:"count"`
	Requests      corev1.ResourceList `json:"requests"`
	EligibleNodes []string            `json:"eligibleNodes"`
}

// Reservation is an admitted run that holds capacity.
type Reservation struct {
	Workload
	Queue string `json:"queue"`
	Placement
	Admitted time.Time `json:"admitted"`
}

// Placement puts a gang on nodes: the driver's node, and how many executors go on each node.
type Placement struct {
	Driver    string           `json:"driver"`
	Executors map[string]int32 `json:"executors,omitempty"`
}

// Response is the external scheduler's answer.
type Response struct {
	APIVersion string `json:"apiVersion"`
	// Admit are the pending applications to admit now, each with where its gang goes. They are
	// checked and applied in this order; one that fails a check is not admitted and the rest
	// are still considered.
	Admit []Admission `json:"admit,omitempty"`
	// Waiting may say, per pending application not admitted, why it waits; the application's
	// status shows it.
	Waiting []Waiting `json:"waiting,omitempty"`
}

// Admission admits one pending application on a placement.
type Admission struct {
	Workload
	Placement
}

// Waiting is the external scheduler's reason for holding an application.
type Waiting struct {
	Workload
	Reason string `json:"reason"`
}
