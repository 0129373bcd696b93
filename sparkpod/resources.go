/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Spark properties that size a pod, as Spark 4.0 reads them (BasicDriverFeatureStep,
// BasicExecutorFeatureStep, ResourceProfile).
const (
	KeyResourceType   = "spark.kubernetes.resource.type"
	KeyOverheadFactor = "spark.kubernetes.memoryOverheadFactor"
	keyOffHeapEnabled = "spark.memory.offHeap.enabled"
	keyOffHeapSize    = "spark.memory.offHeap.size"
	keyPySparkMemory  = "spark.executor.pyspark.memory"
	keyInstances      = "spark.executor.instances"
	keyDynamic        = "spark.dynamicAllocation.enabled"
	keyDynamicInitial = "spark.dynamicAllocation.initialExecutors"
	keyDynamicMin     = "spark.dynamicAllocation.minExecutors"
)

// Spark's memory overhead defaults: a fraction of the memory (0.1 for JVM applications, 0.4
// for Python and R), at least 384 MiB; and the executors Spark starts without dynamic
// allocation when spark.executor.instances is unset.
const (
	defaultMinOverhead    = "384m"
	jvmOverheadFactor     = 0.1
	nonJVMOverheadFactor  = 0.4
	defaultExecutors      = 2
	resourceTypePython    = "python"
	resourceTypeJava      = "java"
	defaultSparkMemory    = "1g"
	defaultSparkCores     = "1"
	resourcePrefixPattern = "spark.%s.resource."
)

// ContainerResources is what Spark sets on the main container of a pod of role, computed from
// the Spark configuration the driver reads (spark.kubernetes.resource.type included) exactly
// as Spark computes it: the cpu request (cores, or spark.kubernetes.<role>.request.cores) and
// limit (spark.kubernetes.<role>.limit.cores); memory plus overhead as request and limit (for
// executors also PySpark and off-heap memory); and spark.<role>.resource.<name>.amount as a
// <vendor>/<name> limit. Spark lays these over the pod template's own resources.
func ContainerResources(role Role, conf map[string]string) (corev1.ResourceRequirements, error) {
	get := func(key, def string) string {
		if v, ok := conf[key]; ok {
			return v
		}
		return def
	}
	r := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	spark, k8s := "spark."+string(role)+".", "spark.kubernetes."+string(role)+"."

	coresKey := spark + "cores"
	cores, err := strconv.ParseInt(strings.TrimSpace(get(coresKey, defaultSparkCores)), 10, 32)
	if err != nil || cores <= 0 {
		return r, fmt.Errorf("%s=%q: want a whole number of cores", coresKey, conf[coresKey])
	}
	cpuKey, cpu := coresKey, strconv.FormatInt(cores, 10)
	if v, ok := conf[k8s+"request.cores"]; ok {
		cpuKey, cpu = k8s+"request.cores", v
	}
	if r.Requests[corev1.ResourceCPU], err = resource.ParseQuantity(cpu); err != nil {
		return r, fmt.Errorf("%s=%q: %v", cpuKey, cpu, err)
	}
	if v, ok := conf[k8s+"limit.cores"]; ok {
		if r.Limits[corev1.ResourceCPU], err = resource.ParseQuantity(v); err != nil {
			return r, fmt.Errorf("%s=%q: %v", k8s+"limit.cores", v, err)
		}
	}

	mem, err := confMiB(conf, spark+"memory", defaultSparkMemory)
	if err != nil {
		return r, err
	}
	overhead, err := overheadMiB(role, conf, mem)
	if err != nil {
		return r, err
	}
	total := mem + overhead
	if role == RoleExecutor {
		if conf[KeyResourceType] == resourceTypePython {
			py, err := confMiB(conf, keyPySparkMemory, "0")
			if err != nil {
				return r, err
			}
			total += py
		}
		offHeap, err := offHeapMiB(conf)
		if err != nil {
			return r, err
		}
		total += offHeap
	}
	if total > math.MaxInt64>>20 {
		return r, fmt.Errorf("spark.%s.memory plus its overhead is larger than any memory size Kubernetes can express", role)
	}
	memory := *resource.NewQuantity(total<<20, resource.BinarySI)
	r.Requests[corev1.ResourceMemory] = memory
	r.Limits[corev1.ResourceMemory] = memory.DeepCopy()

	devices, err := deviceLimits(role, conf)
	if err != nil {
		return r, err
	}
	for name, q := range devices {
		r.Limits[name] = q
	}
	return r, nil
}

// overheadMiB is spark.<role>.memoryOverhead, else the larger of factor × memory and
// spark.<role>.minMemoryOverhead. The factor is spark.<role>.memoryOverheadFactor, else
// spark.kubernetes.memoryOverheadFactor, else 0.4 for Python and R and 0.1 for the JVM (what
// spark-submit passes on to the executors in spark.kubernetes.memoryOverheadFactor).
func overheadMiB(role Role, conf map[string]string, memMiB int64) (int64, error) {
	spark := "spark." + string(role) + "."
	if _, ok := conf[spark+"memoryOverhead"]; ok {
		return confMiB(conf, spark+"memoryOverhead", "")
	}
	factor := DefaultOverheadFactor(conf[KeyResourceType])
	for _, key := range []string{KeyOverheadFactor, spark + "memoryOverheadFactor"} {
		v, ok := conf[key]
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, fmt.Errorf("%s=%q: want a non-negative decimal such as 0.1", key, v)
		}
		factor = f
	}
	floor, err := confMiB(conf, spark+"minMemoryOverhead", defaultMinOverhead)
	if err != nil {
		return 0, err
	}
	// Spark truncates the product to an Int.
	return max(int64(min(factor*float64(memMiB), math.MaxInt32)), floor), nil
}

