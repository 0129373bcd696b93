/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
)

func nodeTerm(fields []string, exprs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	t := corev1.NodeSelectorTerm{MatchExpressions: exprs}
	for _, n := range fields {
		t.MatchFields = append(t.MatchFields, corev1.NodeSelectorRequirement{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{n}})
	}
	return t
}

func required(terms ...corev1.NodeSelectorTerm) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
}

var (
	zoneA  = corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}
	diskSS = corev1.NodeSelectorRequirement{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}
)

func TestAndAffinity(t *testing.T) {
	tests := []struct {
		name      string
		have, add *corev1.Affinity
		want      *corev1.Affinity
	}{
		{name: "nothing to add", have: required(nodeTerm(nil, zoneA)), want: required(nodeTerm(nil, zoneA))},
		{name: "nothing there", add: required(nodeTerm(nil, zoneA)), want: required(nodeTerm(nil, zoneA))},
		{name: "planned node and the user's zone both hold",
			have: required(nodeTerm([]string{"n1"})), add: required(nodeTerm(nil, zoneA)),
			want: required(nodeTerm([]string{"n1"}, zoneA))},
		{name: "ORed terms combine term by term",
			have: required(nodeTerm(nil, zoneA), nodeTerm(nil, diskSS)), add: required(nodeTerm([]string{"n1"}), nodeTerm([]string{"n2"})),
			want: required(nodeTerm([]string{"n1"}, zoneA), nodeTerm([]string{"n2"}, zoneA), nodeTerm([]string{"n1"}, diskSS), nodeTerm([]string{"n2"}, diskSS))},
		{name: "already implied: unchanged",
			have: required(nodeTerm([]string{"n1"}, zoneA)), add: required(nodeTerm(nil, zoneA)),
			want: required(nodeTerm([]string{"n1"}, zoneA))},
		{name: "pod anti-affinity terms added once",
			have: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "a"}}}},
			add:  &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "a"}, {TopologyKey: "b"}}}},
			want: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "a"}, {TopologyKey: "b"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.have.DeepCopy()
			got := sparkpod.AndAffinity(tt.have, tt.add)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("AndAffinity (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(got, sparkpod.AndAffinity(got, tt.add)); diff != "" {
				t.Errorf("combining twice changed it (-once +twice):\n%s", diff)
			}
			if diff := cmp.Diff(before, tt.have); diff != "" {
				t.Errorf("AndAffinity modified its argument:\n%s", diff)
			}
		})
	}
}

// TestWebhookKeepsTheDecision: the webhook's pass (Customise) over a pod that carries a batch
// scheduler's decision keeps it, and adds the spec's settings beside it, by the precedence rule.
func TestWebhookKeepsTheDecision(t *testing.T) {
	app := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"}}
	d := &app.Spec.Driver.SparkPodSpec
	d.SchedulerName, d.PriorityClassName = ptr("mine"), ptr("spec-class")
	d.Affinity = required(nodeTerm(nil, zoneA))
	d.NodeSelector = map[string]string{"pool": "spec", "disk": "ssd"}
	d.PodSecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr(int64(185))}
	d.SecurityContext = &corev1.SecurityContext{RunAsNonRoot: ptr(true)}
	d.DNSConfig = &corev1.PodDNSConfig{Searches: []string{"spec.local"}}
	d.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"stop"}}}}

	pod := &corev1.Pod{Spec: corev1.PodSpec{
		SchedulerName: "batch", PriorityClassName: "batch-class",
		NodeSelector:    map[string]string{"pool": "gang"},
		SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr(int64(185))},
		DNSConfig:       &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}},
		Containers: []corev1.Container{{Name: v1beta2.SparkDriverContainerName,
			SecurityContext: &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr(true)},
			Lifecycle:       &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"start"}}}},
		}},
	}}
	sparkpod.RequireNodes(&pod.Spec, "planned")
	if err := sparkpod.Customise(pod, app, sparkpod.RoleDriver); err != nil {
		t.Fatal(err)
	}
	want := corev1.PodSpec{
		SchedulerName: "batch", PriorityClassName: "batch-class",
		NodeSelector:    map[string]string{"pool": "gang", "disk": "ssd"},
		Affinity:        required(nodeTerm([]string{"planned"}, zoneA)),
		SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr(int64(185)), RunAsUser: ptr(int64(185))},
		DNSConfig:       &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"spec.local"}},
		Containers: []corev1.Container{{Name: v1beta2.SparkDriverContainerName,
			SecurityContext:          &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr(true), RunAsNonRoot: ptr(true)},
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			Lifecycle: &corev1.Lifecycle{
				PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"start"}}},
				PreStop:   &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"stop"}}},
			},
		}},
	}
	if diff := cmp.Diff(want, pod.Spec); diff != "" {
		t.Errorf("after the webhook's pass (-want +got):\n%s", diff)
	}

	// A pod left to the default scheduler gets the spec's scheduler and class.
	bare := &corev1.Pod{Spec: corev1.PodSpec{SchedulerName: corev1.DefaultSchedulerName, Containers: []corev1.Container{{Name: v1beta2.SparkDriverContainerName}}}}
	if err := sparkpod.Customise(bare, app, sparkpod.RoleDriver); err != nil {
		t.Fatal(err)
	}
	if bare.Spec.SchedulerName != "mine" || bare.Spec.PriorityClassName != "spec-class" {
		t.Errorf("default pod: scheduler %q, class %q; want the spec's", bare.Spec.SchedulerName, bare.Spec.PriorityClassName)
	}
}
