/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

// What the runtime reads of each kind of workload: its run, whether that run waits for
// admission or may hold a reservation, and its demand. Everything else (snapshot, reservations,
// executors, queue status, waking) works on this one form, whatever the kind.

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/scheduler/reservation"
	"github.com/sparkop/spark-operator/sparkpod"
)

// SessionDemand computes a session's demand: sparkpod.ConnectDemand, given by the operator
// so that the scheduler does not depend on the controller.
type SessionDemand func(*v1alpha1.SparkConnect) (sparkpod.Demand, error)

// object is one gang workload as read from the cluster.
type object struct {
	scheduler.Workload // Key, Object (where its reservation is kept), Run, Queue, PriorityClassName
	// awaiting: the run is recorded and waits for admission; nothing of it has started.
	awaiting bool
	// unrecorded: it will ask for admission once its controller records the run; until then it
	// keeps its place in the order (Workload.Unrecorded).
	unrecorded bool
	// holds: the run may hold a reservation (it has not ended, been suspended or deleted).
	holds bool
	// demand computes Workload.Demand; an error keeps the workload out of the cycle.
	demand func() (sparkpod.Demand, error)
	// external: its admission is the external scheduler's (spec.batchScheduler: external).
	external bool
	// ownPlacement: a variant places its run's pods its own way (Scheduler.ownPlacement), so
	// placeholders do not hold its room.
	ownPlacement bool
	// shown is the reason for waiting its status shows, when showing (see shownReasons).
	shown   string
	showing bool
	// res is its reservation as stored (a Reservation object it owns), or as a release before
	// the Reservation API left it on the object (legacy: to migrate); nil: none.
	res    *Reservation
	legacy bool
}

// applicationObject reads a gang application.
func applicationObject(app *v1beta2.SparkApplication) object {
	c := meta.FindStatusCondition(app.Status.Conditions, scheduler.ConditionQueued)
	showing := c != nil && c.Status == metav1.ConditionTrue
	return withLegacy(object{
		Workload:   scheduler.ApplicationWorkload(app),
		showing:    showing,
		shown:      conditionMessage(c, showing),
		awaiting:   awaitingAdmission(app),
		external:   isExternal(app),
		unrecorded: awaitingRecord(app),
		holds:      applicationHolds(app),
		demand: func() (sparkpod.Demand, error) {
			defaulted := app.DeepCopy()
			v1beta2.SetSparkApplicationDefaults(defaulted)
			return sparkpod.DemandOf(defaulted)
		},
	})
}

// withLegacy gives o the reservation a release before the Reservation API left on its object,
// if any: it counts until migrated (attachReservations prefers a stored one).
func withLegacy(o object) object {
	if r, ok := legacyReservation(o.Object); ok {
		o.res, o.legacy = &r, true
	}
	return o
}

// sessionObject reads a gang session. Its run is its current server (status.server.
// submissionID): awaiting until the controller records the server pod it made for it, holding
// until the server fails or the session is deleted. Its queue and priority class are those of
// spec.batchSchedulerOptions (scheduler.SessionWorkload): without them, the default queue and
// the server template's priority class, if any.
func sessionObject(conn *v1alpha1.SparkConnect, demand SessionDemand) object {
	w := scheduler.SessionWorkload(conn)
	holds := w.Run != "" && sessionHolds(conn)
	c := meta.FindStatusCondition(conn.Status.Conditions, v1alpha1.ConditionServerPodReady)
	showing := c != nil && c.Reason == v1alpha1.ReasonQueued
	return withLegacy(object{
		Workload: w,
		showing:  showing,
		shown:    conditionMessage(c, showing),
		awaiting: holds && conn.Status.Server.PodName == "",
		holds:    holds,
		demand:   func() (sparkpod.Demand, error) { return demand(conn) },
	})
}

// conditionMessage is c's message when showing, else "".
func conditionMessage(c *metav1.Condition, showing bool) string {
	if !showing {
		return ""
	}
	return c.Message
}

