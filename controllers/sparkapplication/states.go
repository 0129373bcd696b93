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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/controllers/driverpdb"
	"github.com/sparkop/spark-operator/controllers/uiresources"
	"github.com/sparkop/spark-operator/scheduler/kueue"
)

// The state machine. Each reconcile takes at most one step; the status write it makes brings
// the next reconcile. Transitions (→ [effect]):
//
//	any live state  spec.suspend set                     → SUSPENDING
//	any submitted   spec changed (lastSubmittedSpecHash) → INVALIDATING [Invalidated]
//	NEW, PENDING_RERUN, RESUMING, SUBMITTED, RUNNING, UNKNOWN
//	                batch scheduler preempted this submission (annotation
//	                scheduling.sparkop.dev/preempted)    → INVALIDATING [Preempted]
//	NEW, PENDING_RERUN, RESUMING
//	                driver of the recorded submission, named otherwise than the spec now names it
//	                                                     → (delete it, clear submissionID)
//	                driver of the recorded submission    → (enqueue: the submitter completes the
//	                                                       same attempt, the pool writes SUBMITTED)
//	                driver of an older submission, terminating or not
//	                                                     → (delete it, wait until it is gone)
//	                no submission recorded               → (record submissionID, then enqueue)
//	                submission recorded                  → (enqueue; the pool writes SUBMITTED
//	                                                       or SUBMISSION_FAILED)
//	                held by its batch scheduler (the pool wrote condition Queued=True, reason
//	                in its message; the state stays as Kubeflow tools know it)
//	                                                     → (wait: a scheduler that wakes
//	                                                       (scheduler.Waking) re-enqueues it
//	                                                       when it may be admitted; others
//	                                                       after QueuedRetryInterval; either
//	                                                       after the decision's RetryAfter)
//	                admitted                             → (the pool creates the scheduler's
//	                                                       objects for the run, then the
//	                                                       driver; status.batchScheduler
//	                                                       records the admitting scheduler)
//	                rejected by its batch scheduler      → FAILED (written by the pool)
//	                (the pool itself starts no driver while the API server shows another driver
//	                of the application, terminating ones included: anotherDriver in submit.go)
//	SUBMITTED, RUNNING, UNKNOWN: the driver pod's phase decides
//	                Pending → SUBMITTED, with the scheduler's reason if it cannot place the
//	                driver, and whether it asks for more than any node has [DriverUnschedulable];
//	                after UnschedulableTimeout → FAILING [DriverUnschedulable] (driver deleted);
//	                placed but a container cannot start (image pull, container creation)
//	                → SUBMITTED with the kubelet's reason [DriverCannotStart]; after
//	                DriverStartTimeout, or at once when waiting cannot help → FAILING
//	                [DriverCannotStart] (driver deleted);
//	                looked at by no scheduler, or gated, for NotPickedUpAfter → SUBMITTED, naming
//	                the scheduler or gates it waits for [DriverNotPickedUp] (a gated driver is
//	                not unschedulable, and does not time out); Running → RUNNING [DriverRunning],
//	                saying which executors cannot start [ExecutorCannotStart],
//	                Succeeded → SUCCEEDING [DriverCompleted], Failed → FAILING [DriverFailed],
//	                Unknown → UNKNOWN, missing after DriverPodGracePeriod → FAILING; deleted
//	                but not gone DriverPodGracePeriod past its deletion deadline (its node is
//	                lost) → FAILING [DriverLost]; a run
//	                that ended with nothing to follow is written COMPLETED or FAILED at once
//	                (see end)
//	SUCCEEDING      restart policy Always                → PENDING_RERUN, else COMPLETED
//	FAILING         retries left, after onFailureRetryInterval → PENDING_RERUN, else FAILED
//	SUBMISSION_FAILED retries left, after onSubmissionFailureRetryInterval → PENDING_RERUN,
//	                else FAILED
//	INVALIDATING    (delete driver and UI)               → PENDING_RERUN, attempts reset
//	SUSPENDING      (delete driver and UI) driver gone   → SUSPENDED [Suspended; KueueCountShort
//	                if Kueue queues it and counts less than its pods request; said at the first
//	                submission instead of an application never seen suspended]
//	SUSPENDED       spec.suspend cleared                 → RESUMING [Resumed]
//	COMPLETED, FAILED  (delete the application once timeToLiveSeconds has passed)
//
// In every state where the run is over, torn down or suspended (SUCCEEDING, FAILING,
// COMPLETED, FAILED, SUBMISSION_FAILED, INVALIDATING, SUSPENDING, SUSPENDED) the batch
// scheduler that admitted the run (status.batchScheduler) is asked to release what it holds,
// after the status write, on every reconcile until it succeeds (batchscheduler.go). A deleted
// application's reservation and the objects it owns go with it: no finalizer.
func (s *step) run(ctx context.Context) error {
	if s.suspendRequested() || s.specChanged() || s.preempted() {
		return nil
	}
	switch s.app.Status.AppState.State {
	case v1beta2.ApplicationStateNew, v1beta2.ApplicationStatePendingRerun, v1beta2.ApplicationStateResuming:
		return s.readyToSubmit(ctx)
	case v1beta2.ApplicationStateSubmitted, v1beta2.ApplicationStateRunning, v1beta2.ApplicationStateUnknown:
		return s.followDriver(ctx)
	case v1beta2.ApplicationStateSucceeding:
		return s.succeeding(ctx)
	case v1beta2.ApplicationStateFailing:
		return s.failing(ctx)
	case v1beta2.ApplicationStateFailedSubmission:
		return s.submissionFailed(ctx)
	case v1beta2.ApplicationStateInvalidating:
		return s.invalidating(ctx)
	case v1beta2.ApplicationStateSuspending:
		return s.suspending(ctx)
	case v1beta2.ApplicationStateSuspended:
		return s.suspended(ctx)
	case v1beta2.ApplicationStateCompleted, v1beta2.ApplicationStateFailed:
		return s.finished(ctx)
	default:
		// A state this operator does not know (written by hand, or by a newer version): let
		// the driver pod say where the application is.
		return s.followDriver(ctx)
	}
}

