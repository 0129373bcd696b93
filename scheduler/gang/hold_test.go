/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/sparkpod"
)

// TestStartGate: an admitted workload's driver is created only once it fits its planned node
// by the pods there now, terminating ones included (kube-scheduler would otherwise preempt
// pods there itself), or when it exists already.
func TestStartGate(t *testing.T) {
	key := func(name string) Key {
		return Key{Kind: scheduler.KindApplication, NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}
	driver := func(name string) Workload {
		return Workload{Key: key(name), Demand: sparkpod.Demand{Driver: sparkpod.PodDemand{Role: sparkpod.RoleDriver, Count: 1,
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}}
	}
	node := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("110")}}}
	terminating := pod("victim", "v1", v1beta2.SparkRoleDriver, "n", "2", corev1.PodRunning)
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	type start struct{ name, run, node string }
	tests := []struct {
		name   string
		pods   []corev1.Pod
		starts []start
		want   map[string]bool
		held   map[Key]string
	}{{
		name:   "room now: it starts and takes the room",
		pods:   []corev1.Pod{pod("other", "o1", v1beta2.SparkRoleExecutor, "n", "2", corev1.PodRunning)},
		starts: []start{{"a", "a1", "n"}, {"b", "b1", "n"}},
		want:   map[string]bool{"a": true, "b": false},
		held:   map[Key]string{key("b"): "n"},
	}, {
		name: "a victim's pod still terminating there: held",
		pods: []corev1.Pod{terminating, pod("other", "o1", v1beta2.SparkRoleExecutor, "n", "1", corev1.PodRunning),
			pod("done", "d1", v1beta2.SparkRoleDriver, "n", "4", corev1.PodSucceeded)},
		starts: []start{{"a", "a1", "n"}},
		want:   map[string]bool{"a": false},
		held:   map[Key]string{key("a"): "n"},
	}, {
		name:   "its driver exists already: not held for the room it takes itself",
		pods:   []corev1.Pod{pod("a", "a1", v1beta2.SparkRoleDriver, "n", "2", corev1.PodRunning), terminating},
		starts: []start{{"a", "a1", "n"}},
		want:   map[string]bool{"a": true},
		held:   map[Key]string{},
	}, {
		name:   "a node it does not know is no reason to wait",
		pods:   []corev1.Pod{terminating},
		starts: []start{{"a", "a1", "gone"}},
		want:   map[string]bool{"a": true},
		held:   map[Key]string{},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newStartGate(world{Nodes: []corev1.Node{node}, Pods: tc.pods},
				Snapshot{Workloads: []Workload{driver("a"), driver("b")}})
			got := map[string]bool{}
			for _, s := range tc.starts {
				got[s.name] = g.start(key(s.name), s.run, s.node)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("started (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.held, g.held); diff != "" {
				t.Errorf("held (-want +got):\n%s", diff)
			}
		})
	}
}
