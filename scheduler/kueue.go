/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package scheduler

import "github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"

// LabelKueueQueueName is the label by which Kueue queues a SparkApplication (its LocalQueue).
const LabelKueueQueueName = "kueue.x-k8s.io/queue-name"

// KueueName is the batch scheduler of the applications Kueue queues and no queueing batch
// scheduler does: Kueue decides on its ClusterQueue's quota and resumes the application, then
// the operator's gang core admits it whole by the nodes' fit alone, node by node, and keeps
// that room until its pods are bound (scheduler/gang). The operator serves it whenever the
// gang core runs; applications reach it through NameOf, or by naming it.
const KueueName = "kueue"

// QueuedByKueue reports whether Kueue queues app: it carries Kueue's queue label.
func QueuedByKueue(app *v1beta2.SparkApplication) bool {
	_, ok := app.Labels[LabelKueueQueueName]
	return ok
}

// NameOf is the name of the batch scheduler that admits app: the one it names, else the
// operator's default def. An application Kueue queues goes to KueueName instead, when that is
// served (kueue), if it names "default", or names none while the default is none, "default",
// or a scheduler that queues workloads itself (defQueues): Kueue alone queues it, and the gang
// core admits it by the nodes' fit. One that names a queueing scheduler keeps it (and is
// refused by the webhook: queued twice); one that names a non-queueing one (Volcano, YuniKorn,
// coscheduling, each behind the gang core's admission) keeps it.
func NameOf(app *v1beta2.SparkApplication, def string, defQueues, kueue bool) string {
	named := app.Spec.BatchScheduler != nil && *app.Spec.BatchScheduler != ""
	name := def
	if named {
		name = *app.Spec.BatchScheduler
	}
	if !kueue || !QueuedByKueue(app) {
		return name
	}
	if name == "" || name == DefaultName || (!named && defQueues) {
		return KueueName
	}
	return name
}

// NameOf is the name of the batch scheduler that admits app, given the operator's default
// def, by the enabled schedulers (the package's NameOf). A nil registry has none enabled.
func (r *Registry) NameOf(app *v1beta2.SparkApplication, def string) string {
	if r == nil {
		return NameOf(app, def, false, false)
	}
	defQueues := false
	if s, err := r.Get(def); err == nil {
		q, ok := s.(Queueing)
		defQueues = ok && q.QueuesWorkloads()
	}
	_, err := r.Get(KueueName)
	return NameOf(app, def, defQueues, err == nil)
}
