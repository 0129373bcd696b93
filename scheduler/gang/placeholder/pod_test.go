/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package placeholder

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/scheduler/reservation"
)

func TestPlaceholderPod(t *testing.T) {
	owner := Owner{Name: "a", Run: "s1", Queue: "q", PriorityClassName: "high", UID: "uid-res"}
	p := Pod(core.Key{Kind: "SparkApplication", NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}, owner, "executor-2", "n2",
		corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourcePods: resource.MustParse("1")}, "pause")
	want := map[string]string{Label: "a", LabelRun: "s1", LabelMember: "executor-2", reservation.LabelQueue: "q"}
	if diff := cmp.Diff(want, p.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if p.Name != "a-ph-executor-2" || p.Spec.PriorityClassName != "high" || *p.Spec.TerminationGracePeriodSeconds != 0 ||
		p.OwnerReferences[0].UID != "uid-res" || p.OwnerReferences[0].Kind != "Reservation" || p.Spec.NodeName != "" {
		t.Errorf("placeholder %+v", p)
	}
	if _, ok := p.Spec.Containers[0].Resources.Requests[corev1.ResourcePods]; ok {
		t.Error("the placeholder requests the pods resource, which a pod cannot")
	}
	terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || terms[0].MatchFields[0].Values[0] != "n2" || terms[0].MatchFields[0].Key != metav1.ObjectNameField {
		t.Errorf("node affinity %+v; want metadata.name in [n2]", terms)
	}
}
