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

// DefaultQueueName is the queue of gang-scheduled applications that name none
// (spec.batchSchedulerOptions.queue unset). The operator creates it if it is missing.
const DefaultQueueName = "default"

// QueueConditionActive is the condition type saying whether a queue admits applications: it
// is False, with a reason, when its parent does not exist or its parents form a cycle.
const QueueConditionActive = "Active"

// Queue is a line of gang-scheduled Spark applications (spec.batchScheduler: gang) that share
// a quota. An application is admitted from its queue only when the whole gang (driver plus
// initial executors) fits within the queue's quota and every ancestor's, and on the nodes now.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=sparkqueue;sq
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Parent",type=string,JSONPath=`.spec.parent`
// +kubebuilder:printcolumn:name="Priority",type=integer,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="CPU Quota",type=string,JSONPath=`.spec.quota.cpu`,description="cpu quota (empty: not limited by this queue)"
// +kubebuilder:printcolumn:name="Memory Quota",type=string,JSONPath=`.spec.quota.memory`,description="memory quota (empty: not limited by this queue)"
// +kubebuilder:printcolumn:name="CPU Admitted",type=string,JSONPath=`.status.admitted.cpu`,description="cpu used by admitted applications",priority=1
// +kubebuilder:printcolumn:name="Memory Admitted",type=string,JSONPath=`.status.admitted.memory`,description="memory used by admitted applications",priority=1
// +kubebuilder:printcolumn:name="Admitted",type=integer,JSONPath=`.status.admittedApplications`,description="applications admitted and holding quota"
// +kubebuilder:printcolumn:name="Pending",type=integer,JSONPath=`.status.pendingApplications`,description="applications waiting for admission"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(self.spec.parent) || self.spec.parent != self.metadata.name",message="spec.parent: a queue cannot be its own parent"
type Queue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:default={}
	Spec   QueueSpec   `json:"spec,omitempty"`
	Status QueueStatus `json:"status,omitempty"`
}

// QueueSpec is a queue's quota, priority and place in the queue hierarchy.
type QueueSpec struct {
	// Parent names the queue this one belongs to. What a queue's applications use counts
	// against its parent's quota too (and the parent's parent's), so a child never exceeds its
	// parent. Unset: a top-level queue.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Parent string `json:"parent,omitempty"`

	// Priority orders queues: when capacity frees, the waiting applications of higher-priority
	// queues are considered first. Within a queue, applications are ordered by their own
	// priority (the value of spec.driver.priorityClassName), then by creation time.
	// +optional
	// +kubebuilder:default=0
	Priority int32 `json:"priority,omitempty"`

	// Quota is the most the queue's admitted applications (with its children's) may request at
	// once, per resource: cpu, memory, nvidia.com/gpu or any extended resource, and pods. A
	// resource not listed is not limited by this queue (its parent's quota may still limit
	// it). An application whose whole gang is bigger than this quota is rejected.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(r, type(self[r]) == int ? self[r] >= 0 : !self[r].startsWith('-'))",message="spec.quota: every quantity must be zero or more"
	Quota corev1.ResourceList `json:"quota,omitempty"`

	// Borrowing says whether, and how far, the queue's applications may use its parent's
	// unused quota beyond this queue's own. By default a child queue may borrow all of it;
	// siblings borrow first come, first served in admission order. It has no effect on a
	// top-level queue.
	// +optional
	Borrowing *Borrowing `json:"borrowing,omitempty"`
}

// BorrowingPolicy says whether a queue may use its parent's unused quota.
// +kubebuilder:validation:Enum=Allowed;Never
type BorrowingPolicy string

const (
	// BorrowingAllowed lets a queue use its parent's unused quota beyond its own, up to Limit.
	BorrowingAllowed BorrowingPolicy = "Allowed"
	// BorrowingNever keeps a queue within its own quota.
	BorrowingNever BorrowingPolicy = "Never"
)

// Borrowing is how far a child queue may go beyond its own quota into its parent's unused
// quota.
// +kubebuilder:validation:XValidation:rule="self.policy != 'Never' || !has(self.limit)",message="spec.borrowing.limit cannot be set when spec.borrowing.policy is Never"
type Borrowing struct {
	// Policy is Allowed (the default) or Never.
	// +optional
	// +kubebuilder:default=Allowed
	Policy BorrowingPolicy `json:"policy,omitempty"`

	// Limit is, per resource, the most the queue may use beyond its own quota. A resource not
	// listed may be borrowed up to all the parent's unused quota. For a resource the queue
	// has no quota for, it has nothing to borrow: only the parent's quota limits it.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(r, type(self[r]) == int ? self[r] >= 0 : !self[r].startsWith('-'))",message="spec.borrowing.limit: every quantity must be zero or more"
	Limit corev1.ResourceList `json:"limit,omitempty"`
}

// QueueStatus is what the gang scheduler last observed of a queue.
type QueueStatus struct {
	// Admitted is what the queue's own admitted applications request in total (their whole
	// gangs), per resource. Children's usage is shown on the children.
	// +optional
	Admitted corev1.ResourceList `json:"admitted,omitempty"`

	// AdmittedApplications counts the queue's applications admitted and holding quota.
	// +optional
	AdmittedApplications int32 `json:"admittedApplications"`

	// PendingApplications counts the queue's applications waiting for admission.
	// +optional
	PendingApplications int32 `json:"pendingApplications"`

	// Pending lists the first waiting applications ("namespace/name") in the order they will
	// be considered for admission.
	// +optional
	// +listType=atomic
	Pending []string `json:"pending,omitempty"`

	// Conditions: Active says whether the queue admits applications.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// QueueList is a list of Queues.
// +kubebuilder:object:root=true
type QueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Queue `json:"items"`
}
