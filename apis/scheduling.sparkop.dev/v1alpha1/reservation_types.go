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
)

// Roles of a reservation's members.
const (
	MemberRoleDriver   = "driver"
	MemberRoleExecutor = "executor"
)

// How a reservation's room is kept from other pods (ReservationSpec.Enforcement).
const (
	// EnforcementAdvisory: not kept; other pods may take it.
	EnforcementAdvisory = "advisory"
	// EnforcementPlaceholders: placeholder pods hold it.
	EnforcementPlaceholders = "placeholders"
	// EnforcementPlugin: the pod scheduler holds it (spark-scheduler's SparkReservations
	// plugin, which honours only reservations that say so).
	EnforcementPlugin = "plugin"
)

// ConditionHeld is the condition the pod scheduler that holds a reservation's room sets, true,
// once it holds it (spark-scheduler's SparkReservations plugin, for the generation it read): the
// gang scheduler starts a plugin-enforced run's driver only then, so that no pod the pod
// scheduler placed before it knew the reservation is left in the planned room.
const ConditionHeld = "Held"

// Reservation is the room the gang scheduler admitted one run of a Spark application or
// session into: for each member of its gang (the driver, or a session's server, and the initial
// executors) the node planned for it and what it requests there. It is owned by the
// application or session, so it goes with it (the garbage collector deletes it even while the
// operator is down), and there is one per workload: a new run replaces it. The gang scheduler
// writes it before the run starts and rebuilds its state from it after a restart; any other
// program may read it to honour the plan.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=sparkreservation;sres
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Queue",type=string,JSONPath=`.spec.queue`
// +kubebuilder:printcolumn:name="Workload",type=string,JSONPath=`.spec.workload.name`,priority=1
// +kubebuilder:printcolumn:name="Run",type=string,JSONPath=`.spec.run`,priority=1
// +kubebuilder:printcolumn:name="Nodes",type=string,JSONPath=`.status.nodes`,description="the nodes planned for its members"
// +kubebuilder:printcolumn:name="Bound",type=string,JSONPath=`.status.bound`,description="members bound to their node, of all members"
// +kubebuilder:printcolumn:name="Enforcement",type=string,JSONPath=`.spec.enforcement`,priority=1
// +kubebuilder:printcolumn:name="Held",type=string,JSONPath=`.status.conditions[?(@.type=="Held")].status`,description="whether the pod scheduler holds the room (plugin enforcement)",priority=1
// +kubebuilder:printcolumn:name="Placeholders",type=integer,JSONPath=`.status.placeholders`,description="placeholder pods holding room for members not created yet",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Reservation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ReservationSpec   `json:"spec"`
	Status ReservationStatus `json:"status,omitempty"`
}

// ReservationSpec is the plan of one admitted run.
type ReservationSpec struct {
	// Workload is the application or session the reservation is for (also its owner).
	Workload WorkloadReference `json:"workload"`
	// Queue is the queue the run was admitted from; its quota stays taken until the run ends.
	// +kubebuilder:validation:MinLength=1
	Queue string `json:"queue"`
	// Run is the run admitted: an application's status.submissionID, a session's
	// status.server.submissionID. A reservation for another run than the workload's current
	// one holds nothing.
	// +kubebuilder:validation:MinLength=1
	Run string `json:"run"`
	// Enforcement is how the room is kept from pods the gang scheduler did not admit, as the
	// operator's --gang-enforcement was when the run was admitted: advisory (not kept),
	// placeholders (placeholder pods hold it) or plugin (the pod scheduler holds it). A
	// scheduler plugin that honours reservations honours those that say plugin, and no
	// others: the room of the others is held by placeholders, or by nothing.
	// +optional
	// +kubebuilder:validation:Enum=advisory;placeholders;plugin
	Enforcement string `json:"enforcement,omitempty"`
	// PriorityClassName is the workload's priority class, which its placeholder pods take.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// Admitted is when the run was admitted: node room planned for a member still unbound after
	// the gang scheduler's reservation timeout stops being kept.
	Admitted metav1.Time `json:"admitted"`
	// Members are the gang: the driver first, then the executors in the order of their
	// executor ids (the executor of id i takes the i-th).
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	Members []ReservationMember `json:"members"`
}

// WorkloadReference names a reservation's workload in the reservation's namespace.
type WorkloadReference struct {
	// Kind is SparkApplication or SparkConnect.
	// +kubebuilder:validation:Enum=SparkApplication;SparkConnect
	Kind string `json:"kind"`
	// Name is the workload's name.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// ReservationMember is one pod of the gang: where it is planned and what it requests there.
type ReservationMember struct {
	// Name identifies the member within the reservation: driver, executor-1, executor-2, ...
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Role is driver (a session's server too) or executor.
	// +kubebuilder:validation:Enum=driver;executor
	Role string `json:"role"`
	// Node is the node planned for the member.
	// +kubebuilder:validation:MinLength=1
	Node string `json:"node"`
	// Requests is what the member's pod requests of its node.
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`
}

// ReservationStatus is what the gang scheduler last observed of a reservation's members.
type ReservationStatus struct {
	// Nodes lists the nodes planned for the members, comma-separated, for reading.
	// +optional
	Nodes string `json:"nodes,omitempty"`
	// Bound reads "bound/total": members whose pod is on (or on its way to) a node, of all.
	// +optional
	Bound string `json:"bound,omitempty"`
	// BoundMembers names the members whose pod is bound, or let go onto its planned node.
	// +optional
	// +listType=set
	BoundMembers []string `json:"boundMembers,omitempty"`
	// Placeholders is how many placeholder pods hold room for members not created yet (with
	// the placeholders enforcement).
	// +optional
	Placeholders int32 `json:"placeholders,omitempty"`
	// Conditions: Held (ConditionHeld), written by the pod scheduler that holds the room.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true

// ReservationList is a list of Reservations.
type ReservationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Reservation `json:"items"`
}
