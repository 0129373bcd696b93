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

	"gopkg.in/inf.v0"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// Role is the part a pod plays in a Spark application.
type Role string

const (
	RoleDriver   Role = v1beta2.SparkRoleDriver
	RoleExecutor Role = v1beta2.SparkRoleExecutor
)

// Spark's memory overhead defaults: a fraction of the memory (0.1 for JVM applications, 0.4
// for Python and R), at least 384 MiB.
const (
	minOverheadMiB      = 384
	jvmOverheadFactor   = 0.1
	otherOverheadFactor = 0.4
)

// PodDemand is what each pod of one role asks the cluster for, and where it may run.
type PodDemand struct {
	Role Role
	// Count is how many pods of this role the application starts with: 1 driver, or the
	// initial executors (see InitialExecutors).
	Count int32
	// Requests and Limits are one pod's container resources: cpu, memory and any extended
	// resource (GPUs and other device-plugin resources).
	Requests corev1.ResourceList
	Limits   corev1.ResourceList
	// NodeSelector, Tolerations and Affinity restrict the nodes a pod of this role may use.
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
	Affinity     *corev1.Affinity
}

// Demand is an application's gang: its driver and its initial executors, which must fit at
// once for the application to make progress.
type Demand struct {
	Driver, Executor PodDemand
}

// Roles lists the demand of each role, driver first.
func (d Demand) Roles() []PodDemand { return []PodDemand{d.Driver, d.Executor} }

// Total is what the whole gang requests: each role's requests times its count, and the number
// of pods under "pods".
func (d Demand) Total() corev1.ResourceList {
	total := corev1.ResourceList{}
	var pods int64
	for _, p := range d.Roles() {
		pods += int64(p.Count)
		for name, q := range p.Requests {
			sum := total[name]
			sum.Add(Times(q, p.Count))
			total[name] = sum
		}
	}
	total[corev1.ResourcePods] = *resource.NewQuantity(pods, resource.DecimalSI)
	return total
}

// Times returns q·n exactly. Quantities have no multiplication, and adding q n times would
// loop 2³¹ times for the largest executor count.
func Times(q resource.Quantity, n int32) resource.Quantity {
	product := new(inf.Dec).Mul(q.AsDec(), inf.NewDec(int64(n), 0))
	return *resource.NewDecimalQuantity(*product, q.Format)
}

// InitialExecutors is the number of executors the application starts with: with dynamic
// allocation the largest of instances, initialExecutors and minExecutors (Spark starts that
// many), else instances.
func InitialExecutors(s *v1beta2.SparkApplicationSpec) int32 {
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

// DemandOf computes the demand of app's spec. Errors name the field at fault.
func DemandOf(app *v1beta2.SparkApplication) (Demand, error) {
	s := &app.Spec
	factor := jvmOverheadFactor
	if s.Type == v1beta2.SparkApplicationTypePython || s.Type == v1beta2.SparkApplicationTypeR {
		factor = otherOverheadFactor
	}
	if s.MemoryOverheadFactor != nil && *s.MemoryOverheadFactor != "" {
		f, err := strconv.ParseFloat(*s.MemoryOverheadFactor, 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return Demand{}, fmt.Errorf("spec.memoryOverheadFactor %q: want a non-negative decimal", *s.MemoryOverheadFactor)
		}
		factor = f
	}
	driver, err := podDemand(RoleDriver, s, &s.Driver.SparkPodSpec, factor)
	if err != nil {
		return Demand{}, err
	}
	driver.Count = 1
	executor, err := podDemand(RoleExecutor, s, &s.Executor.SparkPodSpec, factor)
	if err != nil {
		return Demand{}, err
	}
	executor.Count = InitialExecutors(s)
	return Demand{Driver: driver, Executor: executor}, nil
}

func podDemand(role Role, s *v1beta2.SparkApplicationSpec, p *v1beta2.SparkPodSpec, factor float64) (PodDemand, error) {
	d := PodDemand{Role: role, Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	cores := int64(v1beta2.DefaultCores)
	if p.Cores != nil {
		cores = int64(*p.Cores)
	}
	cpu := *resource.NewQuantity(cores, resource.DecimalSI)
	if p.CoreRequest != nil && *p.CoreRequest != "" {
		q, err := resource.ParseQuantity(*p.CoreRequest)
		if err != nil {
			return d, fmt.Errorf("spec.%s.coreRequest %q: %v", role, *p.CoreRequest, err)
		}
		cpu = q
	}
	d.Requests[corev1.ResourceCPU] = cpu
	d.Limits[corev1.ResourceCPU] = cpu.DeepCopy()
	if p.CoreLimit != nil && *p.CoreLimit != "" {
		q, err := resource.ParseQuantity(*p.CoreLimit)
		if err != nil {
			return d, fmt.Errorf("spec.%s.coreLimit %q: %v", role, *p.CoreLimit, err)
		}
		d.Limits[corev1.ResourceCPU] = q
	}

	memStr := v1beta2.DefaultMemory
	if p.Memory != nil && *p.Memory != "" {
		memStr = *p.Memory
	}
	mem, err := ParseMiB(memStr)
	if err != nil {
		return d, fmt.Errorf("spec.%s.memory: %v", role, err)
	}
	scaled := math.Floor(factor * float64(mem))
	if scaled > math.MaxInt64>>20 {
		return d, fmt.Errorf("spec.memoryOverheadFactor %g of spec.%s.memory %q is larger than any memory size Kubernetes can express", factor, role, memStr)
	}
	overhead := max(int64(scaled), minOverheadMiB)
	if p.MemoryOverhead != nil && *p.MemoryOverhead != "" {
		if overhead, err = ParseMiB(*p.MemoryOverhead); err != nil {
			return d, fmt.Errorf("spec.%s.memoryOverhead: %v", role, err)
		}
	}
	if mem+overhead > math.MaxInt64>>20 {
		return d, fmt.Errorf("spec.%s.memory %q plus its overhead is larger than any memory size Kubernetes can express", role, memStr)
	}
	memory := *resource.NewQuantity((mem+overhead)<<20, resource.BinarySI)
	d.Requests[corev1.ResourceMemory] = memory
	d.Limits[corev1.ResourceMemory] = memory.DeepCopy()
	if p.MemoryLimit != nil && *p.MemoryLimit != "" {
		q, err := resource.ParseQuantity(*p.MemoryLimit)
		if err != nil {
			return d, fmt.Errorf("spec.%s.memoryLimit %q: %v", role, *p.MemoryLimit, err)
		}
		d.Limits[corev1.ResourceMemory] = q
	}

	if g := p.GPU; g != nil && g.Name != "" && g.Quantity > 0 {
		q := *resource.NewQuantity(g.Quantity, resource.DecimalSI)
		d.Requests[corev1.ResourceName(g.Name)] = q
		d.Limits[corev1.ResourceName(g.Name)] = q.DeepCopy()
	}

	d.NodeSelector = map[string]string{}
	for k, v := range s.NodeSelector {
		d.NodeSelector[k] = v
	}
	for k, v := range p.NodeSelector {
		d.NodeSelector[k] = v
	}
	d.Tolerations = p.Tolerations
	d.Affinity = p.Affinity
	return d, nil
}