// liveReservation returns the workload's reservation if it still holds: made for its current
// run, which has not ended, been preempted, suspended or deleted. A reservation that no longer holds
// counts for nothing, whether or not Release has removed it yet; so capacity is freed on every
// way out even before the controller's release.
func (o *object) liveReservation() (Reservation, bool) {
	if o.res == nil {
		return Reservation{}, false
	}
	r := *o.res
	if r.SubmissionID != o.Run || !o.holds || o.preempted() {
		return Reservation{}, false
	}
	return r, true
}

// inCycle reports whether the admission cycle counts the workload: admitted (its reservation
// holds), waiting for admission, or holding its place in its queue until its submission is
// recorded (Workload.Unrecorded).
func (o *object) inCycle() bool {
	_, admitted := o.liveReservation()
	return admitted || o.waits() || o.unrecorded
}

// waits reports whether the workload's run waits for admission: recorded, nothing of it
// started, and not preempted (it comes back with a new run).
func (o *object) waits() bool { return o.awaiting && !o.preempted() }

// preempted reports whether the workload's current run was preempted (marked with
// scheduler.AnnotationPreempted) and is on its way out. Its reservation stops counting in the
// cycle that preempts it: the preemptor was admitted into that room.
func (o *object) preempted() bool {
	return o.Run != "" && o.Object.GetAnnotations()[scheduler.AnnotationPreempted] == o.Run
}

// applicationHolds reports whether app's current run may hold a reservation.
func applicationHolds(app *v1beta2.SparkApplication) bool {
	if !app.DeletionTimestamp.IsZero() || app.IsSuspended() {
		return false
	}
	switch app.Status.AppState.State {
	case v1beta2.ApplicationStateNew, v1beta2.ApplicationStatePendingRerun, v1beta2.ApplicationStateResuming,
		v1beta2.ApplicationStateSubmitted, v1beta2.ApplicationStateRunning, v1beta2.ApplicationStateUnknown:
		return true
	}
	return false
}

// sessionHolds reports whether conn's current server may hold a reservation: it has not
// failed, and the session is not being deleted.
func sessionHolds(conn *v1alpha1.SparkConnect) bool {
	return conn.DeletionTimestamp.IsZero() && conn.Status.State != v1alpha1.SparkConnectStateFailed
}

// ownerHolds reports whether owner's current run may still hold a reservation, by what the
// owner (a SparkApplication or SparkConnect) shows alone; an owner of another kind does.
func ownerHolds(owner client.Object) bool {
	switch o := owner.(type) {
	case *v1beta2.SparkApplication:
		return applicationHolds(o)
	case *v1alpha1.SparkConnect:
		return sessionHolds(o)
	}
	return true
}

// awaitingAdmission reports whether app waits for a decision: a submission is recorded and
// nothing has run it yet, and it is neither suspended nor being deleted.
func awaitingAdmission(app *v1beta2.SparkApplication) bool {
	switch app.Status.AppState.State {
	case v1beta2.ApplicationStateNew, v1beta2.ApplicationStatePendingRerun, v1beta2.ApplicationStateResuming:
	default:
		return false
	}
	return app.Status.SubmissionID != "" && !app.IsSuspended() && app.DeletionTimestamp.IsZero()
}

// awaitingRecord reports whether app is about to ask for admission: it is to be submitted
// (new, or to run again) and its controller has not yet recorded the submission.
func awaitingRecord(app *v1beta2.SparkApplication) bool {
	switch app.Status.AppState.State {
	case v1beta2.ApplicationStateNew, v1beta2.ApplicationStatePendingRerun:
	default:
		return false
	}
	return app.Status.SubmissionID == "" && !app.IsSuspended() && app.DeletionTimestamp.IsZero()
}

// memberOf says which workload member a pod is: a session's server or executor (by the
// connect-name label), or an application's driver or executor (by the app-name label). A
// session's server counts as its driver.
func memberOf(p *corev1.Pod) (boundMember, bool) {
	m, ok := reservation.MemberOf(p)
	if !ok {
		return boundMember{}, false
	}
	key := core.Key{Kind: scheduler.Kind(m.Kind), NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: m.Workload}}
	return boundMember{app: key, submission: m.Run, role: m.Role}, true
}
