/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkconnect

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/sparkpod"
)

// A session goes through the same batch-scheduler plug-in point as an application: its server
// is created only once the session's batch scheduler admits the session's current submission
// (status.server.submissionID) on its demand (sparkpod.ConnectDemand), and what the scheduler held is
// released, by the scheduler that admitted the server (status.server.batchScheduler), when that
// server ends (it is deleted or terminates) and when a new submission replaces it. A held
// session is asked again as an application is (scheduler.RetryAfter). A deleted SparkConnect
// takes what a scheduler keeps on it, and the objects it owns, along (no finalizer).

// batchScheduler is the session's batch scheduler: the operator's default (the SparkConnect API
// names none), else AdmitAll.
func (r *Reconciler) batchScheduler() (scheduler.Interface, error) {
	return r.schedulerNamed(r.DefaultBatchScheduler)
}

// schedulerNamed is the enabled scheduler of that name; "" and "default" are AdmitAll.
func (r *Reconciler) schedulerNamed(name string) (scheduler.Interface, error) {
	if name == "" || name == scheduler.DefaultName || r.Schedulers == nil {
		return scheduler.AdmitAll{}, nil
	}
	return r.Schedulers.Get(name)
}

// asked is a batch scheduler's answer for a session's server, with what it was asked.
type asked struct {
	scheduler.Decision
	// sched is the scheduler that decided; nil when the session was rejected without asking
	// one (a scheduler that is not enabled, a demand that cannot be computed).
	sched scheduler.Interface
	w     scheduler.Workload
}

// decide asks the session's batch scheduler about its current submission. A scheduler that is
// not enabled, or a demand that cannot be computed, rejects the session with the reason.
func (r *Reconciler) decide(ctx context.Context, conn *v1alpha1.SparkConnect) (asked, error) {
	sched, err := r.batchScheduler()
	if err != nil {
		return asked{Decision: scheduler.Decision{Reject: true, Reason: err.Error()}}, nil
	}
	w := scheduler.SessionWorkload(conn)
	if w.Demand, err = sparkpod.ConnectDemand(conn); err != nil {
		return asked{Decision: scheduler.Decision{Reject: true, Reason: err.Error()}}, nil
	}
	d, err := sched.Admit(ctx, w)
	if err != nil {
		return asked{}, fmt.Errorf("batch scheduler %s: %w", sched.Name(), err)
	}
	return asked{Decision: d, sched: sched, w: w}, nil
}

// release asks the batch scheduler that admitted the session's current server
// (status.server.batchScheduler; for a server never admitted, the operator's default) to free
// what it holds for it. One that is no longer enabled holds nothing in this operator: that is
// logged and told in a BatchSchedulerNotEnabled warning event. It is idempotent; an error is
// returned so the reconcile is retried.
func (r *Reconciler) release(ctx context.Context, conn *v1alpha1.SparkConnect) error {
	name := conn.Status.Server.BatchScheduler
	if name == "" {
		name = r.DefaultBatchScheduler
	}
	sched, err := r.schedulerNamed(name)
	if err != nil {
		if conn.Status.Server.BatchScheduler != "" {
			msg := fmt.Sprintf("batch scheduler %s admitted this server but is not enabled in this operator now; nothing is released", name)
			log.FromContext(ctx).Info(msg)
			r.Recorder.Eventf(conn, nil, corev1.EventTypeWarning, ReasonBatchSchedulerNotEnabled, "Release", "%s", msg)
		}
		return nil
	}
	if err := sched.Release(ctx, scheduler.SessionWorkload(conn)); err != nil {
		return fmt.Errorf("batch scheduler %s could not release the session: %w", sched.Name(), err)
	}
	return nil
}

// queuedRetryInterval is how soon a held session is asked about again when its scheduler
// neither wakes it nor names a time.
func (r *Reconciler) queuedRetryInterval() time.Duration {
	if r.QueuedRetryInterval > 0 {
		return r.QueuedRetryInterval
	}
	return 10 * time.Second
}

// preempted reports whether the session's batch scheduler preempted its current submission
// (scheduler.AnnotationPreempted).
func preempted(conn *v1alpha1.SparkConnect) bool {
	id := conn.Status.Server.SubmissionID
	return id != "" && conn.Annotations[scheduler.AnnotationPreempted] == id
}

// terminated reports whether the server pod's run is over.
func terminated(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
}

// wakeSource is the scheduler.Waker of sessions and a source of the controller: a session its
// batch scheduler wakes is put on the controller's queue, which merges repeated wake-ups. Wake
// never blocks the scheduler; sessions woken before the controller starts are queued when it
// does.
type wakeSource struct {
	mu      sync.Mutex
	queue   workqueue.TypedRateLimitingInterface[reconcile.Request]
	pending []reconcile.Request
}

// Refresh is Wake: a session's reason is written by the reconcile a wake-up brings, and
// sessions are few.
func (w *wakeSource) Refresh(keys ...scheduler.WorkloadKey) { w.Wake(keys...) }

func (w *wakeSource) Wake(keys ...scheduler.WorkloadKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		req := reconcile.Request{NamespacedName: k.NamespacedName}
		if w.queue == nil {
			w.pending = append(w.pending, req)
			continue
		}
		w.queue.Add(req)
	}
}

// Start is called by the controller with its queue.
func (w *wakeSource) Start(_ context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queue = queue
	for _, req := range w.pending {
		queue.Add(req)
	}
	w.pending = nil
	return nil
}

func (w *wakeSource) String() string { return "batch scheduler wake-ups" }
