/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"
	ctrl "sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/submission"
)

// poolWaker wakes the applications a batch scheduler held: waking one hands it to the
// submission pool, which asks its scheduler again, ahead of other submissions; refreshing one
// does the same behind them. Waking one that no longer awaits its submission does nothing (the
// pool rechecks).
type poolWaker struct{ pool *submission.Pool }

func (w poolWaker) Wake(keys ...scheduler.WorkloadKey) { w.enqueue(submission.PriorityWoken, keys) }

func (w poolWaker) Refresh(keys ...scheduler.WorkloadKey) {
	w.enqueue(submission.PriorityRefresh, keys)
}

func (w poolWaker) enqueue(priority submission.Priority, keys []scheduler.WorkloadKey) {
	names := make([]types.NamespacedName, len(keys))
	for i, k := range keys {
		names[i] = k.NamespacedName
	}
	w.pool.EnqueueWith(priority, names...)
}

// setupSchedulers makes the pool the waker of applications and sets up the enabled schedulers
// that watch the cluster.
func (r *Reconciler) setupSchedulers(mgr ctrl.Manager) error {
	r.Schedulers.HandleWakes(scheduler.KindApplication, poolWaker{r.Pool})
	return r.Schedulers.SetupWithManager(mgr)
}

// wakes reports whether app's scheduler brings it back itself when it may be admitted
// (scheduler.Waking), so a held application needs no polling.
func (r *Reconciler) wakes(app *v1beta2.SparkApplication) bool {
	s, err := r.batchScheduler(app)
	return err == nil && scheduler.Wakes(s)
}

// pendingReason is the reason app's scheduler holds a new run with before deciding on it, if
// it holds every new run (scheduler.Pending).
func (r *Reconciler) pendingReason(app *v1beta2.SparkApplication) (string, bool) {
	s, err := r.batchScheduler(app)
	if err != nil {
		return "", false
	}
	return scheduler.PendingReason(s)
}

// holdsNothing lists the states in which a batch scheduler holds nothing for an application:
// its run is over, being torn down, or suspended. Release is asked for in each of them (on
// every reconcile, so a failed release is retried); it is idempotent.
func holdsNothing(state v1beta2.ApplicationStateType) bool {
	switch state {
	case v1beta2.ApplicationStateSucceeding, v1beta2.ApplicationStateFailing,
		v1beta2.ApplicationStateCompleted, v1beta2.ApplicationStateFailed,
		v1beta2.ApplicationStateFailedSubmission, v1beta2.ApplicationStateInvalidating,
		v1beta2.ApplicationStateSuspending, v1beta2.ApplicationStateSuspended:
		return true
	}
	return false
}

// release asks the batch scheduler of app's run to free what it holds, when app is in a state
// that holds nothing. That is the scheduler that admitted the run (status.batchScheduler),
// whatever the spec names now; for a run never admitted, the one the spec names, which may
// have held it in its queue. A scheduler that admitted the run but is no longer enabled holds
// nothing in this operator: that is logged and told in a BatchSchedulerNotEnabled warning
// event when the run enters the state (entered), not on every reconcile. An error is returned
// so the reconcile is retried with back-off.
func (r *Reconciler) release(ctx context.Context, app *v1beta2.SparkApplication, entered bool) error {
	if !holdsNothing(app.Status.AppState.State) {
		return nil
	}
	name := app.Status.BatchScheduler
	if name == "" {
		name = r.batchSchedulerName(app)
	}
	sched, err := r.schedulerNamed(name)
	if err != nil {
		if app.Status.BatchScheduler != "" && entered {
			msg := fmt.Sprintf("batch scheduler %s admitted this run but is not enabled in this operator now; nothing is released", name)
			log.FromContext(ctx).Info(msg, "enabled", r.Schedulers.Names())
			r.event(app, true, "BatchSchedulerNotEnabled", "Release", msg)
		}
		return nil
	}
	if err := sched.Release(ctx, scheduler.ApplicationWorkload(app)); err != nil {
		return fmt.Errorf("batch scheduler %s could not release the application: %w", sched.Name(), err)
	}
	return nil
}

// preempted moves an application whose batch scheduler preempted its current submission
// (scheduler.AnnotationPreempted) to INVALIDATING, which deletes the run and queues it again.
func (s *step) preempted() bool {
	id := s.app.Status.SubmissionID
	if id == "" || s.app.Annotations[scheduler.AnnotationPreempted] != id {
		return false
	}
	switch s.app.Status.AppState.State {
	case v1beta2.ApplicationStateNew, v1beta2.ApplicationStatePendingRerun, v1beta2.ApplicationStateResuming,
		v1beta2.ApplicationStateSubmitted, v1beta2.ApplicationStateRunning, v1beta2.ApplicationStateUnknown:
	default:
		return false
	}
	s.moveTo(v1beta2.ApplicationStateInvalidating, "")
	s.warning("Preempted", "Preempt", "preempted by its batch scheduler to make room for another application; the run is stopped and the application queued again")
	return true
}
