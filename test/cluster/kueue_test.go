/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package cluster_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sparkop/spark-operator/test/cluster"
)

// TestNewKueueQueue: the objects are what Kueue v0.17.0's API takes, the quota's resources in
// a stable order, the flavor's node labels only when there are some.
func TestNewKueueQueue(t *testing.T) {
	tests := []struct {
		name       string
		nodeLabels map[string]string
		quota      corev1.ResourceList
		wantFlavor map[string]any
		wantGroups []any
	}{
		{
			name:       "any node, CPU and memory",
			quota:      corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("640Gi"), corev1.ResourceCPU: resource.MustParse("160")},
			wantFlavor: map[string]any{},
			wantGroups: []any{map[string]any{
				"coveredResources": []any{"cpu", "memory"},
				"flavors": []any{map[string]any{"name": "q", "resources": []any{
					map[string]any{"name": "cpu", "nominalQuota": "160"},
					map[string]any{"name": "memory", "nominalQuota": "640Gi"},
				}}},
			}},
		},
		{
			name:       "labelled nodes, CPU alone",
			nodeLabels: map[string]string{"pool": "spark"},
			quota:      corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("24")},
			wantFlavor: map[string]any{"nodeLabels": map[string]any{"pool": "spark"}},
			wantGroups: []any{map[string]any{
				"coveredResources": []any{"cpu"},
				"flavors": []any{map[string]any{"name": "q", "resources": []any{
					map[string]any{"name": "cpu", "nominalQuota": "24"},
				}}},
			}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := cluster.NewKueueQueue("q", tc.nodeLabels, tc.quota, "ns", "local")
			got, order := map[string]any{}, []string{}
			for _, o := range q.Objects() {
				u := o.(*unstructured.Unstructured)
				got[u.GetKind()+" "+u.GetNamespace()+"/"+u.GetName()] = u.Object["spec"]
				order = append(order, u.GetKind())
				_ = u.DeepCopy() // what a client does before sending: JSON types only, or it panics
				if u.GetAPIVersion() != "kueue.x-k8s.io/v1beta2" {
					t.Errorf("%s: apiVersion %q", u.GetKind(), u.GetAPIVersion())
				}
			}
			want := map[string]any{
				"ResourceFlavor /q":   tc.wantFlavor,
				"ClusterQueue /q":     map[string]any{"namespaceSelector": map[string]any{}, "resourceGroups": tc.wantGroups},
				"LocalQueue ns/local": map[string]any{"clusterQueue": "q"},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			// The ClusterQueue names the flavor, the LocalQueue the ClusterQueue.
			if want := []string{"ResourceFlavor", "ClusterQueue", "LocalQueue"}; !cmp.Equal(order, want) {
				t.Errorf("creation order %v, want %v", order, want)
			}
		})
	}
}

// TestKueueActive: only an Active condition that is True counts.
func TestKueueActive(t *testing.T) {
	tests := []struct {
		name   string
		status map[string]any
		want   bool
	}{
		{"no status yet", nil, false},
		{"active", map[string]any{"conditions": []any{map[string]any{"type": "Active", "status": "True"}}}, true},
		{"inactive", map[string]any{"conditions": []any{map[string]any{"type": "Active", "status": "False", "reason": "FlavorNotFound"}}}, false},
		{"another condition", map[string]any{"conditions": []any{map[string]any{"type": "Terminating", "status": "True"}}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cq := cluster.KueueObject("ClusterQueue", "", "q", map[string]any{})
			if tc.status != nil {
				cq.Object["status"] = tc.status
			}
			if got := cluster.KueueActive(cq); got != tc.want {
				t.Errorf("KueueActive = %v, want %v", got, tc.want)
			}
		})
	}
}
