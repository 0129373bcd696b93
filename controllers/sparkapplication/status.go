/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
)

// errStale means the status changed under us (the submission pool, or another reconcile,
// wrote first): the decision was taken on old data and must be taken again.
var errStale = errors.New("application status changed since it was read")

// errSkip means a precondition of a status write no longer holds and nothing is to be written.
var errSkip = errors.New("status write no longer applies")

// updateStatus writes an application's status through the status subresource. mutate gets the
// latest object and changes its status; it returns errSkip or errStale to write nothing. The
// first attempt is made on a copy of read, when given: the application as the caller last read
// it, which saves a read when it is current (the API server refuses the write when it is not).
// Conflicts are retried on the object read straight from the API server. Nothing is written
// when mutate leaves the status as it was. It returns the object as written.
func (r *Reconciler) updateStatus(ctx context.Context, key types.NamespacedName, read *v1beta2.SparkApplication,
	mutate func(app *v1beta2.SparkApplication) error) (*v1beta2.SparkApplication, error) {
	var written *v1beta2.SparkApplication
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app := &v1beta2.SparkApplication{}
		if read != nil {
			read.DeepCopyInto(app)
			read = nil // a conflict means it is not current: read afresh
		} else if err := r.APIReader.Get(ctx, key, app); err != nil {
			return err
		}
		before := app.Status.DeepCopy()
		if err := mutate(app); err != nil {
			return err
		}
		if equality.Semantic.DeepEqual(*before, app.Status) {
			written = app
			return nil
		}
		if err := r.Client.Status().Update(ctx, app); err != nil {
			return err
		}
		written = app
		return nil
	})
	return written, err
}

// specHash identifies what a submission ran. spec.suspend and spec.timeToLiveSeconds are left
// out: they say when and how long to run, not what, and changing them never reruns.
func specHash(spec *v1beta2.SparkApplicationSpec) string {
	s := spec.DeepCopy()
	s.Suspend = nil
	s.TimeToLiveSeconds = nil
	data, err := json.Marshal(s)
	if err != nil {
		// A spec read from the API server always marshals; an empty hash never matches.
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// Condition types of status.conditions.
const (
	ConditionSubmitted = "Submitted"
	ConditionRunning   = "Running"
	ConditionCompleted = "Completed"
	ConditionFailed    = "Failed"
	ConditionQueued    = scheduler.ConditionQueued
)

type cond struct {
	status          metav1.ConditionStatus
	reason, message string
}

// conditionsFor derives the conditions from the state: one table, so conditions and state
// cannot disagree. A nil entry removes the condition. Queued is set by the submission pool
// while a batch scheduler holds the application; every state past submission clears it.
func conditionsFor(st *v1beta2.SparkApplicationStatus) map[string]*cond {
	msg := st.AppState.ErrorMessage
	waiting := &cond{metav1.ConditionFalse, "Pending", "waiting for submission"}
	submitted := &cond{metav1.ConditionTrue, "Submitted", "driver pod " + st.DriverInfo.PodName + " created"}
	notRunning := func(reason string) *cond { return &cond{metav1.ConditionFalse, reason, msg} }
	switch st.AppState.State {
	case v1beta2.ApplicationStateNew, v1beta2.ApplicationStatePendingRerun, v1beta2.ApplicationStateResuming:
		return map[string]*cond{ConditionSubmitted: waiting, ConditionRunning: notRunning("NotSubmitted")}
	case v1beta2.ApplicationStateFailedSubmission:
		return map[string]*cond{ConditionSubmitted: {metav1.ConditionFalse, "SubmissionFailed", msg},
			ConditionRunning: notRunning("NotSubmitted"), ConditionQueued: nil}
	case v1beta2.ApplicationStateSubmitted:
		pending := notRunning("DriverPending")
		switch {
		case strings.Contains(msg, cannotStartMarker):
			pending.reason = "DriverCannotStart"
		case msg != "":
			// The other message SUBMITTED carries: no scheduler places the driver.
			pending.reason = "DriverUnschedulable"
		}
		return map[string]*cond{ConditionSubmitted: submitted, ConditionRunning: pending, ConditionQueued: nil}
	case v1beta2.ApplicationStateRunning:
		return map[string]*cond{ConditionSubmitted: submitted,
			ConditionRunning: {metav1.ConditionTrue, "DriverRunning", "driver pod " + st.DriverInfo.PodName + " is running"},
			ConditionQueued:  nil}
	case v1beta2.ApplicationStateUnknown:
		return map[string]*cond{ConditionRunning: {metav1.ConditionUnknown, "DriverUnknown", "driver pod state is unknown"},
			ConditionQueued: nil}
	case v1beta2.ApplicationStateSucceeding:
		return map[string]*cond{ConditionRunning: notRunning("DriverCompleted"), ConditionQueued: nil}
	case v1beta2.ApplicationStateFailing:
		return map[string]*cond{ConditionRunning: notRunning("DriverFailed"), ConditionQueued: nil}
	case v1beta2.ApplicationStateCompleted:
		return map[string]*cond{ConditionRunning: notRunning("DriverCompleted"),
			ConditionCompleted: {metav1.ConditionTrue, "Completed", "the application completed"},
			ConditionFailed:    nil, ConditionQueued: nil}
	case v1beta2.ApplicationStateFailed:
		return map[string]*cond{ConditionRunning: notRunning("Failed"),
			ConditionFailed:    {metav1.ConditionTrue, "Failed", msg},
			ConditionCompleted: nil, ConditionQueued: nil}
	case v1beta2.ApplicationStateInvalidating:
		return map[string]*cond{ConditionRunning: notRunning("Invalidating"), ConditionCompleted: nil, ConditionFailed: nil,
			ConditionQueued: nil}
	case v1beta2.ApplicationStateSuspending, v1beta2.ApplicationStateSuspended:
		return map[string]*cond{ConditionRunning: {metav1.ConditionFalse, "Suspended", "spec.suspend is true"},
			ConditionQueued: nil}
	}
	return nil
}

// syncConditions brings status.conditions in line with the state. Conditions that already
// say the same thing are left alone, so their transition times stay put.
func syncConditions(st *v1beta2.SparkApplicationStatus, now time.Time) {
	want := conditionsFor(st)
	// A rerun starts from scratch: the outcome of the previous run no longer applies.
	switch st.AppState.State {
	case v1beta2.ApplicationStatePendingRerun, v1beta2.ApplicationStateResuming, v1beta2.ApplicationStateNew:
		if want == nil {
			want = map[string]*cond{}
		}
		want[ConditionCompleted], want[ConditionFailed] = nil, nil
	}
	for typ, c := range want {
		if c == nil {
			meta.RemoveStatusCondition(&st.Conditions, typ)
			continue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: typ, Status: c.status, Reason: c.reason, Message: c.message,
			LastTransitionTime: metav1.NewTime(now),
		})
	}
	if len(st.Conditions) == 0 {
		st.Conditions = nil
	}
	summarize(st)
}

// summarize derives status.summary, what kubectl get shows, from the state and the Queued
// condition.
func summarize(st *v1beta2.SparkApplicationStatus) {
	sum := v1beta2.StatusSummary{State: string(st.AppState.State)}
	switch st.AppState.State {
	case v1beta2.ApplicationStateNew, v1beta2.ApplicationStatePendingRerun, v1beta2.ApplicationStateResuming:
		if c := meta.FindStatusCondition(st.Conditions, ConditionQueued); c != nil && c.Status == metav1.ConditionTrue {
			sum = v1beta2.StatusSummary{State: StateQueued, Waiting: c.Message}
		} else if st.AppState.State == v1beta2.ApplicationStateNew {
			sum.State = "NEW"
		}
	case v1beta2.ApplicationStateSubmitted:
		// No node for the driver, no scheduler picking it up, or it cannot start.
		sum.Waiting = st.AppState.ErrorMessage
	}
	st.Summary = sum
}

// StateQueued is the state status.summary shows while a batch scheduler holds an application.
const StateQueued = "QUEUED"

// setQueued records that a batch scheduler holds the application back, and why.
func setQueued(st *v1beta2.SparkApplicationStatus, reason string, now time.Time) {
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: ConditionQueued, Status: metav1.ConditionTrue, Reason: "HeldByBatchScheduler",
		Message: reason, LastTransitionTime: metav1.NewTime(now),
	})
	summarize(st)
}

