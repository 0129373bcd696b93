/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gangtest

import (
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// ClusterNode is a Kubernetes node named name with 16 allocatable CPUs, as the runtime reads
// it from the cluster.
func ClusterNode(name string) corev1.Node {
	cpu := resource.MustParse("16")
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: cpu}}}
}

// Pod is the pod of role (driver or executor) of application app's submission sub in
// Namespace, named app+role, requesting cpu, bound to nodeName ("" for none), in phase.
func Pod(app, sub, role, nodeName string, cpu string, phase corev1.PodPhase) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: app + role, Labels: map[string]string{
			v1beta2.LabelAppName: app, v1beta2.LabelSubmissionID: sub, v1beta2.SparkRoleLabel: role}},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
		Status: corev1.PodStatus{Phase: phase},
	}
}

// Numbered gives p Spark's executor id: its label, and a name Spark would give it.
func Numbered(p corev1.Pod, id int) corev1.Pod {
	p.Labels = maps.Clone(p.Labels)
	p.Labels[v1beta2.SparkExecutorIDLabel] = strconv.Itoa(id)
	p.Name = p.Labels[v1beta2.LabelAppName] + "-exec-" + strconv.Itoa(id)
	return p
}

// GatedExecutor is an executor as the gang scheduler's template makes it: ns/app-exec-1, gated
// by gates, with required node affinity on the nodes n1 and n2.
func GatedExecutor(annotations map[string]string, gates ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app-exec-1", Annotations: annotations},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "spark-kubernetes-executor", Image: "spark"}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
					Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{"n1", "n2"}}}}},
			}}},
		},
	}
	for _, g := range gates {
		p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: g})
	}
	return p
}
