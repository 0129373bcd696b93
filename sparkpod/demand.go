/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

import (
	"gopkg.in/inf.v0"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkconf"
)

// Role is the part a pod plays in a Spark application: sparkconf's, so that a role means one
// thing from the spec to the properties to the pods.
type Role = sparkconf.Role

const (
	RoleDriver   = sparkconf.Driver
	RoleExecutor = sparkconf.Executor
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
	total := corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(0, resource.DecimalSI)}
	for _, p := range d.Roles() {
		AddMembers(total, p.Requests, int64(p.Count))
	}
	return total
}

// Times returns q·n exactly. Quantities have no multiplication, and adding q n times would
// loop 2³¹ times for the largest executor count.
func Times(q resource.Quantity, n int64) resource.Quantity {
	product := new(inf.Dec).Mul(q.AsDec(), inf.NewDec(n, 0))
	return *resource.NewDecimalQuantity(*product, q.Format)
}

// DemandOf computes the demand of app's spec (defaulted here, as the API server stores it) the
// way its pods are built: the role's pod template with the spec's settings (Template), Spark's
// container resources and node selector from the properties the submitters give it, and what
// the webhook lays over those (Customise: GPU, memory limit, sidecars). So the demand equals
// what the pods request. Errors name the field or property at fault.
func DemandOf(app *v1beta2.SparkApplication) (Demand, error) {
	app, conf, err := defaultedConf(app)
	if err != nil {
		return Demand{}, err
	}
	driver, err := podDemand(RoleDriver, app, conf)
	if err != nil {
		return Demand{}, err
	}
	driver.Count = 1
	executor, err := podDemand(RoleExecutor, app, conf)
	if err != nil {
		return Demand{}, err
	}
	if executor.Count, err = InitialExecutors(conf); err != nil {
		return Demand{}, err
	}
	return Demand{Driver: driver, Executor: executor}, nil
}

// SparkContainerOf is what Spark sets on the main container of app's pods of role
// (ContainerResources of the application's properties, its spec defaulted as the API server
// stores it), before the pod template, the sidecars and the webhook add theirs.
func SparkContainerOf(app *v1beta2.SparkApplication, role Role) (corev1.ResourceRequirements, error) {
	_, conf, err := defaultedConf(app)
	if err != nil {
		return corev1.ResourceRequirements{}, err
	}
	return ContainerResources(role, conf)
}

// defaultedConf is a defaulted copy of app and the Spark properties its pods are built from.
func defaultedConf(app *v1beta2.SparkApplication) (*v1beta2.SparkApplication, map[string]string, error) {
	app = app.DeepCopy()
	v1beta2.SetSparkApplicationDefaults(app)
	sub, err := sparkconf.Build(app, sparkconf.Options{})
	if err != nil {
		return nil, nil, err
	}
	conf := sub.Map()
	conf[KeyResourceType] = ResourceType(app.Spec.Type)
	return app, conf, nil
}

// ResourceType is spark.kubernetes.resource.type for an application type: python, r or java.
func ResourceType(t v1beta2.SparkApplicationType) string {
	switch t {
	case v1beta2.SparkApplicationTypePython:
		return resourceTypePython
	case v1beta2.SparkApplicationTypeR:
		return "r"
	}
	return resourceTypeJava
}

// podDemand is what one pod of role asks for: the pod as the submitters and Spark build it,
// then the webhook's pass over it.
func podDemand(role Role, app *v1beta2.SparkApplication, conf map[string]string) (PodDemand, error) {
	pod, err := Template(app, role)
	if err != nil {
		return PodDemand{}, err
	}
	spark, err := ContainerResources(role, conf)
	if err != nil {
		return PodDemand{}, err
	}
	r := &pod.Spec.Containers[SparkContainerIndex(pod, role)].Resources
	r.Requests = setAll(r.Requests, spark.Requests)
	r.Limits = setAll(r.Limits, spark.Limits)
	pod.Spec.NodeSelector = setAll(pod.Spec.NodeSelector, NodeSelector(role, conf))
	if err := Customise(pod, app, role); err != nil {
		return PodDemand{}, err
	}
	d := PodDemand{Role: role, NodeSelector: pod.Spec.NodeSelector, Tolerations: pod.Spec.Tolerations, Affinity: pod.Spec.Affinity}
	d.Requests, d.Limits = PodResources(pod)
	if d.NodeSelector == nil {
		d.NodeSelector = map[string]string{}
	}
	return d, nil
}

// PodResources is what the scheduler counts for pod (its requests, once the API server has
// defaulted it) and what the pod is limited to, over its containers and init containers.
func PodResources(pod *corev1.Pod) (requests, limits corev1.ResourceList) {
	return podRequests(pod), resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
}

// podRequests counts a container's limit as its request where it has none, as the API server's
// defaulting does.
func podRequests(pod *corev1.Pod) corev1.ResourceList {
	pod = pod.DeepCopy()
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			r := &list[i].Resources
			for name, q := range r.Limits {
				if _, ok := r.Requests[name]; !ok {
					r.Requests = setAll(r.Requests, corev1.ResourceList{name: q})
				}
			}
		}
	}
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

// AddMembers adds what n pods of these requests take of a node into into: n times the requests
// (a pods entry in them ignored) and n pod slots. Nothing for n ≤ 0.
func AddMembers(into, requests corev1.ResourceList, n int64) {
	if n <= 0 {
		return
	}
	for name, q := range requests {
		if name == corev1.ResourcePods {
			continue
		}
		into[name] = plusTimes(into[name], q, n)
	}
	slots := into[corev1.ResourcePods]
	slots.Add(*resource.NewQuantity(n, resource.DecimalSI))
	into[corev1.ResourcePods] = slots
}

// AddTimes adds n × l into into (n may be negative).
func AddTimes(into, l corev1.ResourceList, n int64) {
	for name, q := range l {
		into[name] = plusTimes(into[name], q, n)
	}
}

// plusTimes is sum + n·q; n = ±1, the schedulers' every-cycle case, without the multiplication.
func plusTimes(sum, q resource.Quantity, n int64) resource.Quantity {
	switch n {
	case 1:
		sum.Add(q)
	case -1:
		sum.Sub(q)
	default:
		sum.Add(Times(q, n))
	}
	return sum
}