// step is one reconcile of one application: what was observed, the status being changed, and
// the effects to perform once that status is stored.
type step struct {
	r        *Reconciler
	app      *v1beta2.SparkApplication // a copy; its status becomes the new status
	observed *v1beta2.SparkApplication // the application as read, before this step
	from     v1beta2.ApplicationStateType
	now      time.Time
	// confirmed is set once the API server has shown that observed is still current.
	confirmed bool

	driver       *corev1.Pod   // the driver pod of status.submissionID
	staleDrivers []*corev1.Pod // the application's driver pods of other submissions
	executors    []corev1.Pod

	events           []event
	enqueue          bool
	executorsChanged bool
	deleted          bool
	requeueAfter     time.Duration
	// recorded is set when the step records a new submission: its write is the object the
	// pool decides on (recordedRuns).
	recorded bool
}

type event struct {
	warning              bool
	reason, action, note string
}

func (s *step) normal(reason, action, note string) {
	s.events = append(s.events, event{false, reason, action, note})
}

func (s *step) warning(reason, action, note string) {
	s.events = append(s.events, event{true, reason, action, note})
}

func (s *step) moveTo(state v1beta2.ApplicationStateType, message string) {
	s.app.Status.AppState = v1beta2.ApplicationState{State: state, ErrorMessage: message}
}

func (s *step) requeue(d time.Duration) {
	if d <= 0 {
		d = time.Millisecond
	}
	if s.requeueAfter == 0 || d < s.requeueAfter {
		s.requeueAfter = d
	}
}

// suspendRequested moves a live application to SUSPENDING when spec.suspend is set.
func (s *step) suspendRequested() bool {
	switch st := s.app.Status.AppState.State; {
	case !s.app.IsSuspended(), st.IsTerminal(),
		st == v1beta2.ApplicationStateSuspending, st == v1beta2.ApplicationStateSuspended:
		return false
	}
	s.moveTo(v1beta2.ApplicationStateSuspending, "")
	return true
}

// specChanged moves a submitted application to INVALIDATING when its spec differs from the
// one it was submitted with. Finished applications rerun too: editing one asks for a new run.
func (s *step) specChanged() bool {
	switch s.app.Status.AppState.State {
	case v1beta2.ApplicationStateSubmitted, v1beta2.ApplicationStateRunning, v1beta2.ApplicationStateUnknown,
		v1beta2.ApplicationStateSucceeding, v1beta2.ApplicationStateFailing, v1beta2.ApplicationStateFailedSubmission,
		v1beta2.ApplicationStateCompleted, v1beta2.ApplicationStateFailed:
	default:
		return false
	}
	old := s.app.Status.LastSubmittedSpecHash
	if old == "" || old == specHash(&s.app.Spec) {
		return false
	}
	s.moveTo(v1beta2.ApplicationStateInvalidating, "")
	s.normal("Invalidated", "Invalidate", "spec changed; the current run is stopped and the application submitted again")
	return true
}

