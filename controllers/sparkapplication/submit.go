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
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/internal/drivername"
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
	defer r.recorded.done(key)
	app, err := r.toSubmit(ctx, key)
	if app == nil || err != nil {
		return err
	}
	if !awaitingSubmission(app) {
		return nil
	}
	// The scheduler and the submitter get a private, defaulted copy, never written back.
	prepared := app.DeepCopy()
	v1beta2.SetSparkApplicationDefaults(prepared)
	decision, err := r.decide(ctx, prepared)
	if err != nil {
		return err
	}
	if !decision.Admit && !decision.Reject {
		return r.hold(ctx, key, app, decision)
	}
	if decision.Reject {
		return r.reject(ctx, key, app, decision)
	}
	taken, clear, err := r.clearToCreate(ctx, key, prepared)
	if !clear || err != nil {
		return err
	}
	// What the scheduler needs of its own before the run's pods exist (a PodGroup, say),
	// owned by the application. A failure is retried by the pool: no driver starts without them.
	if taken == "" {
		if err := scheduler.EnsureRunObjects(ctx, r.Client, decision.sched, decision.w, decision.Decision); err != nil {
			r.event(app, true, "BatchSchedulerObjectsFailed", "Submit", err.Error())
			return err
		}
	}
	result, err := r.createRun(ctx, app, prepared, decision, taken)
	return r.recordOutcome(ctx, key, app, prepared, decision, result, err)
}

// reject fails the awaited submission of app for the reason its scheduler rejected it with.
func (r *Reconciler) reject(ctx context.Context, key types.NamespacedName, app *v1beta2.SparkApplication, decision asked) error {
	_, err := r.updateStatus(ctx, key, app, func(latest *v1beta2.SparkApplication) error {
		if err := sameSubmission(latest, app.UID, app.Status.SubmissionID); err != nil {
			return err
		}
		latest.Status.AppState = v1beta2.ApplicationState{State: v1beta2.ApplicationStateFailed, ErrorMessage: decision.Reason}
		syncConditions(&latest.Status, r.Clock.Now())
		return nil
	})
	if err != nil && !errors.Is(err, errSkip) {
		return err
	}
	r.event(app, true, "SparkApplicationRejected", "Submit", decision.Reason)
	return nil
}

// anotherDriverRetry is how soon the pool looks again at an admitted application whose
// submission waits for another of its drivers to be gone.
const anotherDriverRetry = 2 * time.Second

// clearToCreate is checked right before anything of the run is created, once the scheduler
// has admitted it: what it holds for the application stays held while an old driver
// terminates (clear is false; the application is offered again once it is gone). Another
// application's driver pod is never adopted: taken says which application holds the driver
// pod's name, and the application that does not hold the name fails with the one that does,
// never the holder (see nameHolder). Both read the API server, at once: one round trip on the
// way to the driver, not two.
func (r *Reconciler) clearToCreate(ctx context.Context, key types.NamespacedName, prepared *v1beta2.SparkApplication) (taken string, clear bool, err error) {
	var (
		takenErr error
		read     sync.WaitGroup
	)
	read.Go(func() { taken, takenErr = r.nameHolder(ctx, prepared) })
	blocked, err := r.anotherDriver(ctx, prepared, prepared.Status.SubmissionID)
	read.Wait()
	if err != nil {
		return "", false, err
	}
	if blocked {
		// Once the other driver is gone, its pod event brings a reconcile that offers the
		// application again; one that came while this ran was held back (recordedRuns). A
		// reconcile does not offer one its batch scheduler holds queued and wakes (the wake was
		// this admission's): the pool looks again itself, soon.
		if r.recorded.done(key) {
			r.Pool.Enqueue(key)
			return "", false, nil
		}
		return "", false, submission.RetryAfter(anotherDriverRetry, "another driver of the application is still there")
	}
	return taken, true, takenErr
}

// createRun submits the run. Its error, if any, is the outcome to record; taken (the driver
// pod's name held by another application) fails it.
func (r *Reconciler) createRun(ctx context.Context, app, prepared *v1beta2.SparkApplication, decision asked, taken string) (submission.Result, error) {
	submitter, err := r.submitterFor(app)
	if err != nil {
		return submission.Result{}, err
	}
	if taken != "" {
		return submission.Result{}, &submission.Error{Message: taken}
	}
	if err := r.ensureMetricsConfigMap(ctx, prepared); err != nil {
		return submission.Result{}, err
	}
	return submitter.Submit(ctx, prepared, submission.Attempt{
		SubmissionID:  prepared.Status.SubmissionID,
		DriverPodName: prepared.DriverPodName(),
		Scheduling:    decision.Pods,
	})
}

