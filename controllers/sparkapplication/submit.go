/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/sparkpod"
	"github.com/sparkop/spark-operator/submission"
)

// Submit is the submission pool's handler. It submits the submission recorded in the
// application's status, if the application still waits for it, and writes the outcome:
// SUBMITTED or SUBMISSION_FAILED. Every outcome is written only if that same submission is
// still awaited, so a reconcile that adopted the driver meanwhile, or a suspension, wins.
func (r *Reconciler) Submit(ctx context.Context, key types.NamespacedName) error {
	r.setDefaults()
	app := &v1beta2.SparkApplication{}
	if err := r.APIReader.Get(ctx, key, app); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !awaitingSubmission(app) {
		return nil
	}
	id := app.Status.SubmissionID
	sameAttempt := func(latest *v1beta2.SparkApplication) error {
		if latest.UID != app.UID || !awaitingSubmission(latest) || latest.Status.SubmissionID != id {
			return errSkip
		}
		return nil
	}

	// The scheduler and the submitter get a private, defaulted copy, never written back.
	prepared := app.DeepCopy()
	v1beta2.SetSparkApplicationDefaults(prepared)
	// A retry after this attempt's driver was created but not recorded: if the spec has since
	// renamed the driver, completing the attempt would start a second driver under the new
	// name. The reconciler stops the first one and starts a new submission instead.
	if name, ok := r.unrecorded.LoadAndDelete(id); ok && name != prepared.DriverPodName() {
		return nil
	}
	decision, err := r.decide(ctx, prepared)
	if err != nil {
		return err
	}
	if !decision.Admit {
		_, err := r.updateStatus(ctx, key, func(latest *v1beta2.SparkApplication) error {
			if err := sameAttempt(latest); err != nil {
				return err
			}
			if decision.Reject {
				latest.Status.AppState = v1beta2.ApplicationState{State: v1beta2.ApplicationStateFailed, ErrorMessage: decision.Reason}
				syncConditions(&latest.Status, r.Clock.Now())
				return nil
			}
			setQueued(&latest.Status, decision.Reason, r.Clock.Now())
			return nil
		})
		if err != nil && !errors.Is(err, errSkip) {
			return err
		}
		if decision.Reject {
			r.event(app, true, "SparkApplicationRejected", "Submit", decision.Reason)
			return nil
		}
		if r.wakes(prepared) {
			// Its scheduler wakes it when it may be admitted: waiting costs nothing.
			return nil
		}
		return submission.RetryAfter(r.Options.QueuedRetryInterval, decision.Reason)
	}

	var result submission.Result
	submitter, err := r.submitterFor(app)
	if err == nil {
		err = r.ensureMetricsConfigMap(ctx, prepared)
	}
	if err == nil {
		result, err = submitter.Submit(ctx, prepared, submission.Attempt{
			SubmissionID:  id,
			DriverPodName: prepared.DriverPodName(),
			Scheduling:    decision.Pods,
		})
	}
	now := r.Clock.Now()
	written, werr := r.updateStatus(ctx, key, func(latest *v1beta2.SparkApplication) error {
		if err := sameAttempt(latest); err != nil {
			return err
		}
		st := &latest.Status
		st.SubmissionAttempts++
		st.LastSubmissionAttemptTime = metav1.NewTime(now)
		if err != nil {
			st.AppState = v1beta2.ApplicationState{State: v1beta2.ApplicationStateFailedSubmission, ErrorMessage: submissionMessage(err)}
		} else {
			st.AppState = v1beta2.ApplicationState{State: v1beta2.ApplicationStateSubmitted}
			st.ExecutionAttempts++
			st.DriverInfo.PodName = result.DriverPodName
			if st.DriverInfo.PodName == "" {
				st.DriverInfo.PodName = prepared.DriverPodName()
			}
			st.SparkApplicationID = result.SparkApplicationID
			st.LastSubmittedSpecHash = specHash(&app.Spec)
		}
		syncConditions(st, now)
		return nil
	})
	if errors.Is(werr, errSkip) {
		return nil
	}
	if werr != nil {
		// Retried by the pool; the submitter finds its driver and reports success again.
		if err == nil {
			name := result.DriverPodName
			if name == "" {
				name = prepared.DriverPodName()
			}
			r.unrecorded.Store(id, name)
		}
		return fmt.Errorf("recording the submission: %w", werr)
	}
	if err != nil {
		r.event(written, true, "SubmissionFailed", "Submit", written.Status.AppState.ErrorMessage)
		r.metrics(func(m MetricsRecorder) { m.SubmissionFailed(written) })
		return nil
	}
	r.event(written, false, "SparkApplicationSubmitted", "Submit",
		fmt.Sprintf("driver pod %s created (submission %s)", written.Status.DriverInfo.PodName, id))
	latency := now.Sub(app.CreationTimestamp.Time)
	if app.Status.AppState.State != v1beta2.ApplicationStateNew {
		latency = now.Sub(app.Status.LastSubmissionAttemptTime.Time)
	}
	r.metrics(func(m MetricsRecorder) { m.Submitted(written, latency) })
	return nil
}