// readyToSubmit records a submission and hands it to the pool, or adopts the driver that an
// interrupted earlier handling of the same submission left behind.
func (s *step) readyToSubmit(ctx context.Context) error {
	st := &s.app.Status
	switch {
	case s.driver != nil && s.driver.Name != s.app.DriverPodName():
		// The pool created this driver, the operator stopped before writing SUBMITTED, and
		// spec.driver.podName has changed since: completing the attempt would start a second
		// driver under the new name. It is stopped instead; once it is gone, a new
		// submission starts from the spec as it is now.
		if err := s.deletePod(ctx, s.driver); err != nil {
			return err
		}
		st.SubmissionID = ""
		s.requeue(time.Second)
	case s.driver != nil:
		// The pool created this driver but the operator stopped before writing SUBMITTED,
		// perhaps before the driver's ConfigMaps and Service existed. The submitter finishes
		// the same attempt (it never starts a second driver), and the pool writes SUBMITTED.
		// (Or the pool has just written it: then it has the submission in hand.)
		s.enqueue = !s.r.recorded.inHand(client.ObjectKeyFromObject(s.app), st.SubmissionID, s.now)
	case len(s.staleDrivers) > 0:
		// One driver at a time: an older run's driver must be gone, not merely asked to go
		// (terminating, it may still run), before a new one can start (it may also hold the
		// name the new one needs). The cache may lag, but only by missing pods created since
		// it last heard: a pod it has shown stays in it until it is gone from the API server.
		// Drivers are created only by the pool, which checks the API server itself before it
		// creates one (anotherDriver), so what the cache cannot show yet cannot start a second.
		if err := s.deletePods(ctx, s.staleDrivers); err != nil {
			return err
		}
		s.requeue(time.Second)
	case st.SubmissionID == "":
		st.SubmissionID = string(uuid.NewUUID())
		// Set by the pool when it submits: a queued run shows no submission time.
		st.LastSubmissionAttemptTime = metav1.Time{}
		st.LastSubmittedSpecHash = specHash(&s.app.Spec)
		st.SparkApplicationID = ""
		st.BatchScheduler = "" // a new run, not admitted yet
		st.DriverInfo = v1beta2.DriverInfo{}
		st.ExecutorState = nil
		st.TerminationTime = metav1.Time{}
		if st.AppState.State == v1beta2.ApplicationStateNew {
			// Kueue may admit an application before the operator first sees it suspended.
			s.warnKueueCount("Submit")
		}
		if why, ok := s.r.pendingReason(s.app); ok {
			// Held from the start: shown now, the pool's hold writes nothing more.
			setQueued(st, why, s.now)
		}
		s.enqueue, s.recorded = true, true
	default:
		// Recorded but not submitted: the pool may have lost it in a restart. Enqueueing twice
		// is harmless; the pool keys by application and rechecks the submission. An
		// application its batch scheduler holds back is not offered again before the pool's
		// own retry would: its Queued condition write brings a reconcile at once. A scheduler
		// that wakes the applications it holds is never polled.
		if c := meta.FindStatusCondition(st.Conditions, ConditionQueued); c != nil && c.Status == metav1.ConditionTrue {
			if s.r.wakes(s.app) {
				return nil
			}
			if wait := c.LastTransitionTime.Add(s.r.Options.QueuedRetryInterval).Sub(s.now); wait > 0 {
				s.requeue(wait)
				return nil
			}
		}
		s.enqueue = !s.r.recorded.inHand(client.ObjectKeyFromObject(s.app), st.SubmissionID, s.now)
	}
	return nil
}

// end records the end of a run. SUCCEEDING and FAILING are the states from which the restart
// policy reruns it; a run the policy does not rerun (success without restart policy Always,
// failure without a retry left) is written COMPLETED or FAILED straight away. That is one
// status write instead of two at the moment a user, a workflow engine or a queue waits to see
// the end, on an API server that is busiest when many runs end at once. A watcher never sees
// SUCCEEDING or FAILING for such a run; the Kubeflow states' meaning is unchanged (the -ING
// states were always passing), and what waits for COMPLETED or FAILED sees it sooner.
func (s *step) end(succeeded bool, message string) {
	switch {
	case succeeded && restartPolicy(s.app).Type == v1beta2.RestartPolicyAlways:
		s.terminate(v1beta2.ApplicationStateSucceeding, message)
	case succeeded:
		s.terminate(v1beta2.ApplicationStateCompleted, message)
	case retryAfterFailure(s.app):
		s.terminate(v1beta2.ApplicationStateFailing, message)
	default:
		s.terminate(v1beta2.ApplicationStateFailed, message)
	}
}

