/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package gangtest builds the gang scheduler's model objects for tests, fluently, so that a
// test reads as its scenario:
//
//	gangtest.MakeWorkload("etl").Queue("team-a").Driver("1", "1Gi").Executors(4, "2", "4Gi").Obj()
//	gangtest.MakeNode("n1").Capacity("16", "64Gi").Used("4", "8Gi").Obj()
//	gangtest.MakeQueue("team-a").Parent("org").Quota("cpu", "32").Obj()
package gangtest

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/scheduler/key"
	"github.com/sparkop/spark-operator/sparkpod"
)

// Namespace is the namespace of workloads built here unless set otherwise.
const Namespace = "ns"

// Epoch is the creation time of a workload built here unless set otherwise.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// WorkloadWrapper builds a core.Workload.
type WorkloadWrapper struct{ w core.Workload }

// MakeWorkload starts a workload in queue "default", created at Epoch, with a driver of
// 1 cpu and 1Gi and no executors.
func MakeWorkload(name string) *WorkloadWrapper {
	return (&WorkloadWrapper{w: core.Workload{
		Key:     core.Key{Kind: key.KindApplication, NamespacedName: types.NamespacedName{Namespace: Namespace, Name: name}},
		Queue:   "default",
		Created: Epoch,
		Demand: sparkpod.Demand{
			Driver:   sparkpod.PodDemand{Role: sparkpod.RoleDriver, Count: 1},
			Executor: sparkpod.PodDemand{Role: sparkpod.RoleExecutor},
		},
	}}).Driver("1", "1Gi")
}

// Obj returns the workload.
func (b *WorkloadWrapper) Obj() core.Workload { return b.w }

// Namespace sets the workload's namespace.
func (b *WorkloadWrapper) Namespace(ns string) *WorkloadWrapper {
	b.w.Key.Namespace = ns
	return b
}

// Session makes the workload a SparkConnect session (an application unless set).
func (b *WorkloadWrapper) Session() *WorkloadWrapper {
	b.w.Key.Kind = key.KindSession
	return b
}

// Queue sets the queue the workload names.
func (b *WorkloadWrapper) Queue(q string) *WorkloadWrapper {
	b.w.Queue = q
	return b
}

// Priority sets the application's priority.
func (b *WorkloadWrapper) Priority(p int32) *WorkloadWrapper {
	b.w.Priority = p
	return b
}

// Created sets the creation time to Epoch plus d.
func (b *WorkloadWrapper) Created(d time.Duration) *WorkloadWrapper {
	b.w.Created = Epoch.Add(d)
	return b
}

// Driver sets the driver's cpu and memory requests.
func (b *WorkloadWrapper) Driver(cpu, memory string) *WorkloadWrapper {
	b.w.Demand.Driver.Requests = cpuMem(cpu, memory)
	return b
}

// Executors sets the initial executor count and each executor's cpu and memory requests.
func (b *WorkloadWrapper) Executors(n int32, cpu, memory string) *WorkloadWrapper {
	b.w.Demand.Executor.Count = n
	b.w.Demand.Executor.Requests = cpuMem(cpu, memory)
	return b
}

// DriverResource adds a request (a GPU, say) to the driver.
func (b *WorkloadWrapper) DriverResource(name corev1.ResourceName, q string) *WorkloadWrapper {
	b.w.Demand.Driver.Requests[name] = resource.MustParse(q)
	return b
}

// ExecutorResource adds a request (a GPU, say) to each executor.
func (b *WorkloadWrapper) ExecutorResource(name corev1.ResourceName, q string) *WorkloadWrapper {
	if b.w.Demand.Executor.Requests == nil {
		b.w.Demand.Executor.Requests = corev1.ResourceList{}
	}
	b.w.Demand.Executor.Requests[name] = resource.MustParse(q)
	return b
}

// NodeSelector adds a node selector entry to both roles.
func (b *WorkloadWrapper) NodeSelector(key, value string) *WorkloadWrapper {
	for _, d := range b.roles() {
		if d.NodeSelector == nil {
			d.NodeSelector = map[string]string{}
		}
		d.NodeSelector[key] = value
	}
	return b
}

// Toleration adds a toleration of key=value (any effect) to both roles.
func (b *WorkloadWrapper) Toleration(key, value string) *WorkloadWrapper {
	for _, d := range b.roles() {
		d.Tolerations = append(d.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpEqual, Value: value})
	}
	return b
}

// RequireNodeLabelIn adds required node affinity to both roles: label key in values.
func (b *WorkloadWrapper) RequireNodeLabelIn(key string, values ...string) *WorkloadWrapper {
	return b.RequireNode(corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values})
}

// RequireNode sets required node affinity of one term with req on both roles.
func (b *WorkloadWrapper) RequireNode(req corev1.NodeSelectorRequirement) *WorkloadWrapper {
	for _, d := range b.roles() {
		d.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req}}},
			},
		}}
	}
	return b
}

// Admitted marks the workload admitted from its queue, its driver on driverNode and its
// executors as given (node → count).
func (b *WorkloadWrapper) Admitted(driverNode string, executors map[string]int32) *WorkloadWrapper {
	b.w.Admission = &core.Admission{Queue: b.w.Queue, Driver: driverNode, Executors: executors}
	return b
}

