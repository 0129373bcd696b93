/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestContainerResources checks Spark's sizing rules with values worked out by hand.
func TestContainerResources(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		name             string
		role             Role
		conf             map[string]string
		requests, limits corev1.ResourceList
	}{{
		name: "JVM driver defaults: 1 core, 1g + 384m",
		role: RoleDriver, conf: map[string]string{},
		requests: corev1.ResourceList{"cpu": q("1"), "memory": q("1408Mi")}, limits: corev1.ResourceList{"memory": q("1408Mi")},
	}, {
		name: "Python driver: factor 0.4",
		role: RoleDriver, conf: map[string]string{KeyResourceType: "python", "spark.driver.memory": "2g"},
		requests: corev1.ResourceList{"cpu": q("1"), "memory": q("2867Mi")}, limits: corev1.ResourceList{"memory": q("2867Mi")},
	}, {
		name: "the role's factor wins over the global one; request and limit cores",
		role: RoleDriver, conf: map[string]string{
			"spark.driver.memory": "4g", "spark.driver.memoryOverheadFactor": "0.5", KeyOverheadFactor: "0.2",
			"spark.driver.cores": "3", "spark.kubernetes.driver.request.cores": "500m", "spark.kubernetes.driver.limit.cores": "2",
		},
		requests: corev1.ResourceList{"cpu": q("500m"), "memory": q("6Gi")}, limits: corev1.ResourceList{"cpu": q("2"), "memory": q("6Gi")},
	}, {
		name: "overhead given; devices by vendor",
		role: RoleDriver, conf: map[string]string{
			"spark.driver.memoryOverhead": "100m", "spark.driver.resource.gpu.amount": "2", "spark.driver.resource.gpu.vendor": "nvidia.com",
			"spark.executor.resource.fpga.amount": "1",
		},
		requests: corev1.ResourceList{"cpu": q("1"), "memory": q("1124Mi")}, limits: corev1.ResourceList{"memory": q("1124Mi"), "nvidia.com/gpu": q("2")},
	}, {
		name: "minimum overhead",
		role: RoleExecutor, conf: map[string]string{"spark.executor.minMemoryOverhead": "1g", "spark.executor.cores": "2"},
		requests: corev1.ResourceList{"cpu": q("2"), "memory": q("2Gi")}, limits: corev1.ResourceList{"memory": q("2Gi")},
	}, {
		name: "Python executor: PySpark and off-heap memory (off-heap size in bytes without a unit)",
		role: RoleExecutor, conf: map[string]string{
			KeyResourceType: "python", "spark.executor.pyspark.memory": "512m",
			"spark.memory.offHeap.enabled": "true", "spark.memory.offHeap.size": "1073741824",
		},
		requests: corev1.ResourceList{"cpu": q("1"), "memory": q("2969Mi")}, limits: corev1.ResourceList{"memory": q("2969Mi")},
	}, {
		name: "JVM executor: PySpark memory does not count; off-heap disabled",
		role: RoleExecutor, conf: map[string]string{
			"spark.executor.pyspark.memory": "512m", "spark.memory.offHeap.size": "1g", KeyOverheadFactor: "0.4",
		},
		requests: corev1.ResourceList{"cpu": q("1"), "memory": q("1433Mi")}, limits: corev1.ResourceList{"memory": q("1433Mi")},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ContainerResources(tt.role, tt.conf)
			if err != nil {
				t.Fatal(err)
			}
			eq := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
			if diff := cmp.Diff(tt.requests, got.Requests, eq); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.limits, got.Limits, eq); diff != "" {
				t.Errorf("limits (-want +got):\n%s", diff)
			}
		})
	}

	for conf, want := range map[string]string{
		"spark.driver.cores=1.5":                  "spark.driver.cores",
		"spark.driver.resource.gpu.amount=1":      "spark.driver.resource.gpu.vendor is not set",
		"spark.driver.resource.gpu.vendor=x":      "needs an amount",
		"spark.memory.offHeap.enabled=true":       "spark.memory.offHeap.size must be at least 1m",
		"spark.driver.memoryOverheadFactor=-1":    "want a non-negative decimal",
		"spark.kubernetes.driver.request.cores=x": "spark.kubernetes.driver.request.cores",
	} {
		k, v, _ := strings.Cut(conf, "=")
		role := RoleDriver
		if strings.HasPrefix(k, "spark.memory") {
			role = RoleExecutor
		}
		if _, err := ContainerResources(role, map[string]string{k: v}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", conf, err, want)
		}
	}
}

func TestInitialExecutors(t *testing.T) {
	for _, tt := range []struct {
		conf map[string]string
		want int32
	}{
		{map[string]string{}, 2},
		{map[string]string{"spark.executor.instances": "5"}, 5},
		{map[string]string{"spark.dynamicAllocation.enabled": "true"}, 0},
		{map[string]string{"spark.dynamicAllocation.enabled": "true", "spark.executor.instances": "1", "spark.dynamicAllocation.minExecutors": "3"}, 3},
		{map[string]string{"spark.dynamicAllocation.enabled": "true", "spark.dynamicAllocation.initialExecutors": "4", "spark.dynamicAllocation.minExecutors": "3"}, 4},
	} {
		if got, err := InitialExecutors(tt.conf); err != nil || got != tt.want {
			t.Errorf("InitialExecutors(%v) = %d, %v; want %d", tt.conf, got, err, tt.want)
		}
	}
}