// recordOutcome writes the submission's outcome, subErr or success, if that same submission
// is still awaited, and tells it in an event and the metrics.
func (r *Reconciler) recordOutcome(ctx context.Context, key types.NamespacedName, app, prepared *v1beta2.SparkApplication,
	decision asked, result submission.Result, subErr error) error {
	id := app.Status.SubmissionID
	now := r.Clock.Now()
	written, werr := r.updateStatus(ctx, key, app, func(latest *v1beta2.SparkApplication) error {
		if err := sameSubmission(latest, app.UID, id); err != nil {
			return err
		}
		st := &latest.Status
		st.SubmissionAttempts++
		st.LastSubmissionAttemptTime = metav1.NewTime(now)
		// Whatever the outcome, this scheduler admitted the run: it is the one to release it.
		st.BatchScheduler = decision.sched.Name()
		if subErr != nil {
			st.AppState = v1beta2.ApplicationState{State: v1beta2.ApplicationStateFailedSubmission, ErrorMessage: submissionMessage(subErr)}
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
		// Retried by the pool; the submitter finds its driver and reports success again,
		// unless the spec has renamed it since (anotherDriver).
		return fmt.Errorf("recording the submission: %w", werr)
	}
	r.recorded.outcomeWritten(key, id, r.Clock.Now())
	if subErr != nil {
		r.event(written, true, ReasonSubmissionFailed, "Submit", written.Status.AppState.ErrorMessage)
		r.metrics(func(m MetricsRecorder) { m.SubmissionFailed(written) })
		return nil
	}
	r.event(written, false, ReasonSubmitted, "Submit",
		fmt.Sprintf("driver pod %s created (submission %s)", written.Status.DriverInfo.PodName, id))
	// From the creation, or from the start of the rerun: when the Submitted condition
	// became False for it.
	latency := now.Sub(app.CreationTimestamp.Time)
	if c := meta.FindStatusCondition(app.Status.Conditions, ConditionSubmitted); app.Status.AppState.State != v1beta2.ApplicationStateNew &&
		c != nil && c.Status == metav1.ConditionFalse {
		latency = now.Sub(c.LastTransitionTime.Time)
	}
	r.metrics(func(m MetricsRecorder) { m.Submitted(written, latency) })
	return nil
}

// toSubmit returns the application of key as the API server has it, for Submit to act on,
// or nil when there is nothing to act on: it is gone, or its scheduler holds it again.
//
// A submission the reconciler has just recorded comes with the object its write returned
// (recordedRuns), which is that. Otherwise, a held application comes back each time its
// scheduler's reason for holding it changes, and is held again far more often than it is
// admitted. Such a hold is decided on the cache, which costs no request: its write (of the
// reason) is refused by the API server if the cache was stale, and then made on the object
// read afresh. Anything that acts (an admission, a rejection) is decided on the API server's
// object, read here.
func (r *Reconciler) toSubmit(ctx context.Context, key types.NamespacedName) (*v1beta2.SparkApplication, error) {
	if app := r.recorded.take(key, r.Clock.Now()); app != nil {
		return app, nil
	}
	if cached := (&v1beta2.SparkApplication{}); r.Client.Get(ctx, key, cached) == nil && awaitingSubmission(cached) {
		prepared := cached.DeepCopy()
		v1beta2.SetSparkApplicationDefaults(prepared)
		decision, err := r.decide(ctx, prepared)
		if err != nil {
			return nil, err
		}
		if !decision.Admit && !decision.Reject {
			return nil, r.hold(ctx, key, cached, decision)
		}
	}
	app := &v1beta2.SparkApplication{}
	if err := r.APIReader.Get(ctx, key, app); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return app, nil
}

// hold writes why app's batch scheduler holds its recorded submission (its Queued condition;
// nothing when it already says so), as long as that submission is still awaited, and asks to
// be offered again when the scheduler wants it asked.
func (r *Reconciler) hold(ctx context.Context, key types.NamespacedName, app *v1beta2.SparkApplication, decision asked) error {
	uid, id := app.UID, app.Status.SubmissionID
	_, err := r.updateStatus(ctx, key, app, func(latest *v1beta2.SparkApplication) error {
		if err := sameSubmission(latest, uid, id); err != nil {
			return err
		}
		setQueued(&latest.Status, decision.Reason, r.Clock.Now())
		return nil
	})
	if err != nil && !errors.Is(err, errSkip) {
		return err
	}
	if after, retry := scheduler.RetryAfter(decision.sched, decision.Decision, r.Options.QueuedRetryInterval); retry {
		return submission.RetryAfter(after, decision.Reason)
	}
	// Its scheduler wakes it when it may be admitted: waiting costs nothing.
	return nil
}

// sameSubmission is errSkip unless latest is the application uid still awaiting submission id.
func sameSubmission(latest *v1beta2.SparkApplication, uid types.UID, id string) error {
	if latest.UID != uid || !awaitingSubmission(latest) || latest.Status.SubmissionID != id {
		return errSkip
	}
	return nil
}

// anotherDriver reports whether a driver pod of app exists, terminating ones included, other
// than the one this attempt (submission id) would create or complete under the name the spec
// gives now. While one does, no driver is started: the application has one driver at a time.
// The reconciler stops the others (a driver of an older submission, or one this attempt
// created under a name the spec has since changed, see readyToSubmit) and, once the last is
// gone, its pod event brings the reconcile that enqueues the application again.
//
// The reconciler makes the same check on its cache before it records a submission, but a cache
// can only be trusted to show the pods it has seen: one created since may be missing from it.
// Drivers are only ever created here, by the pool, which never handles one application on two
// workers at once; so a check against the API server itself, made by the handler that then
// creates the driver, cannot miss a driver created by anyone else, in this attempt or an
// earlier one (a write of the outcome that failed, a renamed driver, an attempt the reconciler
// abandoned while its driver was being created).
func (r *Reconciler) anotherDriver(ctx context.Context, app *v1beta2.SparkApplication, id string) (bool, error) {
	drivers := &corev1.PodList{}
	if err := r.APIReader.List(ctx, drivers, client.InNamespace(app.Namespace), client.MatchingLabels{
		v1beta2.LabelAppName:            app.Name,
		v1beta2.LabelLaunchedByOperator: "true",
		v1beta2.SparkRoleLabel:          v1beta2.SparkRoleDriver,
	}); err != nil {
		return false, fmt.Errorf("listing the drivers of %s: %w", app.Name, err)
	}
	for i := range drivers.Items {
		pod := &drivers.Items[i]
		if !ofSubmission(pod, id) || pod.Name != app.DriverPodName() || !pod.DeletionTimestamp.IsZero() {
			log.FromContext(ctx).V(1).Info("not submitting while another driver exists", "pod", pod.Name)
			return true, nil
		}
	}
	return false, nil
}

// nameHolder explains why app may not create its driver pod under the name the spec gives,
// or returns "" when it may (package drivername has the rule). A pod of that name that is not
// app's own belongs to another application, or to nobody the operator knows: creating the
// driver would find it and fail the attempt with a message about submissions. Without such a
// pod, an application of the namespace created before app that names the same driver pod
// holds it: app gives way even when its submission comes first, so that the later of two
// applications racing for one name is the one that fails, never the earlier one, whose run
// would otherwise be lost to a name it had first. The pod is read from the API server (a
// pod of another application may be missing from the cache yet); the applications from the
// cache, which shows app only after every application created before it (one watch, in
// order).
func (r *Reconciler) nameHolder(ctx context.Context, app *v1beta2.SparkApplication) (string, error) {
	name := app.DriverPodName()
	pod := &corev1.Pod{}
	switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: name}, pod); {
	case err == nil:
		// A pod of its own (this attempt's, or an older one the reconciler stops) holds
		// the name for it.
		return drivername.PodTaken(pod, app), nil
	case !apierrors.IsNotFound(err):
		return "", fmt.Errorf("reading pod %s/%s: %w", app.Namespace, name, err)
	}
	apps := &v1beta2.SparkApplicationList{}
	if err := r.Client.List(ctx, apps, client.InNamespace(app.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return "", fmt.Errorf("listing the SparkApplications of %s: %w", app.Namespace, err)
	}
	if other := drivername.Claimant(apps.Items, app, func(other *v1beta2.SparkApplication) bool {
		return drivername.Precedes(other, app)
	}); other != nil {
		return drivername.Claimed(other, app), nil
	}
	return "", nil
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

// asked is a batch scheduler's answer for an application's run, with what it was asked.
type asked struct {
	scheduler.Decision
	// sched is the scheduler that decided; nil when the application was rejected without
	// asking one (a scheduler that is not enabled, a demand that cannot be computed).
	sched scheduler.Interface
	w     scheduler.Workload
}

// decide asks the application's batch scheduler about its demand. A scheduler that is not
// enabled, or a demand that cannot be computed, rejects the application with the reason: it is
// never submitted as if it named no scheduler.
func (r *Reconciler) decide(ctx context.Context, app *v1beta2.SparkApplication) (asked, error) {
	sched, err := r.batchScheduler(app)
	if err != nil {
		return asked{Decision: scheduler.Decision{Reject: true, Reason: err.Error()}}, nil
	}
	w := scheduler.ApplicationWorkload(app)
	if w.Demand, err = sparkpod.DemandOf(app); err != nil {
		return asked{Decision: scheduler.Decision{Reject: true, Reason: err.Error()}}, nil
	}
	d, err := sched.Admit(ctx, w)
	if err != nil {
		return asked{}, fmt.Errorf("batch scheduler %s: %w", sched.Name(), err)
	}
	return asked{Decision: d, sched: sched, w: w}, nil
}

// batchScheduler picks the application's batch scheduler: the one it names, else the
// operator's default, else AdmitAll.
func (r *Reconciler) batchScheduler(app *v1beta2.SparkApplication) (scheduler.Interface, error) {
	return r.schedulerNamed(r.batchSchedulerName(app))
}

// schedulerNamed is the enabled scheduler of that name; "" and "default" are AdmitAll.
func (r *Reconciler) schedulerNamed(name string) (scheduler.Interface, error) {
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
