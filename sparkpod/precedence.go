/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

// Precedence: who wins when the spec, a batch scheduler and Spark say different things about a
// pod. Every path that writes a pod (the native submitter, the spark-submit pod templates, the
// mutating webhook, the SparkConnect server) follows this one rule, written here and in
// docs/webhook.md.
//
//  1. A batch scheduler's decision (Scheduling) wins. Its scheduler name and priority class
//     replace the pod's; its labels, annotations and node selector entries are set over the
//     pod's; its tolerations, scheduling gates and required affinity are added to the pod's, and
//     required affinities are combined so that both hold (AndAffinity): a planned node and the
//     user's zone rule are both required, neither replaces the other.
//  2. The spec's dedicated fields (spec.driver.*, spec.executor.*, spec.nodeSelector) come
//     next. They win over the role's pod template and over what Spark sets from the user's
//     sparkConf: single values replace, structs (security contexts, DNS config, lifecycle) are
//     laid over field by field (overlay), lists and maps are added to, and affinities combine
//     as in 1.
//  3. The pod template and Spark's own settings are the base.
//
// The webhook sees a pod that already carries 1 and 2 (the submitters apply both when they
// build it), so it only adds what the pod lacks (Customise): it never replaces a scheduler
// name, priority class or node selector entry the pod has, and it combines affinities. Applying
// it twice, or to a pod built by a submitter, changes nothing.

import (
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AndAffinity returns an affinity that requires what have and add each require, and prefers
// what either prefers. Required node selector terms are ORed within one selector, so the two
// selectors combine term by term (each term of have with each term of add); pod affinity and
// anti-affinity terms must all hold already, so add's are appended. When have already requires
// everything add does, have is returned unchanged, so combining twice changes nothing. Neither
// argument is modified.
func AndAffinity(have, add *corev1.Affinity) *corev1.Affinity {
	if add == nil {
		return have
	}
	if have == nil {
		return add.DeepCopy()
	}
	out := have.DeepCopy()
	if na := add.NodeAffinity; na != nil {
		if out.NodeAffinity == nil {
			out.NodeAffinity = &corev1.NodeAffinity{}
		}
		out.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = andNodeSelector(
			out.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution, na.RequiredDuringSchedulingIgnoredDuringExecution)
		out.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = union(
			out.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution, na.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if pa := add.PodAffinity; pa != nil {
		if out.PodAffinity == nil {
			out.PodAffinity = &corev1.PodAffinity{}
		}
		out.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = union(
			out.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, pa.RequiredDuringSchedulingIgnoredDuringExecution)
		out.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = union(
			out.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if pa := add.PodAntiAffinity; pa != nil {
		if out.PodAntiAffinity == nil {
			out.PodAntiAffinity = &corev1.PodAntiAffinity{}
		}
		out.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = union(
			out.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, pa.RequiredDuringSchedulingIgnoredDuringExecution)
		out.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = union(
			out.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	return out
}

// RequireNodes confines a pod to the named nodes (a required node affinity on metadata.name),
// on top of whatever affinity it has. With one node, every existing term gains one requirement
// and no term is added: the only change Kubernetes allows to a scheduling-gated pod's affinity.
func RequireNodes(spec *corev1.PodSpec, names ...string) {
	if len(names) == 0 {
		return
	}
	sel := &corev1.NodeSelector{}
	for _, name := range names {
		sel.NodeSelectorTerms = append(sel.NodeSelectorTerms, corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{name},
		}}})
	}
	spec.Affinity = AndAffinity(spec.Affinity, &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: sel}})
}

// andNodeSelector is the selector matching the nodes both match. A nil or termless selector
// requires nothing.
func andNodeSelector(have, add *corev1.NodeSelector) *corev1.NodeSelector {
	if add == nil || len(add.NodeSelectorTerms) == 0 {
		return have
	}
	if have == nil || len(have.NodeSelectorTerms) == 0 {
		return add.DeepCopy()
	}
	if implies(have, add) {
		return have
	}
	out := &corev1.NodeSelector{}
	for _, h := range have.NodeSelectorTerms {
		for _, a := range add.NodeSelectorTerms {
			t := h.DeepCopy()
			t.MatchExpressions = union(t.MatchExpressions, a.MatchExpressions)
			t.MatchFields = union(t.MatchFields, a.MatchFields)
			out.NodeSelectorTerms = append(out.NodeSelectorTerms, *t)
		}
	}
	return out
}

// implies reports whether every node have matches is matched by add as well: each of have's
// terms contains every requirement of one of add's terms.
func implies(have, add *corev1.NodeSelector) bool {
	for _, h := range have.NodeSelectorTerms {
		if !slices.ContainsFunc(add.NodeSelectorTerms, func(a corev1.NodeSelectorTerm) bool {
			return subset(a.MatchExpressions, h.MatchExpressions) && subset(a.MatchFields, h.MatchFields)
		}) {
			return false
		}
	}
	return true
}

func subset[T any](small, big []T) bool {
	for _, s := range small {
		if !slices.ContainsFunc(big, func(b T) bool { return equality.Semantic.DeepEqual(s, b) }) {
			return false
		}
	}
	return true
}

// union appends to have the entries of add it does not contain.
func union[T any](have, add []T) []T {
	for _, a := range add {
		if !slices.ContainsFunc(have, func(h T) bool { return equality.Semantic.DeepEqual(h, a) }) {
			have = append(have, *deepCopy(&a))
		}
	}
	return have
}

func deepCopy[T any](v *T) *T {
	if c, ok := any(v).(interface{ DeepCopy() *T }); ok {
		return c.DeepCopy()
	}
	out := *v
	return &out
}

// overlay returns base with every field that top sets laid over it, whole: a set field of top
// replaces base's, an unset one keeps base's (a security context's runAsUser from the spec and
// fsGroup from the template both stay). Fields are replaced whole, never merged deeper, so a
// lifecycle handler or a seccomp profile stays one consistent value. Neither argument is
// modified; nil top returns base.
func overlay[T any](base, top *T) *T {
	if top == nil {
		return base
	}
	out := deepCopy(top)
	if base == nil {
		return out
	}
	merged := deepCopy(base)
	src, dst := reflect.ValueOf(out).Elem(), reflect.ValueOf(merged).Elem()
	for i := range src.NumField() {
		if f := src.Field(i); !f.IsZero() {
			dst.Field(i).Set(f)
		}
	}
	return merged
}
