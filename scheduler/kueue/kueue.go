/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package kueue is what the operator knows of Kueue's own SparkApplication integration (Kueue
// v0.17, framework sparkoperator.k8s.io/sparkapplication), which admits an application by its
// own count of the spec against a ClusterQueue's quota: that count (Counted), the spec fields
// that make it the pods' count (Fill, which the mutating webhook applies to a new application
// labelled for Kueue), and where the two still differ (Differences, which the validating
// webhook warns of). What the pods request is sparkpod's to say.
package kueue

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/sparkpod"
)

// Counted is what Kueue counts for the Spark container of each pod of role, and how many such
// pods, read from the spec as Kueue reads it: cpu from coreRequest, else coreLimit (a limit
// without a request counts as the request); memory from memory (Spark's, without its
// overhead), else memoryLimit, a Java size ("2g") read as Kubernetes' binary units; one driver and
// executor.instances executors (none when unset). Sidecars and init containers Kueue counts as
// the pods request them, so they are left out of both counts here.
func Counted(app *v1beta2.SparkApplication, role sparkpod.Role) (pods int32, requests corev1.ResourceList) {
	spec, pods := &app.Spec.Driver.SparkPodSpec, int32(1)
	if role == sparkpod.RoleExecutor {
		spec, pods = &app.Spec.Executor.SparkPodSpec, ptr.Deref(app.Spec.Executor.Instances, 0)
	}
	requests = corev1.ResourceList{}
	if cpu := firstSet(spec.CoreRequest, spec.CoreLimit); cpu != nil {
		if q, err := resource.ParseQuantity(*cpu); err == nil {
			requests[corev1.ResourceCPU] = q
		}
	}
	if mem := firstSet(spec.Memory, spec.MemoryLimit); mem != nil {
		if q, err := resource.ParseQuantity(javaToKubernetes(*mem)); err == nil {
			requests[corev1.ResourceMemory] = q
		}
	}
	return pods, requests
}

func firstSet(values ...*string) *string {
	for _, v := range values {
		if v != nil {
			return v
		}
	}
	return nil
}

// javaToKubernetes reads a Java size's unit letter (k, m, g, t, p) as Kubernetes' binary unit
// (Ki, Mi, …), as Kueue does; anything else is left for resource.ParseQuantity.
func javaToKubernetes(size string) string {
	units := map[string]string{"k": "Ki", "m": "Mi", "g": "Gi", "t": "Ti", "p": "Pi"}
	if n := len(size); n > 1 {
		if unit, ok := units[strings.ToLower(size[n-1:])]; ok {
			return size[:n-1] + unit
		}
	}
	return size
}

// Fill sets, on an application Kueue queues, the spec fields that Kueue counts and that are
// unset, to what the pods will request anyway: coreRequest to the Spark container's cpu request
// (cores, or spark.kubernetes.<role>.request.cores); where neither memory nor memoryLimit is
// set (Spark's memory given in sparkConf, or its default), memoryLimit to the Spark container's
// memory limit, which equals its request, Spark's memory overhead included (Kueue counts a
// limit without a request as the request); and without dynamic allocation executor.instances
// to the executors Spark starts. The pods are the same with or without them; Kueue's count then
// is theirs, but for the memory overhead of a role whose memory is in the spec (Differences).
// It returns the paths of the fields it set; an application whose spec the operator cannot
// read is left alone, for validation to refuse.
func Fill(app *v1beta2.SparkApplication) []string {
	if !scheduler.QueuedByKueue(app) {
		return nil
	}
	demand, err := sparkpod.DemandOf(app)
	if err != nil {
		return nil
	}
	var filled []string
	for _, role := range []sparkpod.Role{sparkpod.RoleDriver, sparkpod.RoleExecutor} {
		spec := podSpec(app, role)
		path := "spec." + string(role)
		if spec.CoreRequest == nil {
			if c, err := sparkpod.SparkContainerOf(app, role); err == nil {
				if cpu, ok := c.Requests[corev1.ResourceCPU]; ok {
					spec.CoreRequest = ptr.To(cpu.String())
					filled = append(filled, path+".coreRequest")
				}
			}
		}
		if spec.Memory == nil && spec.MemoryLimit == nil {
			// Kueue counts memory, else memoryLimit as the request: the pods' own limit, which
			// is what they request (Spark's memory and its overhead), makes its count theirs.
			if c, err := sparkpod.SparkContainerOf(app, role); err == nil {
				if mem, ok := c.Limits[corev1.ResourceMemory]; ok {
					spec.MemoryLimit = ptr.To(mem.String())
					filled = append(filled, path+".memoryLimit")
				}
			}
		}
	}
	dynamic := app.Spec.DynamicAllocation != nil && app.Spec.DynamicAllocation.Enabled
	if app.Spec.Executor.Instances == nil && !dynamic {
		app.Spec.Executor.Instances = ptr.To(demand.Executor.Count)
		filled = append(filled, "spec.executor.instances")
	}
	return filled
}

func podSpec(app *v1beta2.SparkApplication, role sparkpod.Role) *v1beta2.SparkPodSpec {
	if role == sparkpod.RoleExecutor {
		return &app.Spec.Executor.SparkPodSpec
	}
	return &app.Spec.Driver.SparkPodSpec
}

// Differences says, for an application Kueue queues, where Kueue's count (Counted) is short of
// what the pods request (sparkpod): a ClusterQueue's quota admits by Kueue's count, so a quota
// meant for N such applications admits more. Each message names both figures and what to do.
func Differences(app *v1beta2.SparkApplication) []string {
	if !scheduler.QueuedByKueue(app) {
		return nil
	}
	demand, err := sparkpod.DemandOf(app)
	if err != nil {
		return nil
	}
	var out []string
	for _, role := range []sparkpod.Role{sparkpod.RoleDriver, sparkpod.RoleExecutor} {
		ours, err := sparkpod.SparkContainerOf(app, role)
		if err != nil {
			return nil
		}
		_, theirs := Counted(app, role)
		field := map[corev1.ResourceName]string{corev1.ResourceCPU: "coreRequest", corev1.ResourceMemory: "memory"}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			want, have := ours.Requests[name], theirs[name]
			if have.Cmp(want) >= 0 {
				continue
			}
			why, fix := "", ""
			if name == corev1.ResourceMemory {
				why = " (Spark's memory overhead)"
				fix = fmt.Sprintf(", or give Spark's memory in sparkConf (spark.%s.memory) instead, and the operator's webhook has Kueue count the overhead too (spec.%s.memoryLimit)", role, role)
			}
			out = append(out, fmt.Sprintf("Kueue counts %s of %s for each %s pod (spec.%s.%s), which requests %s%s: a ClusterQueue's %s quota admits more such applications than fit; size it by the pods' requests%s",
				quantity(have), name, role, role, field[name], quantity(want), why, name, fix))
		}
	}
	if counted, _ := Counted(app, sparkpod.RoleExecutor); counted < demand.Executor.Count {
		out = append(out, fmt.Sprintf("Kueue counts %d executors (spec.executor.instances); the application starts with %d", counted, demand.Executor.Count))
	}
	return out
}

func quantity(q resource.Quantity) string {
	if q.IsZero() {
		return "nothing"
	}
	return q.String()
}