// awaitingSubmission reports whether app has a recorded submission that no driver answers yet.
func awaitingSubmission(app *v1beta2.SparkApplication) bool {
	switch app.Status.AppState.State {
	case v1beta2.ApplicationStateNew, v1beta2.ApplicationStatePendingRerun, v1beta2.ApplicationStateResuming:
	default:
		return false
	}
	return app.Status.SubmissionID != "" && !app.IsSuspended() && app.DeletionTimestamp.IsZero()
}

// decide asks the application's batch scheduler about its demand. A scheduler that is not
// enabled, or a demand that cannot be computed, rejects the application with the reason: it is
// never submitted as if it named no scheduler.
func (r *Reconciler) decide(ctx context.Context, app *v1beta2.SparkApplication) (scheduler.Decision, error) {
	sched, err := r.batchScheduler(app)
	if err != nil {
		return scheduler.Decision{Reject: true, Reason: err.Error()}, nil
	}
	demand, err := sparkpod.DemandOf(app)
	if err != nil {
		return scheduler.Decision{Reject: true, Reason: err.Error()}, nil
	}
	d, err := sched.Admit(ctx, app, demand)
	if err != nil {
		return d, fmt.Errorf("batch scheduler %s: %w", sched.Name(), err)
	}
	return d, nil
}

// batchScheduler picks the application's batch scheduler: the one it names, else the
// operator's default, else AdmitAll.
func (r *Reconciler) batchScheduler(app *v1beta2.SparkApplication) (scheduler.Interface, error) {
	name := r.batchSchedulerName(app)
	if name == "" || name == scheduler.DefaultName {
		return scheduler.AdmitAll{}, nil
	}
	return r.Schedulers.Get(name)
}

// submitterFor picks the submitter named by the application's annotation, or the default.
func (r *Reconciler) submitterFor(app *v1beta2.SparkApplication) (submission.Submitter, error) {
	mode := r.DefaultMode
	if v, ok := app.Annotations[v1beta2.AnnotationSubmitter]; ok {
		m, err := submission.ParseMode(v)
		if err != nil {
			return nil, &submission.Error{Message: fmt.Sprintf("annotation %s: %v", v1beta2.AnnotationSubmitter, err)}
		}
		mode = m
	}
	s, ok := r.Submitters[mode]
	if !ok || s == nil {
		return nil, &submission.Error{Message: fmt.Sprintf("submission mode %q is not enabled in this operator", mode)}
	}
	return s, nil
}

// submissionMessage is the status message of a failed submission: a submission.Error speaks
// to the user as it is; anything else is prefixed so it reads as the operator's trouble.
func submissionMessage(err error) string {
	var se *submission.Error
	if errors.As(err, &se) {
		return se.Message
	}
	return "submission failed: " + err.Error()
}
