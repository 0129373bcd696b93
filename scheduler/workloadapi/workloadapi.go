/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package workloadapi is spec.batchScheduler: kubernetes, gang scheduling through the Workload
// API of Kubernetes 1.37 (scheduling.k8s.io/v1beta1 Workload and PodGroup, and kube-scheduler's
// GangScheduling plugin).
//
// Counting pods cannot keep Spark from deadlocking: executors do not exist until their driver
// runs, so a group of driver and executors never reaches its count, and a group of drivers
// alone lets drivers take the room their executors need. So admission stays the gang
// scheduler's (its queues, quotas and fit decide when a run starts, on which nodes), and the
// Workload API does what it is good at, placing a group all or nothing: this package is a
// variant of the gang scheduler (gang.Placement). Per run it creates a Workload of two pod
// group templates and their two PodGroups, owned by the application: the driver's (a group of
// one, basic scheduling) and the executors' (gang scheduling, minCount the initial
// executors). The driver goes to its planned node as gang's does; the executors are not gated
// but join the executors' PodGroup, confined to the nodes the admission planned for them (and
// each, by the webhook, to its own planned node), so kube-scheduler binds none of them until it
// can bind them all, on capacity the admission found and keeps for them.
package workloadapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/sparkpod"
)

// Name is the value of spec.batchScheduler that selects the Workload API variant.
const Name = "kubernetes"

// The pod group templates of a run's Workload, and the suffixes of its PodGroups' names.
const (
	TemplateDriver    = "driver"
	TemplateExecutors = "executors"
)

// Placement places the runs the gang core admits for applications naming kubernetes.
type Placement struct{}

var (
	_ gang.Placement        = Placement{}
	_ gang.PlacementObjects = Placement{}
	_ gang.PlacementPods    = Placement{}
)

func (Placement) Name() string { return Name }

// Pods are gang's settings (the driver on its planned node, the queue label) with the run's
// PodGroups: the driver joins the driver's group; the executors, not gated, join the
// executors' group and may go only to the nodes the admission planned for them.
func (Placement) Pods(w scheduler.Workload, r gang.Reservation) (sparkpod.RoleScheduling, error) {
	names, err := NamesOf(w)
	if err != nil {
		return sparkpod.RoleScheduling{}, err
	}
	// kube-scheduler places these runs' pods itself, and placeholders do not hold their room.
	return r.PodsPlacedElsewhere(sparkpod.RoleScheduling{
		Driver:   sparkpod.Scheduling{SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: ptr.To(names.Driver)}},
		Executor: sparkpod.Scheduling{SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: ptr.To(names.Executors)}},
	}), nil
}

// PlacePod puts a pod of an admitted run that lacks a scheduling group in the run's group of
// its role, as the submitters do: the webhook fills in what a pod was created without (by a
// Spark that drops the template's spec.schedulingGroup, say). The gang core's variant offers
// it only the pods of applications naming kubernetes. A pod of another run than the
// reservation's, or of no known role, is left alone.
func (Placement) PlacePod(pod *corev1.Pod, owner client.Object, r gang.Reservation) bool {
	if pod.Spec.SchedulingGroup != nil {
		return false
	}
	run := pod.Labels[v1beta2.LabelSubmissionID]
	if run == "" || r.SubmissionID != run {
		return false
	}
	names, err := NamesOf(scheduler.Workload{Key: scheduler.ApplicationKey(client.ObjectKeyFromObject(owner)), Run: run})
	if err != nil {
		return false
	}
	switch pod.Labels[v1beta2.SparkRoleLabel] {
	case v1beta2.SparkRoleDriver:
		pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To(names.Driver)}
	case v1beta2.SparkRoleExecutor:
		if len(r.Executors) == 0 {
			return false // no executors' group for this run
		}
		pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To(names.Executors)}
	default:
		return false
	}
	return true
}

// RunObjects are the run's Workload and PodGroups (the controllers create them, owned by the
// application, before the driver pod). The executors' group needs as many executors as the
// admission planned; a run that plans none has no executors' group.
func (Placement) RunObjects(_ context.Context, w scheduler.Workload, r gang.Reservation) ([]client.Object, error) {
	if r.SubmissionID != w.Run {
		return nil, fmt.Errorf("%s has no reservation for run %s", w.Key, w.Run)
	}
	var executors int32
	for _, k := range r.Executors {
		executors += k
	}
	return Objects(w, executors)
}