// Unrecorded marks the workload as waiting for its controller to record its submission.
func (b *WorkloadWrapper) Unrecorded() *WorkloadWrapper {
	b.w.Unrecorded = true
	return b
}

// Extra sets, on an admitted workload, the executors running beyond its gang, per node.
func (b *WorkloadWrapper) Extra(executors map[string]int32) *WorkloadWrapper {
	b.w.Dynamic.Extra = executors
	return b
}

// Asking sets, on an admitted workload, how many executors ask for a node beyond its plan,
// spare of which replace executors that ended.
func (b *WorkloadWrapper) Asking(n, spare int32) *WorkloadWrapper {
	b.w.Dynamic.Asking, b.w.Dynamic.Spare = n, spare
	return b
}

func (b *WorkloadWrapper) roles() []*sparkpod.PodDemand {
	return []*sparkpod.PodDemand{&b.w.Demand.Driver, &b.w.Demand.Executor}
}

// NodeWrapper builds a core.Node.
type NodeWrapper struct{ n core.Node }

// MakeNode starts a schedulable node of 16 cpu, 64Gi and 110 pods, with nothing used.
func MakeNode(name string) *NodeWrapper {
	b := &NodeWrapper{n: core.Node{Name: name, Labels: map[string]string{corev1.LabelHostname: name}}}
	return b.Capacity("16", "64Gi").Resource(corev1.ResourcePods, "110")
}

// Obj returns the node.
func (b *NodeWrapper) Obj() core.Node { return b.n }

// Capacity sets the allocatable cpu and memory.
func (b *NodeWrapper) Capacity(cpu, memory string) *NodeWrapper {
	if b.n.Allocatable == nil {
		b.n.Allocatable = corev1.ResourceList{}
	}
	for k, v := range cpuMem(cpu, memory) {
		b.n.Allocatable[k] = v
	}
	return b
}

// Resource sets an allocatable resource (nvidia.com/gpu, pods, ...).
func (b *NodeWrapper) Resource(name corev1.ResourceName, q string) *NodeWrapper {
	b.n.Allocatable[name] = resource.MustParse(q)
	return b
}

// Used sets the cpu and memory already requested on the node.
func (b *NodeWrapper) Used(cpu, memory string) *NodeWrapper {
	if b.n.Used == nil {
		b.n.Used = corev1.ResourceList{}
	}
	for k, v := range cpuMem(cpu, memory) {
		b.n.Used[k] = v
	}
	return b
}

// UsedResource sets an amount of a resource already requested on the node.
func (b *NodeWrapper) UsedResource(name corev1.ResourceName, q string) *NodeWrapper {
	if b.n.Used == nil {
		b.n.Used = corev1.ResourceList{}
	}
	b.n.Used[name] = resource.MustParse(q)
	return b
}

// Label adds a label.
func (b *NodeWrapper) Label(key, value string) *NodeWrapper {
	b.n.Labels[key] = value
	return b
}

// Taint adds a taint key=value with effect.
func (b *NodeWrapper) Taint(key, value string, effect corev1.TaintEffect) *NodeWrapper {
	b.n.Taints = append(b.n.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	return b
}

// Unschedulable cordons the node.
func (b *NodeWrapper) Unschedulable() *NodeWrapper {
	b.n.Unschedulable = true
	return b
}

// QueueWrapper builds a core.Queue.
type QueueWrapper struct{ q core.Queue }

// MakeQueue starts a top-level queue with no quota (nothing limited).
func MakeQueue(name string) *QueueWrapper { return &QueueWrapper{q: core.Queue{Name: name}} }

// Obj returns the queue.
func (b *QueueWrapper) Obj() *core.Queue { q := b.q; return &q }

// Parent sets the parent queue.
func (b *QueueWrapper) Parent(p string) *QueueWrapper {
	b.q.Parent = p
	return b
}

// Priority sets the queue's priority.
func (b *QueueWrapper) Priority(p int32) *QueueWrapper {
	b.q.Priority = p
	return b
}

// Quota sets the quota of resource name.
func (b *QueueWrapper) Quota(name corev1.ResourceName, q string) *QueueWrapper {
	if b.q.Quota == nil {
		b.q.Quota = corev1.ResourceList{}
	}
	b.q.Quota[name] = resource.MustParse(q)
	return b
}

// BorrowingLimit caps borrowing of resource name.
func (b *QueueWrapper) BorrowingLimit(name corev1.ResourceName, q string) *QueueWrapper {
	if b.q.BorrowingLimit == nil {
		b.q.BorrowingLimit = corev1.ResourceList{}
	}
	b.q.BorrowingLimit[name] = resource.MustParse(q)
	return b
}

// NoBorrowing keeps the queue within its own quota.
func (b *QueueWrapper) NoBorrowing() *QueueWrapper {
	b.q.NoBorrowing = true
	return b
}

// Queues indexes queues by name, as core.Snapshot holds them.
func Queues(qs ...*core.Queue) map[string]*core.Queue {
	m := make(map[string]*core.Queue, len(qs))
	for _, q := range qs {
		m[q.Name] = q
	}
	return m
}

func cpuMem(cpu, memory string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
}
