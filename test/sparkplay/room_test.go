/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkplay

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// cpuPod is pod with one container requesting cpu, changed by each of with.
func cpuPod(p corev1.Pod, cpu string, with ...func(*corev1.Pod)) *corev1.Pod {
	p.Namespace = "ns"
	p.Spec.Containers = []corev1.Container{{Name: "spark", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}
	for _, w := range with {
		w(&p)
	}
	return &p
}

func node(name string, with ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourcePods: resource.MustParse("110")}}}
	for _, w := range with {
		w(n)
	}
	return n
}

// TestNoRoomIsPartial: an executor waiting while its driver runs and its whole group exists
// makes its application partial only when no node it may go to has room for it.
func TestNoRoomIsPartial(t *testing.T) {
	driver := pod("a", v1beta2.SparkRoleDriver, "a-driver", "n1", corev1.PodRunning)
	waiting := pod("a", v1beta2.SparkRoleExecutor, "a-exec-1", "", corev1.PodPending)
	// b's pods: 1 CPU on n1 (beside a's 1-CPU driver) and 2 on n2.
	bOnN1 := pod("b", v1beta2.SparkRoleExecutor, "b-exec-1", "n1", corev1.PodRunning)
	bOnN2 := pod("b", v1beta2.SparkRoleDriver, "b-driver", "n2", corev1.PodRunning)
	succeeded := func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }
	leaving := func(p *corev1.Pod) {
		now := metav1.Now()
		p.DeletionTimestamp, p.Finalizers = &now, []string{"test/keep"}
	}
	onlyN2 := func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{corev1.LabelHostname: "n2"} }
	tainted := func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "other", Effect: corev1.TaintEffectNoSchedule}}
	}
	for _, tc := range []struct {
		name      string
		off       bool
		groupMade bool
		nodes     []*corev1.Node
		pods      []*corev1.Pod
		want      bool
	}{
		{name: "room on a node: a scheduler yet to bind it", groupMade: true, nodes: []*corev1.Node{node("n1"), node("n2")},
			pods: []*corev1.Pod{cpuPod(driver, "1"), cpuPod(waiting, "1"), cpuPod(bOnN1, "1")}},
		{name: "others took every node's room", groupMade: true, want: true, nodes: []*corev1.Node{node("n1"), node("n2")},
			pods: []*corev1.Pod{cpuPod(driver, "1"), cpuPod(waiting, "1"), cpuPod(bOnN1, "1"), cpuPod(bOnN2, "2")}},
		{name: "room in total, not on one node", groupMade: true, want: true, nodes: []*corev1.Node{node("n1"), node("n2")},
			pods: []*corev1.Pod{cpuPod(driver, "1"), cpuPod(waiting, "2"), cpuPod(bOnN2, "1")}},
		{name: "an occupant that ended leaves its room", groupMade: true, nodes: []*corev1.Node{node("n1"), node("n2")},
			pods: []*corev1.Pod{cpuPod(driver, "1"), cpuPod(waiting, "1"), cpuPod(bOnN1, "1"), cpuPod(bOnN2, "2", succeeded)}},
		{name: "an occupant on its way out leaves its room", groupMade: true, nodes: []*corev1.Node{node("n1"), node("n2")},
			pods: []*corev1.Pod{cpuPod(driver, "1"), cpuPod(waiting, "1"), cpuPod(bOnN1, "1"), cpuPod(bOnN2, "2", leaving)}},
		{name: "room only where its node selector does not let it go", groupMade: true, want: true, nodes: []*corev1.Node{node("n1"), node("n2")},
			pods: []*corev1.Pod{cpuPod(driver, "1"), cpuPod(waiting, "1", onlyN2), cpuPod(bOnN2, "2")}},
		{name: "room only on a node tainted against it", groupMade: true, want: true, nodes: []*corev1.Node{node("n1"), node("n2", tainted)},
			pods: []*corev1.Pod{cpuPod(driver, "1"), cpuPod(waiting, "1"), cpuPod(bOnN1, "1")}},
		{name: "another namespace's pods take room too", groupMade: true, want: true, nodes: []*corev1.Node{node("n1"), node("n2")},
			pods: []*corev1.Pod{cpuPod(driver, "1"), cpuPod(waiting, "1"), cpuPod(bOnN1, "1"),
				cpuPod(bOnN2, "2", func(p *corev1.Pod) { p.Namespace = "elsewhere" })}},
		{name: "no room, the group still being made", nodes: []*corev1.Node{node("n1"), node("n2")},
			pods: []*corev1.Pod{cpuPod(driver, "1"), cpuPod(waiting, "1"), cpuPod(bOnN1, "1"), cpuPod(bOnN2, "2")}},
		{name: "no room, the check off", off: true, groupMade: true, nodes: []*corev1.Node{node("n1"), node("n2")},
			pods: []*corev1.Pod{cpuPod(driver, "1"), cpuPod(waiting, "1"), cpuPod(bOnN1, "1"), cpuPod(bOnN2, "2")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objs []client.Object
			for _, n := range tc.nodes {
				objs = append(objs, n)
			}
			for _, p := range tc.pods {
				objs = append(objs, p)
			}
			c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(objs...).Build()
			p := New(c, "ns", Options{NoRoomIsPartial: !tc.off})
			p.played[driver.UID] = tc.groupMade
			if err := p.checkRoom(context.Background()); err != nil {
				t.Fatal(err)
			}
			why, partial := p.Partial()["a"]
			if partial != tc.want {
				t.Errorf("partial %v (%s), want %v", partial, why, tc.want)
			}
		})
	}
}