// DefaultOverheadFactor is the memory overhead factor of an application of a resource type
// (spark.kubernetes.resource.type) that sets none: 0.4 for Python and R, 0.1 for the JVM.
func DefaultOverheadFactor(resourceType string) float64 {
	if resourceType != "" && resourceType != resourceTypeJava {
		return nonJVMOverheadFactor
	}
	return jvmOverheadFactor
}

// offHeapMiB is spark.memory.offHeap.size (in bytes without a unit) when off-heap memory is
// enabled, as Spark adds it to each executor.
func offHeapMiB(conf map[string]string) (int64, error) {
	if v := strings.TrimSpace(conf[keyOffHeapEnabled]); !strings.EqualFold(v, "true") {
		if v != "" && !strings.EqualFold(v, "false") {
			return 0, fmt.Errorf("%s=%q: want true or false", keyOffHeapEnabled, v)
		}
		return 0, nil
	}
	size := strings.TrimSpace(conf[keyOffHeapSize])
	if size == "" {
		size = "0"
	}
	if _, err := strconv.ParseInt(size, 10, 64); err == nil {
		size += "b"
	}
	mib, err := ParseMiB(size)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", keyOffHeapSize, err)
	}
	if mib <= 0 {
		return 0, fmt.Errorf("%s must be at least 1m when %s is true", keyOffHeapSize, keyOffHeapEnabled)
	}
	return mib, nil
}

// deviceLimits turns spark.<role>.resource.<name>.amount and .vendor into <vendor>/<name>
// limits, as Spark asks the device plugins for GPUs and other devices.
func deviceLimits(role Role, conf map[string]string) (corev1.ResourceList, error) {
	prefix := fmt.Sprintf(resourcePrefixPattern, role)
	var out corev1.ResourceList
	for key := range conf {
		rest, ok := strings.CutPrefix(key, prefix)
		if !ok {
			continue
		}
		name, _, ok := strings.Cut(rest, ".")
		if !ok || name == "" {
			return nil, fmt.Errorf("%s: want %s<name>.amount", key, prefix)
		}
		if _, done := out[corev1.ResourceName(name)]; done {
			continue
		}
		amountKey, vendorKey := prefix+name+".amount", prefix+name+".vendor"
		amount, ok := conf[amountKey]
		if !ok {
			return nil, fmt.Errorf("%s is set but %s is not: Spark needs an amount for resource %s", key, amountKey, name)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(amount), 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s=%q: want a whole number", amountKey, amount)
		}
		vendor := strings.TrimSpace(conf[vendorKey])
		if vendor == "" {
			return nil, fmt.Errorf("resource %s is requested (%s) but %s is not set: Kubernetes needs it to name the resource", name, amountKey, vendorKey)
		}
		if out == nil {
			out = corev1.ResourceList{}
		}
		out[corev1.ResourceName(vendor+"/"+name)] = *resource.NewQuantity(n, resource.DecimalSI)
	}
	return out, nil
}

// InitialExecutors is the number of executors Spark starts with: with dynamic allocation the
// largest of spark.executor.instances, spark.dynamicAllocation.initialExecutors and
// minExecutors; else spark.executor.instances, 2 when unset.
func InitialExecutors(conf map[string]string) (int32, error) {
	count := func(key string, def int64) (int64, error) {
		v, ok := conf[key]
		if !ok {
			return def, nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%s=%q: want a non-negative whole number", key, v)
		}
		return n, nil
	}
	dynamic := strings.EqualFold(strings.TrimSpace(conf[keyDynamic]), "true")
	def := int64(defaultExecutors)
	if dynamic {
		def = 0
	}
	n, err := count(keyInstances, def)
	if err != nil || !dynamic {
		return int32(n), err
	}
	for _, key := range []string{keyDynamicMin, keyDynamicInitial} {
		v, err := count(key, 0)
		if err != nil {
			return 0, err
		}
		n = max(n, v)
	}
	return int32(n), nil
}

// confMiB reads a Spark size property in MiB.
func confMiB(conf map[string]string, key, def string) (int64, error) {
	v, ok := conf[key]
	if !ok {
		v = def
	}
	n, err := ParseMiB(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", key, err)
	}
	return n, nil
}
