/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	gt "github.com/sparkop/spark-operator/scheduler/gang/gangtest"
)

// TestPodRequests: a running pod takes on its node what kube-scheduler counts for it
// (Kubernetes' own rule): its containers, plus its sidecar init containers (restartPolicy
// Always), which run beside them, or a larger plain init container; pod-level resources where
// the pod sets them; its overhead; and a pod slot. The node's Used in a snapshot counts the
// same, through the trimmed pod the cluster cache keeps.
func TestPodRequests(t *testing.T) {
	cpu := func(q string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
	}
	container := func(name, q string) corev1.Container {
		return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: cpu(q)}}
	}
	sidecar := container("proxy", "1")
	sidecar.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	tests := []struct {
		name string
		spec corev1.PodSpec
		want corev1.ResourceList
	}{{
		name: "containers summed",
		spec: corev1.PodSpec{Containers: []corev1.Container{container("spark", "2"), container("log", "500m")}},
		want: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2500m"), corev1.ResourcePods: resource.MustParse("1")},
	}, {
		name: "a plain init container counts only when larger than the containers",
		spec: corev1.PodSpec{InitContainers: []corev1.Container{container("init", "3")}, Containers: []corev1.Container{container("spark", "2")}},
		want: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourcePods: resource.MustParse("1")},
	}, {
		name: "a sidecar init container runs beside the containers: added",
		spec: corev1.PodSpec{InitContainers: []corev1.Container{sidecar}, Containers: []corev1.Container{container("spark", "2")}},
		want: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourcePods: resource.MustParse("1")},
	}, {
		name: "pod-level resources replace the containers' sum",
		spec: corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: cpu("4")},
			Containers: []corev1.Container{container("spark", "1"), container("log", "1")}},
		want: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("1")},
	}, {
		name: "overhead added",
		spec: corev1.PodSpec{Overhead: cpu("250m"), Containers: []corev1.Container{container("spark", "1")}},
		want: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1250m"), corev1.ResourcePods: resource.MustParse("1")},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := gt.Pod("other", "x", v1beta2.SparkRoleDriver, "n", "0", corev1.PodRunning)
			p.Spec = tt.spec
			p.Spec.NodeName = "n"
			if diff := cmp.Diff(tt.want, podRequests(&p)); diff != "" {
				t.Errorf("podRequests (-want +got):\n%s", diff)
			}
			trimmed, err := trimPod(&p)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, requestsOf(trimmed.(*corev1.Pod))); diff != "" {
				t.Errorf("requestsOf the trimmed pod (-want +got):\n%s", diff)
			}
			node := gt.ClusterNode("n")
			snap, err := snapshot(world{Nodes: []corev1.Node{node}, Pods: []corev1.Pod{*trimmed.(*corev1.Pod)}}, snapshotOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, snap.Nodes[0].Used); diff != "" {
				t.Errorf("the node's Used, through the trimmed pod (-want +got):\n%s", diff)
			}
		})
	}
}
