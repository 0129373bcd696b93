/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package scheduler

import (
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/key"
	"github.com/sparkop/spark-operator/sparkpod"
)

// Kind is the kind of object a workload is (package key owns it).
type Kind = key.Kind

// The kinds of workload a batch scheduler admits.
const (
	KindApplication = key.KindApplication
	KindSession     = key.KindSession
)

// WorkloadKey names a workload (package key owns it).
type WorkloadKey = key.Workload

// ApplicationKey is the key of the SparkApplication namespace/name.
func ApplicationKey(key types.NamespacedName) WorkloadKey {
	return WorkloadKey{Kind: KindApplication, NamespacedName: key}
}

// Workload is what a batch scheduler decides for: one run of an application or a session, its
// scheduling options and its demand.
type Workload struct {
	Key WorkloadKey
	// Object is the SparkApplication (a defaulted copy) or the SparkConnect. A scheduler must not
	// change it; it may keep what it holds for the workload on the stored object.
	Object client.Object
	// Run identifies the run being admitted (an application's submission ID, a session's server
	// submission ID): what a scheduler holds for one run is not another run's.
	Run string
	// Queue and PriorityClassName are the scheduling options the workload names, "" for none.
	Queue, PriorityClassName string
	// Demand is the whole gang: the driver (or server) and the initial executors. Release does
	// not read it.
	Demand sparkpod.Demand
}

// ApplicationWorkload is app's current run as a workload, without its demand (which
// sparkpod.DemandOf computes and may refuse).
func ApplicationWorkload(app *v1beta2.SparkApplication) Workload {
	w := Workload{
		Key:    WorkloadKey{Kind: KindApplication, NamespacedName: types.NamespacedName{Namespace: app.Namespace, Name: app.Name}},
		Object: app,
		Run:    app.Status.SubmissionID,
	}
	if o := app.Spec.BatchSchedulerOptions; o != nil {
		w.Queue = ptr.Deref(o.Queue, "")
		w.PriorityClassName = ptr.Deref(o.PriorityClassName, "")
	}
	// The batch scheduler options' priority class wins; else the driver's gives the priority.
	if w.PriorityClassName == "" {
		w.PriorityClassName = ptr.Deref(app.Spec.Driver.PriorityClassName, "")
	}
	return w
}

// SessionWorkload is conn's current server as a workload, without its demand
// (sparkpod.ConnectDemand computes it). Its queue and priority class are those of
// spec.batchSchedulerOptions; without a priority class there, the server template's gives the
// priority, as an application's driver's does.
func SessionWorkload(conn *v1alpha1.SparkConnect) Workload {
	w := Workload{
		Key:    WorkloadKey{Kind: KindSession, NamespacedName: types.NamespacedName{Namespace: conn.Namespace, Name: conn.Name}},
		Object: conn,
		Run:    conn.Status.Server.SubmissionID,
	}
	if o := conn.Spec.BatchSchedulerOptions; o != nil {
		w.Queue = ptr.Deref(o.Queue, "")
		w.PriorityClassName = ptr.Deref(o.PriorityClassName, "")
	}
	if t := conn.Spec.Server.Template; w.PriorityClassName == "" && t != nil {
		w.PriorityClassName = t.Spec.PriorityClassName
	}
	return w
}
