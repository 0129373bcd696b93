/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package podmutator_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
	"github.com/sparkop/spark-operator/webhook/podmutator"
)

func connectWithTemplates() *v1alpha1.SparkConnect {
	tmpl := func(ctr string) *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			NodeSelector:      map[string]string{"pool": "spark"},
			Tolerations:       []corev1.Toleration{{Key: "spark", Operator: corev1.TolerationOpExists}},
			SecurityContext:   &corev1.PodSecurityContext{RunAsUser: ptr.To(int64(185))},
			PriorityClassName: "high",
			Volumes:           []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			Containers: []corev1.Container{
				{Name: ctr, Env: []corev1.EnvVar{{Name: "TEAM", Value: "data"}},
					VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}},
				{Name: "proxy", Image: "proxy:1"},
			},
		}}
	}
	return &v1alpha1.SparkConnect{
		ObjectMeta: metav1.ObjectMeta{Name: "sc", Namespace: "ns", UID: "uid"},
		Spec: v1alpha1.SparkConnectSpec{
			SparkVersion: "4.0.4", Image: ptr.To("spark:4"),
			Server:   v1alpha1.ServerSpec{SparkPodSpec: v1alpha1.SparkPodSpec{Template: tmpl(v1beta2.SparkDriverContainerName)}},
			Executor: v1alpha1.ExecutorSpec{SparkPodSpec: v1alpha1.SparkPodSpec{Template: tmpl(v1beta2.SparkExecutorContainerName)}},
		},
	}
}

// A bare executor, as something other than Spark might make it, gets the executor template's
// settings; the server pod the operator builds already has the server template's, so the
// webhook leaves it as it is.
func TestMutateConnectPod(t *testing.T) {
	conn := connectWithTemplates()
	server, err := sparkpod.ConnectServerPod(conn, sparkpod.RoleScheduling{})
	if err != nil {
		t.Fatal(err)
	}
	bareExecutor := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "sc-exec-1", Labels: map[string]string{
			v1beta2.SparkRoleLabel: v1beta2.SparkRoleExecutor, v1alpha1.LabelConnectName: "sc"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: v1beta2.SparkExecutorContainerName, Image: "spark:4"}}},
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want func(p *corev1.Pod)
	}{
		{"server pod unchanged", server, func(*corev1.Pod) {}},
		{"bare executor", bareExecutor, func(p *corev1.Pod) {
			p.Spec.NodeSelector = map[string]string{"pool": "spark"}
			p.Spec.Tolerations = []corev1.Toleration{{Key: "spark", Operator: corev1.TolerationOpExists}}
			p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To(int64(185))}
			p.Spec.PriorityClassName = "high"
			p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			c := &p.Spec.Containers[0]
			c.Env = []corev1.EnvVar{{Name: "TEAM", Value: "data"}}
			c.VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "proxy", Image: "proxy:1"})
		}},
		{"not a Spark role", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1alpha1.LabelConnectName: "sc"}}},
			func(*corev1.Pod) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.pod.DeepCopy()
			want := tt.pod.DeepCopy()
			tt.want(want)
			if err := podmutator.MutateConnectPod(got, conn); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("pod (-want +got):\n%s", diff)
			}
		})
	}
}
