/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSchedulingApply(t *testing.T) {
	s := Scheduling{
		SchedulerName:   "gang",
		Labels:          map[string]string{"queue": "q"},
		Annotations:     map[string]string{"group": "g"},
		NodeNames:       []string{"n1", "n2"},
		Tolerations:     []corev1.Toleration{{Key: "t", Operator: corev1.TolerationOpExists}},
		SchedulingGates: []corev1.PodSchedulingGate{{Name: "gate"}},
	}
	// A metadata.name field requirement takes one value: one term per node.
	on1 := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}
	on2 := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n2"}}
	zone := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}
	tests := []struct {
		name           string
		meta           metav1.ObjectMeta
		spec, wantSpec corev1.PodSpec
		wantMeta       metav1.ObjectMeta
	}{{
		name:     "empty pod",
		wantMeta: metav1.ObjectMeta{Labels: map[string]string{"queue": "q"}, Annotations: map[string]string{"group": "g"}},
		wantSpec: corev1.PodSpec{
			SchedulerName: "gang", Tolerations: s.Tolerations, SchedulingGates: s.SchedulingGates,
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{on1}}, {MatchFields: []corev1.NodeSelectorRequirement{on2}}},
			}}},
		},
	}, {
		name: "the pod's own settings are kept; node names join every term",
		meta: metav1.ObjectMeta{Labels: map[string]string{"own": "1", "queue": "old"}},
		spec: corev1.PodSpec{
			SchedulerName: "default-scheduler",
			Tolerations:   []corev1.Toleration{{Key: "own", Operator: corev1.TolerationOpExists}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{zone}}, {}},
			}}},
		},
		wantMeta: metav1.ObjectMeta{Labels: map[string]string{"own": "1", "queue": "q"}, Annotations: map[string]string{"group": "g"}},
		wantSpec: corev1.PodSpec{
			SchedulerName:   "gang",
			Tolerations:     []corev1.Toleration{{Key: "own", Operator: corev1.TolerationOpExists}, s.Tolerations[0]},
			SchedulingGates: s.SchedulingGates,
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{
					{MatchExpressions: []corev1.NodeSelectorRequirement{zone}, MatchFields: []corev1.NodeSelectorRequirement{on1}},
					{MatchExpressions: []corev1.NodeSelectorRequirement{zone}, MatchFields: []corev1.NodeSelectorRequirement{on2}},
					{MatchFields: []corev1.NodeSelectorRequirement{on1}},
					{MatchFields: []corev1.NodeSelectorRequirement{on2}},
				},
			}}},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta, spec := tt.meta, tt.spec
			s.Apply(&meta, &spec)
			s.Apply(&meta, &spec) // twice: nothing more
			if diff := cmp.Diff(tt.wantMeta, meta); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSpec, spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
	if !(Scheduling{}).IsZero() || s.IsZero() {
		t.Error("IsZero is wrong")
	}
}