// Names are the names of one run's objects.
type Names struct {
	Workload, Driver, Executors string
}

// NamesOf names w's run's objects after the application and the run: a rerun gets new ones,
// and the name of the run's objects never collides with another application's. Names too long
// for an object name are shortened, a hash of the whole keeping them apart.
func NamesOf(w scheduler.Workload) (Names, error) {
	if w.Key.Name == "" || w.Run == "" {
		return Names{}, fmt.Errorf("workload %s has no run to name its objects after", w.Key)
	}
	run := w.Run
	if len(run) > 8 {
		run = run[:8]
	}
	base := w.Key.Name + "-" + run
	// The longest suffix is "-executors": the PodGroup names must stay DNS subdomains.
	if limit := validation.DNS1123SubdomainMaxLength - len("-"+TemplateExecutors); len(base) > limit {
		sum := sha256.Sum256([]byte(w.Key.Name + "/" + w.Run))
		base = base[:limit-17] + "-" + hex.EncodeToString(sum[:])[:16]
	}
	return Names{Workload: base, Driver: base + "-" + TemplateDriver, Executors: base + "-" + TemplateExecutors}, nil
}

// Objects builds w's run's Workload and PodGroups, for executors planned executors.
// EnsureRunObjects sets their namespace and owner.
func Objects(w scheduler.Workload, executors int32) ([]client.Object, error) {
	if w.Key.Kind != scheduler.KindApplication {
		return nil, fmt.Errorf("%s: the %s batch scheduler places SparkApplications only", w.Key, Name)
	}
	if executors < 0 {
		return nil, fmt.Errorf("%s: %d executors planned", w.Key, executors)
	}
	names, err := NamesOf(w)
	if err != nil {
		return nil, err
	}
	driver := schedulingv1beta1.PodGroupTemplate{
		Name:              TemplateDriver,
		SchedulingPolicy:  schedulingv1beta1.PodGroupSchedulingPolicy{Basic: &schedulingv1beta1.BasicSchedulingPolicy{}},
		DisruptionMode:    &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}},
		PriorityClassName: w.PriorityClassName,
	}
	templates := []schedulingv1beta1.PodGroupTemplate{driver}
	if executors > 0 {
		// Spark replaces a lost executor: one may go without the others.
		templates = append(templates, schedulingv1beta1.PodGroupTemplate{
			Name:              TemplateExecutors,
			SchedulingPolicy:  schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: executors}},
			DisruptionMode:    &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}},
			PriorityClassName: w.PriorityClassName,
		})
	}
	workload := &schedulingv1beta1.Workload{
		TypeMeta:   metav1.TypeMeta{APIVersion: schedulingv1beta1.SchemeGroupVersion.String(), Kind: "Workload"},
		ObjectMeta: objectMeta(w, names.Workload),
		Spec: schedulingv1beta1.WorkloadSpec{
			ControllerRef: &schedulingv1beta1.TypedLocalObjectReference{
				APIGroup: v1beta2.GroupVersion.Group, Kind: string(scheduler.KindApplication), Name: w.Key.Name,
			},
			PodGroupTemplates: templates,
		},
	}
	objs := []client.Object{workload}
	for _, t := range templates {
		name := names.Driver
		if t.Name == TemplateExecutors {
			name = names.Executors
		}
		objs = append(objs, &schedulingv1beta1.PodGroup{
			TypeMeta:   metav1.TypeMeta{APIVersion: schedulingv1beta1.SchemeGroupVersion.String(), Kind: "PodGroup"},
			ObjectMeta: objectMeta(w, name),
			Spec: schedulingv1beta1.PodGroupSpec{
				WorkloadRef:       &schedulingv1beta1.WorkloadReference{WorkloadName: names.Workload, TemplateName: t.Name},
				SchedulingPolicy:  *t.SchedulingPolicy.DeepCopy(),
				DisruptionMode:    t.DisruptionMode.DeepCopy(),
				PriorityClassName: t.PriorityClassName,
			},
		})
	}
	return objs, nil
}

// objectMeta names one of w's run's objects and labels it with the application and run, as
// its pods are labelled.
func objectMeta(w scheduler.Workload, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: w.Key.Namespace, Labels: map[string]string{
		v1beta2.LabelAppName: w.Key.Name, v1beta2.LabelSubmissionID: w.Run,
	}}
}