// restartPolicy is the application's restart policy with the defaults filled in, so that
// decisions do not depend on whether a defaulting webhook ran.
func restartPolicy(app *v1beta2.SparkApplication) v1beta2.RestartPolicy {
	spec := app.Spec.DeepCopy()
	v1beta2.SetSparkApplicationSpecDefaults(spec)
	return spec.RestartPolicy
}

// retryAfterFailure reports whether a run that failed should run again: always under Always
// unless onFailureRetries bounds it, and under OnFailure while executionAttempts is within
// onFailureRetries.
func retryAfterFailure(app *v1beta2.SparkApplication) bool {
	p := restartPolicy(app)
	switch p.Type {
	case v1beta2.RestartPolicyAlways:
		return p.OnFailureRetries == nil || app.Status.ExecutionAttempts <= *p.OnFailureRetries
	case v1beta2.RestartPolicyOnFailure:
		return p.OnFailureRetries != nil && app.Status.ExecutionAttempts <= *p.OnFailureRetries
	}
	return false
}

// retryAfterSubmissionFailure is retryAfterFailure for failed submissions, counted by
// submissionAttempts against onSubmissionFailureRetries.
func retryAfterSubmissionFailure(app *v1beta2.SparkApplication) bool {
	p := restartPolicy(app)
	switch p.Type {
	case v1beta2.RestartPolicyAlways:
		return p.OnSubmissionFailureRetries == nil || app.Status.SubmissionAttempts <= *p.OnSubmissionFailureRetries
	case v1beta2.RestartPolicyOnFailure:
		return p.OnSubmissionFailureRetries != nil && app.Status.SubmissionAttempts <= *p.OnSubmissionFailureRetries
	}
	return false
}

func seconds(p *int64) time.Duration {
	if p == nil {
		return v1beta2.Seconds(v1beta2.DefaultRetryIntervalSeconds)
	}
	return v1beta2.Seconds(*p)
}

// statusEqual compares statuses as the API server stores them.
func statusEqual(a, b *v1beta2.SparkApplicationStatus) bool {
	return equality.Semantic.DeepEqual(*a, *b)
}
