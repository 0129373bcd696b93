/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package validation

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// Spark's memory overhead defaults: a fraction of the memory (0.1 for JVM applications, 0.4
// for Python and R), at least 384 MiB.
const (
	minOverheadMiB      = 384
	jvmOverheadFactor   = 0.1
	otherOverheadFactor = 0.4
)

// podResources are what one driver or executor pod asks for.
type podResources struct {
	cpuRequest, cpuLimit, memRequest, memLimit resource.Quantity
}

// AppResources is the total of what an application's driver and executors request and are
// limited to, in ResourceQuota terms (cpu, memory, requests.*, limits.*, pods).
func AppResources(s *v1beta2.SparkApplicationSpec) (corev1.ResourceList, error) {
	factor := jvmOverheadFactor
	if s.Type == v1beta2.SparkApplicationTypePython || s.Type == v1beta2.SparkApplicationTypeR {
		factor = otherOverheadFactor
	}
	if s.MemoryOverheadFactor != nil && *s.MemoryOverheadFactor != "" {
		f, err := strconv.ParseFloat(*s.MemoryOverheadFactor, 64)
		if err != nil || f < 0 {
			return nil, fmt.Errorf("spec.memoryOverheadFactor %q: want a non-negative decimal", *s.MemoryOverheadFactor)
		}
		factor = f
	}
	driver, err := podResourcesOf("driver", &s.Driver.SparkPodSpec, factor)
	if err != nil {
		return nil, err
	}
	executor, err := podResourcesOf("executor", &s.Executor.SparkPodSpec, factor)
	if err != nil {
		return nil, err
	}
	n := int64(executorCount(s))
	total := corev1.ResourceList{}
	add := func(name corev1.ResourceName, d, e resource.Quantity) {
		q := d.DeepCopy()
		for range n {
			q.Add(e)
		}
		total[name] = q
	}
	add(corev1.ResourceCPU, driver.cpuRequest, executor.cpuRequest)
	add(corev1.ResourceRequestsCPU, driver.cpuRequest, executor.cpuRequest)
	add(corev1.ResourceLimitsCPU, driver.cpuLimit, executor.cpuLimit)
	add(corev1.ResourceMemory, driver.memRequest, executor.memRequest)
	add(corev1.ResourceRequestsMemory, driver.memRequest, executor.memRequest)
	add(corev1.ResourceLimitsMemory, driver.memLimit, executor.memLimit)
	total[corev1.ResourcePods] = *resource.NewQuantity(1+n, resource.DecimalSI)
	return total, nil
}

// executorCount is the number of executors the application starts with.
func executorCount(s *v1beta2.SparkApplicationSpec) int32 {
	n := int32(1)
	if s.Executor.Instances != nil {
		n = *s.Executor.Instances
	}
	if d := s.DynamicAllocation; d != nil && d.Enabled {
		if d.InitialExecutors != nil && *d.InitialExecutors > n {
			n = *d.InitialExecutors
		}
		if d.MinExecutors != nil && *d.MinExecutors > n {
			n = *d.MinExecutors
		}
	}
	return max(n, 0)
}

func podResourcesOf(role string, p *v1beta2.SparkPodSpec, factor float64) (podResources, error) {
	var r podResources
	cores := int64(v1beta2.DefaultCores)
	if p.Cores != nil {
		cores = int64(*p.Cores)
	}
	r.cpuRequest = *resource.NewQuantity(cores, resource.DecimalSI)
	if p.CoreRequest != nil && *p.CoreRequest != "" {
		q, err := resource.ParseQuantity(*p.CoreRequest)
		if err != nil {
			return r, fmt.Errorf("spec.%s.coreRequest %q: %v", role, *p.CoreRequest, err)
		}
		r.cpuRequest = q
	}
	r.cpuLimit = r.cpuRequest.DeepCopy()
	if p.CoreLimit != nil && *p.CoreLimit != "" {
		q, err := resource.ParseQuantity(*p.CoreLimit)
		if err != nil {
			return r, fmt.Errorf("spec.%s.coreLimit %q: %v", role, *p.CoreLimit, err)
		}
		r.cpuLimit = q
	}
	memStr := v1beta2.DefaultMemory
	if p.Memory != nil && *p.Memory != "" {
		memStr = *p.Memory
	}
	mem, err := sparkMiB(memStr)
	if err != nil {
		return r, fmt.Errorf("spec.%s.memory: %v", role, err)
	}
	overhead := max(int64(math.Floor(factor*float64(mem))), minOverheadMiB)
	if p.MemoryOverhead != nil && *p.MemoryOverhead != "" {
		if overhead, err = sparkMiB(*p.MemoryOverhead); err != nil {
			return r, fmt.Errorf("spec.%s.memoryOverhead: %v", role, err)
		}
	}
	r.memRequest = *resource.NewQuantity((mem+overhead)*1024*1024, resource.BinarySI)
	r.memLimit = r.memRequest.DeepCopy()
	if p.MemoryLimit != nil && *p.MemoryLimit != "" {
		q, err := resource.ParseQuantity(*p.MemoryLimit)
		if err != nil {
			return r, fmt.Errorf("spec.%s.memoryLimit %q: %v", role, *p.MemoryLimit, err)
		}
		r.memLimit = q
	}
	return r, nil
}

// sparkMiB parses a Spark size ("512m", "2g", "1024k"; MiB without a unit) into MiB.
func sparkMiB(s string) (int64, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	v = strings.TrimSuffix(v, "b")
	mult := map[byte]float64{'k': 1.0 / 1024, 'm': 1, 'g': 1024, 't': 1024 * 1024, 'p': 1024 * 1024 * 1024}
	f := 1.0
	if n := len(v); n > 0 {
		if m, ok := mult[v[n-1]]; ok {
			f, v = m, v[:n-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a Spark memory size such as 512m or 2g", s)
	}
	return int64(math.Ceil(float64(n) * f)), nil
}

// CheckQuota returns an error naming the first resource for which need exceeds what quota
// has left (spec.hard minus status.used). Resources the quota does not limit are not checked.
func CheckQuota(need corev1.ResourceList, quota *corev1.ResourceQuota) error {
	for _, name := range sortedResourceNames(quota.Spec.Hard) {
		hard := quota.Spec.Hard[name]
		want, ok := need[name]
		if !ok {
			continue
		}
		left := hard.DeepCopy()
		if used, ok := quota.Status.Used[name]; ok {
			left.Sub(used)
		}
		if want.Cmp(left) > 0 {
			return fmt.Errorf("the driver and executors need %s %s, but ResourceQuota %s has only %s of %s left",
				want.String(), name, quota.Name, left.String(), hard.String())
		}
	}
	return nil
}

func sortedResourceNames(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
