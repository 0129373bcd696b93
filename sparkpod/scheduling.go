/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Scheduling is what a batch scheduler decides for the pods of one role: where they may run
// and how its own scheduler recognises them. Both submitters apply it to the driver pod and to
// the executor pod template, so every pod of the admitted run carries it from its creation.
type Scheduling struct {
	// SchedulerName, when set, replaces the pods' scheduler.
	SchedulerName string
	// Labels and Annotations are added to the pods (a pod group or queue reference).
	Labels, Annotations map[string]string
	// NodeNames, when set, confines the pods to these nodes (required node affinity on
	// metadata.name, added to whatever affinity the pods already have).
	NodeNames []string
	// Tolerations are added to the pods' own.
	Tolerations []corev1.Toleration
	// SchedulingGates are added to the pods; the scheduler that set them removes them.
	SchedulingGates []corev1.PodSchedulingGate
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

// SchedulerNames are the schedulers chosen for the driver and the executors, empty where none
// was chosen: the submitters pass them to Spark as properties, which Spark sets over the pod
// templates' (sparkconf.Options.SchedulerNames).
func (r RoleScheduling) SchedulerNames() [2]string {
	return [2]string{r.Driver.SchedulerName, r.Executor.SchedulerName}
}

// IsZero reports whether s changes nothing.
func (s Scheduling) IsZero() bool {
	return s.SchedulerName == "" && len(s.Labels) == 0 && len(s.Annotations) == 0 &&
		len(s.NodeNames) == 0 && len(s.Tolerations) == 0 && len(s.SchedulingGates) == 0
}

// Apply writes s onto a pod's metadata and spec. Applying it twice changes nothing more.
func (s Scheduling) Apply(meta *metav1.ObjectMeta, spec *corev1.PodSpec) {
	if s.SchedulerName != "" {
		spec.SchedulerName = s.SchedulerName
	}
	if len(s.Labels) > 0 && meta.Labels == nil {
		meta.Labels = map[string]string{}
	}
	for k, v := range s.Labels {
		meta.Labels[k] = v
	}
	if len(s.Annotations) > 0 && meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	for k, v := range s.Annotations {
		meta.Annotations[k] = v
	}
	for _, t := range s.Tolerations {
		if !containsToleration(spec.Tolerations, t) {
			spec.Tolerations = append(spec.Tolerations, t)
		}
	}
	for _, g := range s.SchedulingGates {
		if !containsGate(spec.SchedulingGates, g.Name) {
			spec.SchedulingGates = append(spec.SchedulingGates, g)
		}
	}
	if len(s.NodeNames) > 0 {
		requireNodeNames(spec, s.NodeNames)
	}
}

// requireNodeNames confines a pod to nodes: node selector terms are ORed and a term's
// requirements ANDed, and a metadata.name field requirement takes one value only, so each
// existing term becomes one term per node. A term already naming a node is left alone, so
// applying twice changes nothing more.
func requireNodeNames(spec *corev1.PodSpec, names []string) {
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	sel := na.RequiredDuringSchedulingIgnoredDuringExecution
	if len(sel.NodeSelectorTerms) == 0 {
		sel.NodeSelectorTerms = []corev1.NodeSelectorTerm{{}}
	}
	var terms []corev1.NodeSelectorTerm
	for _, t := range sel.NodeSelectorTerms {
		if slices.ContainsFunc(t.MatchFields, func(r corev1.NodeSelectorRequirement) bool { return r.Key == metav1.ObjectNameField }) {
			terms = append(terms, t)
			continue
		}
		for _, name := range names {
			c := t.DeepCopy()
			c.MatchFields = append(c.MatchFields, corev1.NodeSelectorRequirement{
				Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{name},
			})
			terms = append(terms, *c)
		}
	}
	sel.NodeSelectorTerms = terms
}

func containsToleration(list []corev1.Toleration, t corev1.Toleration) bool {
	for _, have := range list {
		if have.MatchToleration(&t) && have.Value == t.Value && have.TolerationSeconds == t.TolerationSeconds {
			return true
		}
	}
	return false
}

func containsGate(list []corev1.PodSchedulingGate, name string) bool {
	for _, g := range list {
		if g.Name == name {
			return true
		}
	}
	return false
}
