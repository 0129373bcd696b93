/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package kueue

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/sparkpod"
)

// queued is an application labelled for Kueue: a driver of 2 cores and 2 executors of 3 cores,
// 1g each, no coreRequest; change changes it.
func queued(change func(*v1beta2.SparkApplication)) *v1beta2.SparkApplication {
	app := &v1beta2.SparkApplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", Labels: map[string]string{scheduler.LabelKueueQueueName: "lq"}},
		Spec: v1beta2.SparkApplicationSpec{
			Type: v1beta2.SparkApplicationTypeScala, Mode: v1beta2.DeployModeCluster,
			Driver:   v1beta2.DriverSpec{SparkPodSpec: v1beta2.SparkPodSpec{Cores: ptr.To[int32](2), Memory: ptr.To("1g")}},
			Executor: v1beta2.ExecutorSpec{SparkPodSpec: v1beta2.SparkPodSpec{Cores: ptr.To[int32](3), Memory: ptr.To("1g")}, Instances: ptr.To[int32](2)},
		},
	}
	if change != nil {
		change(app)
	}
	return app
}

// count is Kueue's count of a role as "pods×cpu/memory" (cpu and memory as Kueue would read
// them), for readable diffs.
func count(app *v1beta2.SparkApplication, role sparkpod.Role) string {
	pods, r := Counted(app, role)
	cpu, mem := r[corev1.ResourceCPU], r[corev1.ResourceMemory]
	return strings.Join([]string{string(rune('0' + pods)), "×", cpu.String(), "/", mem.String()}, "")
}

// TestFill: after Fill, Kueue's count of cpu and executors is what the pods request, in shapes
// unlike the end-to-end test's: cores without coreRequest, a coreLimit alone, sizes and
// executor counts in sparkConf only; so is its count of memory where the spec sets neither
// memory nor memoryLimit; dynamic allocation and applications Kueue does not queue are left
// alone.
func TestFill(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		change                func(*v1beta2.SparkApplication)
		filled                []string
		beforeDriver, driver  string
		beforeExec, executors string
	}{{
		name:         "cores without coreRequest",
		filled:       []string{"spec.driver.coreRequest", "spec.executor.coreRequest"},
		beforeDriver: "1×0/1Gi", driver: "1×2/1Gi",
		beforeExec: "2×0/1Gi", executors: "2×3/1Gi",
	}, {
		name: "a coreLimit alone counts as the request for Kueue; the pods request cores",
		change: func(app *v1beta2.SparkApplication) {
			app.Spec.Driver.CoreLimit = ptr.To("4")
			app.Spec.Executor.CoreRequest = ptr.To("1500m")
		},
		filled:       []string{"spec.driver.coreRequest"},
		beforeDriver: "1×4/1Gi", driver: "1×2/1Gi",
		beforeExec: "2×1500m/1Gi", executors: "2×1500m/1Gi",
	}, {
		name: "sizes and executors in sparkConf only",
		change: func(app *v1beta2.SparkApplication) {
			app.Spec.Driver.Cores, app.Spec.Driver.Memory = nil, nil
			app.Spec.Executor.Cores, app.Spec.Executor.Memory, app.Spec.Executor.Instances = nil, nil, nil
			app.Spec.SparkConf = map[string]string{"spark.driver.cores": "3", "spark.executor.memory": "2g", "spark.executor.instances": "5",
				"spark.kubernetes.executor.request.cores": "250m"}
		},
		filled: []string{"spec.driver.coreRequest", "spec.driver.memoryLimit", "spec.executor.coreRequest", "spec.executor.memoryLimit",
			"spec.executor.instances"},
		// Kueue counts memoryLimit, which the webhook sets to the pods' memory: Spark's and its
		// overhead (at least 384 MiB).
		beforeDriver: "1×0/0", driver: "1×3/1408Mi",
		beforeExec: "0×0/0", executors: "5×250m/2432Mi",
	}, {
		name: "memory unset: the default 1g and Python's overhead factor, 0.4",
		change: func(app *v1beta2.SparkApplication) {
			app.Spec.Type = v1beta2.SparkApplicationTypePython
			app.Spec.Driver.Memory, app.Spec.Executor.Memory = nil, nil
			app.Spec.Driver.CoreRequest, app.Spec.Executor.CoreRequest = ptr.To("2"), ptr.To("3")
		},
		filled:       []string{"spec.driver.memoryLimit", "spec.executor.memoryLimit"},
		beforeDriver: "1×2/0", driver: "1×2/1433Mi",
		beforeExec: "2×3/0", executors: "2×3/1433Mi",
	}, {
		name: "a memoryLimit of the user's is left alone",
		change: func(app *v1beta2.SparkApplication) {
			app.Spec.Driver.Memory, app.Spec.Driver.MemoryLimit = nil, ptr.To("3Gi")
			app.Spec.Driver.CoreRequest, app.Spec.Executor.CoreRequest = ptr.To("2"), ptr.To("3")
		},
		beforeDriver: "1×2/3Gi", driver: "1×2/3Gi",
		beforeExec: "2×3/1Gi", executors: "2×3/1Gi",
	}, {
		name: "dynamic allocation: executor.instances left unset (Kueue refuses it)",
		change: func(app *v1beta2.SparkApplication) {
			app.Spec.Executor.Instances = nil
			app.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, MinExecutors: ptr.To[int32](1), InitialExecutors: ptr.To[int32](3)}
		},
		filled:       []string{"spec.driver.coreRequest", "spec.executor.coreRequest"},
		beforeDriver: "1×0/1Gi", driver: "1×2/1Gi",
		beforeExec: "0×0/1Gi", executors: "0×3/1Gi",
	}, {
		name:         "not queued by Kueue",
		change:       func(app *v1beta2.SparkApplication) { app.Labels = nil },
		beforeDriver: "1×0/1Gi", driver: "1×0/1Gi",
		beforeExec: "2×0/1Gi", executors: "2×0/1Gi",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			app := queued(tc.change)
			before := []string{count(app, sparkpod.RoleDriver), count(app, sparkpod.RoleExecutor)}
			filled := Fill(app)
			if diff := cmp.Diff(tc.filled, filled); diff != "" {
				t.Errorf("fields filled (-want +got):\n%s", diff)
			}
			got := []string{before[0], before[1], count(app, sparkpod.RoleDriver), count(app, sparkpod.RoleExecutor)}
			if diff := cmp.Diff([]string{tc.beforeDriver, tc.beforeExec, tc.driver, tc.executors}, got); diff != "" {
				t.Errorf("Kueue's count, driver and executors before and after (-want +got):\n%s", diff)
			}
			// What the pods request is the same with the fields filled.
			was, err := sparkpod.DemandOf(queued(tc.change))
			if err != nil {
				t.Fatal(err)
			}
			is, err := sparkpod.DemandOf(app)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(was.Total(), is.Total()); diff != "" {
				t.Errorf("Fill changed what the pods request (-before +after):\n%s", diff)
			}
		})
	}
}