// terminate records the end of a run in state, with the time it ended.
func (s *step) terminate(state v1beta2.ApplicationStateType, message string) {
	s.moveTo(state, message)
	s.app.Status.TerminationTime = metav1.NewTime(s.now)
}

func (s *step) succeeding(ctx context.Context) error {
	s.updateExecutors(v1beta2.DriverStateCompleted)
	if restartPolicy(s.app).Type == v1beta2.RestartPolicyAlways {
		return s.rerun(ctx)
	}
	s.moveTo(v1beta2.ApplicationStateCompleted, "")
	return nil
}

func (s *step) failing(ctx context.Context) error {
	s.updateExecutors(v1beta2.DriverStateFailed)
	if !retryAfterFailure(s.app) {
		s.moveTo(v1beta2.ApplicationStateFailed, s.app.Status.AppState.ErrorMessage)
		return nil
	}
	due := s.app.Status.TerminationTime.Add(seconds(restartPolicy(s.app).OnFailureRetryInterval))
	if wait := due.Sub(s.now); wait > 0 {
		s.requeue(wait)
		return nil
	}
	return s.rerun(ctx)
}

func (s *step) submissionFailed(ctx context.Context) error {
	if !retryAfterSubmissionFailure(s.app) {
		s.terminate(v1beta2.ApplicationStateFailed, s.app.Status.AppState.ErrorMessage)
		return nil
	}
	due := s.app.Status.LastSubmissionAttemptTime.Add(seconds(restartPolicy(s.app).OnSubmissionFailureRetryInterval))
	if wait := due.Sub(s.now); wait > 0 {
		s.requeue(wait)
		return nil
	}
	if err := s.deleteUI(ctx); err != nil {
		return err
	}
	// submissionAttempts is kept: it is what bounds the retries.
	s.moveTo(v1beta2.ApplicationStatePendingRerun, "")
	s.app.Status.SubmissionID = ""
	return nil
}

// rerun tears down what is left of a finished run and waits for the next submission.
func (s *step) rerun(ctx context.Context) error {
	if err := s.deleteUI(ctx); err != nil {
		return err
	}
	s.moveTo(v1beta2.ApplicationStatePendingRerun, "")
	s.app.Status.SubmissionID = ""
	s.app.Status.SubmissionAttempts = 0
	return nil
}

func (s *step) invalidating(ctx context.Context) error {
	if err := s.deleteRun(ctx); err != nil {
		return err
	}
	s.moveTo(v1beta2.ApplicationStatePendingRerun, "")
	s.app.Status.SubmissionID = ""
	s.app.Status.SubmissionAttempts = 0
	s.app.Status.ExecutionAttempts = 0
	return nil
}

func (s *step) suspending(ctx context.Context) error {
	if err := s.deleteRun(ctx); err != nil {
		return err
	}
	if s.driver != nil || len(s.staleDrivers) > 0 {
		// The pod event of the deletion brings the next step; this is a backstop.
		s.requeue(time.Second)
		return nil
	}
	s.moveTo(v1beta2.ApplicationStateSuspended, "")
	s.app.Status.ExecutorState = nil
	s.normal(ReasonSuspended, "Suspend", "spec.suspend is true; the driver and its UI were deleted")
	s.warnKueueCount("Suspend")
	return nil
}

// warnKueueCount says on the application, where its quota will see it, if Kueue queues it and
// counts less than its pods request (the webhook warned whoever created it; a controller does
// not see that). It is said when Kueue suspends the application and, for one Kueue admitted
// before the operator first saw it, at its first submission.
func (s *step) warnKueueCount(action string) {
	if short := kueue.Differences(s.app); len(short) > 0 {
		s.warning("KueueCountShort", action, strings.Join(short, "; "))
	}
}

func (s *step) suspended(ctx context.Context) error {
	if s.app.IsSuspended() {
		// A submission that was in flight when the suspension came may still create a driver.
		return s.deleteRun(ctx)
	}
	s.moveTo(v1beta2.ApplicationStateResuming, "")
	s.app.Status.SubmissionID = ""
	s.app.Status.SubmissionAttempts = 0
	s.normal(ReasonResuming, "Resume", "spec.suspend is false; the application is submitted again")
	return nil
}

// finished deletes the application once its time to live has passed.
func (s *step) finished(ctx context.Context) error {
	expires, ok := s.r.Options.expiration(s.app)
	if !ok {
		return nil
	}
	if wait := expires.Sub(s.now); wait > 0 {
		s.requeue(wait)
		return nil
	}
	if err := s.confirmCurrent(ctx); err != nil {
		return err
	}
	uid := s.app.UID
	err := s.r.Client.Delete(ctx, s.app, client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return err
	}
	log.FromContext(ctx).Info("deleted the application: its time to live has passed")
	s.deleted = true
	return nil
}

