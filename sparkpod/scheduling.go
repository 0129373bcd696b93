/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/sparkconf"
)

// Scheduling is what a batch scheduler decides for the pods of one role: where they may run
// and how its own scheduler recognises them. Both submitters apply it to the driver pod and to
// the executor pod template, and the SparkConnect controller to the server pod and its executor
// template, so every pod of the admitted run carries it from its creation. It wins over the
// spec and over Spark (precedence.go), and the webhook leaves it in place.
type Scheduling struct {
	// SchedulerName, when set, replaces the pods' scheduler.
	SchedulerName string
	// PriorityClassName, when set, replaces the pods' priority class.
	PriorityClassName string
	// Labels and Annotations are set on the pods (a pod group or queue reference).
	Labels, Annotations map[string]string
	// NodeSelector entries are set over the pods' own.
	NodeSelector map[string]string
	// NodeNames, when set, confines the pods to these nodes (required node affinity on
	// metadata.name, combined with whatever affinity the pods have).
	NodeNames []string
	// Affinity is combined with the pods' own so that both hold (AndAffinity).
	Affinity *corev1.Affinity
	// Tolerations are added to the pods' own.
	Tolerations []corev1.Toleration
	// SchedulingGates are added to the pods; the scheduler that set them removes them.
	SchedulingGates []corev1.PodSchedulingGate
	// SchedulingGroup, when set, is the pods' spec.schedulingGroup (Kubernetes 1.37's
	// GenericWorkload: the PodGroup the pods are scheduled with).
	SchedulingGroup *corev1.PodSchedulingGroup
}

// RoleScheduling is a batch scheduler's decision for each role of an application.
type RoleScheduling struct {
	Driver, Executor Scheduling
}

// For returns the settings of role.
func (r RoleScheduling) For(role Role) Scheduling {
	if role == RoleDriver {
		return r.Driver
	}
	return r.Executor
}

// SparkDecisions are the parts of the decision that Spark sets from its properties over the pod
// templates (scheduler name, node selector): the submitters pass them to Spark as properties,
// last, so that they win there as well.
func (r RoleScheduling) SparkDecisions() [2]sparkconf.Decided {
	return [2]sparkconf.Decided{r.Driver.sparkDecided(), r.Executor.sparkDecided()}
}

func (s Scheduling) sparkDecided() sparkconf.Decided {
	return sparkconf.Decided{SchedulerName: s.SchedulerName, NodeSelector: s.NodeSelector}
}

// IsZero reports whether s changes nothing.
func (s Scheduling) IsZero() bool {
	return s.SchedulerName == "" && s.PriorityClassName == "" && len(s.Labels) == 0 && len(s.Annotations) == 0 &&
		len(s.NodeSelector) == 0 && len(s.NodeNames) == 0 && s.Affinity == nil && len(s.Tolerations) == 0 &&
		len(s.SchedulingGates) == 0 && s.SchedulingGroup == nil
}

// Apply writes s onto a pod's metadata and spec. Applying it twice changes nothing more.
func (s Scheduling) Apply(meta *metav1.ObjectMeta, spec *corev1.PodSpec) {
	if s.SchedulerName != "" {
		spec.SchedulerName = s.SchedulerName
	}
	if s.PriorityClassName != "" && spec.PriorityClassName != s.PriorityClassName {
		setPriorityClass(spec, s.PriorityClassName)
	}
	meta.Labels = setAll(meta.Labels, s.Labels)
	meta.Annotations = setAll(meta.Annotations, s.Annotations)
	spec.NodeSelector = setAll(spec.NodeSelector, s.NodeSelector)
	spec.Tolerations = union(spec.Tolerations, s.Tolerations)
	for _, g := range s.SchedulingGates {
		if !slices.ContainsFunc(spec.SchedulingGates, func(have corev1.PodSchedulingGate) bool { return have.Name == g.Name }) {
			spec.SchedulingGates = append(spec.SchedulingGates, g)
		}
	}
	spec.Affinity = AndAffinity(spec.Affinity, s.Affinity)
	RequireNodes(spec, s.NodeNames...)
	if s.SchedulingGroup != nil {
		spec.SchedulingGroup = s.SchedulingGroup.DeepCopy()
	}
}

// setAll sets every entry of add in m, allocating m when there is something to set.
func setAll[M ~map[K]V, K comparable, V any](m, add M) M {
	if len(add) > 0 && m == nil {
		m = make(M, len(add))
	}
	maps.Copy(m, add)
	return m
}

// setPriorityClass names the pod's priority class. The Priority admission plugin resolves
// spec.priority from the class before the webhook runs; a value left from another class would
// contradict the new one, so it is cleared.
func setPriorityClass(spec *corev1.PodSpec, name string) {
	spec.PriorityClassName = name
	spec.Priority = nil
}