// TestDifferences: once filled, Kueue's count is short of the pods' by Spark's memory overhead
// (the default factor, 0.4 for Python, an explicit overhead or factor) and, with dynamic
// allocation, by the initial executors; each is said with both figures.
func TestDifferences(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*v1beta2.SparkApplication)
		want   []string
	}{{
		name: "the default overhead, at least 384 MiB",
		want: []string{"Kueue counts 1Gi of memory for each driver pod (spec.driver.memory), which requests 1408Mi (Spark's memory overhead)",
			"Kueue counts 1Gi of memory for each executor pod (spec.executor.memory), which requests 1408Mi"},
	}, {
		name: "an explicit overhead; a factor; Python's factor",
		change: func(app *v1beta2.SparkApplication) {
			app.Spec.Type = v1beta2.SparkApplicationTypePython
			app.Spec.Driver.Memory, app.Spec.Driver.MemoryOverhead = ptr.To("2g"), ptr.To("512m")
			app.Spec.Executor.Memory = ptr.To("4g")
		},
		want: []string{"Kueue counts 2Gi of memory for each driver pod (spec.driver.memory), which requests 2560Mi",
			"Kueue counts 4Gi of memory for each executor pod (spec.executor.memory), which requests 5734Mi"},
	}, {
		name: "memoryOverheadFactor",
		change: func(app *v1beta2.SparkApplication) {
			app.Spec.MemoryOverheadFactor = ptr.To("0.5")
			app.Spec.Driver.Memory, app.Spec.Executor.Memory = ptr.To("2g"), ptr.To("2g")
		},
		want: []string{"Kueue counts 2Gi of memory for each driver pod (spec.driver.memory), which requests 3Gi",
			"Kueue counts 2Gi of memory for each executor pod (spec.executor.memory), which requests 3Gi"},
	}, {
		name: "dynamic allocation's initial executors",
		change: func(app *v1beta2.SparkApplication) {
			app.Spec.Executor.Instances = nil
			app.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, MinExecutors: ptr.To[int32](1), InitialExecutors: ptr.To[int32](3)}
		},
		want: []string{"spec.driver.memory", "spec.executor.memory",
			"Kueue counts 0 executors (spec.executor.instances); the application starts with 3"},
	}, {
		name: "Spark's memory in sparkConf: Kueue counts the pods' memory (memoryLimit filled in)",
		change: func(app *v1beta2.SparkApplication) {
			app.Spec.Driver.Memory, app.Spec.Executor.Memory = nil, nil
			app.Spec.SparkConf = map[string]string{"spark.driver.memory": "2g", "spark.executor.memory": "4g"}
		},
	}, {
		name:   "not queued by Kueue",
		change: func(app *v1beta2.SparkApplication) { app.Labels = nil },
	}} {
		t.Run(tc.name, func(t *testing.T) {
			app := queued(tc.change)
			Fill(app)
			got := Differences(app)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d differences, want %d: %q", len(got), len(tc.want), got)
			}
			for i, want := range tc.want {
				if !strings.Contains(got[i], want) {
					t.Errorf("difference %d: %q, want it to say %q", i, got[i], want)
				}
			}
		})
	}
}