// updateExecutors refreshes status.executorState and notes failed executors, once each.
func (s *step) updateExecutors(driver v1beta2.DriverState) {
	st := &s.app.Status
	prev := st.ExecutorState
	next := executorStates(prev, s.executors, st.SubmissionID, driver, s.r.Options.MaxTrackedExecutors)
	for _, name := range newlyFailedExecutors(prev, next) {
		s.warning(ReasonExecutorFailed, "Monitor", fmt.Sprintf("executor %s failed", name))
	}
	if !mapsEqual(prev, next) {
		s.executorsChanged = true
	}
	st.ExecutorState = next
}

func mapsEqual(a, b map[string]v1beta2.ExecutorState) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// protectDriver keeps the PodDisruptionBudget of a live driver that asks for one, when the
// operator runs with DriverPDB. A failure is logged, not fatal, like the UI's.
func (s *step) protectDriver(ctx context.Context, driver *corev1.Pod) {
	if !s.r.DriverPDB || !driverpdb.Wanted(s.app) {
		return
	}
	if err := driverpdb.Ensure(ctx, s.r.Client, s.app, driver); err != nil {
		log.FromContext(ctx).Error(err, "could not create the driver's PodDisruptionBudget")
	}
}

// releaseDriver removes the budget of a driver that has finished: it protects nothing now.
func (s *step) releaseDriver(ctx context.Context) {
	if !s.r.DriverPDB {
		return
	}
	if err := driverpdb.Delete(ctx, s.r.Client, s.app); err != nil {
		log.FromContext(ctx).Error(err, "could not delete the driver's PodDisruptionBudget")
	}
}

// deleteUI deletes what exposes and protects the run's driver: its Services, Ingresses and
// PodDisruptionBudget, found by label whatever the spec names now.
func (s *step) deleteUI(ctx context.Context) error {
	if err := s.confirmCurrent(ctx); err != nil {
		return err
	}
	// A write begun by an earlier reconcile would otherwise make them again.
	if err := s.r.uiWrites.wait(ctx, s.app.UID); err != nil {
		return err
	}
	if err := uiresources.Delete(ctx, s.r.Client, s.app); err != nil {
		return fmt.Errorf("deleting the Spark UI resources: %w", err)
	}
	if s.r.DriverPDB {
		if err := driverpdb.Delete(ctx, s.r.Client, s.app); err != nil {
			return err
		}
	}
	di := &s.app.Status.DriverInfo
	*di = v1beta2.DriverInfo{PodName: di.PodName}
	return nil
}

// confirmCurrent checks with the API server that the application is still as this step read
// it from the cache, and returns errStale if not. Every deletion asks first: a reconcile that
// has not yet seen the submission pool's latest write would otherwise take the driver just
// created for a leftover of an older submission, and delete it.
func (s *step) confirmCurrent(ctx context.Context) error {
	if s.confirmed {
		return nil
	}
	latest := &v1beta2.SparkApplication{}
	if err := s.r.APIReader.Get(ctx, client.ObjectKeyFromObject(s.observed), latest); err != nil {
		if apierrors.IsNotFound(err) {
			return errStale
		}
		return err
	}
	if latest.UID != s.observed.UID || latest.Generation != s.observed.Generation ||
		!statusEqual(&latest.Status, &s.observed.Status) {
		return errStale
	}
	s.confirmed = true
	return nil
}

// deleteRun stops the current run: every driver of the application, whatever the spec names
// now (the executors go with them, being owned by them), and the UI resources.
func (s *step) deleteRun(ctx context.Context) error {
	if err := s.deleteUI(ctx); err != nil {
		return err
	}
	return s.deletePods(ctx, append([]*corev1.Pod{s.driver}, s.staleDrivers...))
}

func (s *step) deletePods(ctx context.Context, pods []*corev1.Pod) error {
	for _, pod := range pods {
		if err := s.deletePod(ctx, pod); err != nil {
			return err
		}
	}
	return nil
}

func (s *step) deletePod(ctx context.Context, pod *corev1.Pod) error {
	if pod == nil || !pod.DeletionTimestamp.IsZero() {
		return nil
	}
	if err := s.confirmCurrent(ctx); err != nil {
		return err
	}
	uid := pod.UID
	err := s.r.Client.Delete(ctx, pod, client.Preconditions{UID: &uid},
		client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting pod %s: %w", pod.Name, err)
	}
	return nil
}
