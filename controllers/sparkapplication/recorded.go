/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// recordedFreshFor is how long the object a recording write returned stands in for a read of
// the application (recordedRuns). A few round trips of a busy API server: the pool takes an
// application within that unless its queue is long, and then a read is worth its cost.
const recordedFreshFor = 2 * time.Second

// recordedRuns hands the submission pool each application as the status write that recorded
// its new submission returned it, and tells the reconciler which submissions the pool has in
// hand.
//
// The pool decides on the API server's object, not the cache's; its cache has not seen that
// write yet, so it would read the application from the API server first: a request, and a
// round trip on every application's way from creation to driver, for the object the
// reconciler has just been given, as current as a read made at that moment. An object handed
// on is taken once; one the pool takes late is not used, as the application may have changed
// meanwhile, and is read afresh.
//
// From the recording until the pool is done with it, and for recordedFreshFor after the pool
// wrote its outcome (SUBMITTED or SUBMISSION_FAILED), the submission is in hand: the reconciles
// that the recording write and the new driver bring, which find it recorded but not yet
// submitted (the cache may show the outcome a moment after the pool is done), need not offer
// it to the pool again. Each such offer would be handled again once the pool is done, and read
// the application afresh only to find it submitted. Whatever the pool does with a submission
// writes its outcome, or writes why it is held, which brings a reconcile, or retries it, or
// leaves it to its batch scheduler to wake; but for one outcome, another driver still in the
// way, after which the pool makes an offer held back meanwhile itself.
type recordedRuns struct {
	mu   sync.Mutex
	runs map[types.NamespacedName]recordedRun
	// pruneAt is the size at which put next drops what the pool never took (an application
	// it lost with the leadership) and outcomes written long enough ago: the map never holds
	// many more than the pool's queue and a few seconds' submissions.
	pruneAt int
}

type recordedRun struct {
	id string // the submission
	// app is the application as the recording write returned it, until the pool takes it.
	app *v1beta2.SparkApplication
	// at is when it was recorded; once its outcome is written, when that was.
	at       time.Time
	taken    bool
	written  bool // its outcome: the pool is through with it
	heldBack bool // a reconcile did not offer it, it being in hand
}

const recordedPruneMin = 256

// put keeps app, as its recording write returned it at now, for the pool to take.
func (r *recordedRuns) put(app *v1beta2.SparkApplication, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runs == nil {
		r.runs = map[types.NamespacedName]recordedRun{}
	}
	if len(r.runs) >= max(r.pruneAt, recordedPruneMin) {
		for key, run := range r.runs {
			if (!run.taken || run.written) && now.Sub(run.at) >= recordedFreshFor {
				delete(r.runs, key)
			}
		}
		r.pruneAt = 2 * len(r.runs)
	}
	r.runs[types.NamespacedName{Namespace: app.Namespace, Name: app.Name}] = recordedRun{
		id: app.Status.SubmissionID, app: app.DeepCopy(), at: now,
	}
}

// take returns the application of key as its recording write returned it, if that was less
// than recordedFreshFor before now and was not taken before; nil otherwise. The pool calls
// done when it is through with key.
func (r *recordedRuns) take(key types.NamespacedName, now time.Time) *v1beta2.SparkApplication {
	r.mu.Lock()
	defer r.mu.Unlock()
	run, ok := r.runs[key]
	if !ok || run.taken {
		return nil
	}
	app := run.app
	run.taken, run.app = true, nil
	r.runs[key] = run
	if now.Sub(run.at) >= recordedFreshFor || now.Before(run.at) {
		return nil
	}
	return app
}

// outcomeWritten records that the pool wrote, at now, the outcome of submission id of key.
func (r *recordedRuns) outcomeWritten(key types.NamespacedName, id string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if run, ok := r.runs[key]; ok && run.taken && run.id == id {
		run.written, run.at = true, now
		r.runs[key] = run
	}
}

// done ends the pool's handling of key. A submission it took is no longer in hand, unless its
// outcome was written (then for recordedFreshFor more); one recorded since it was taken stays,
// for the pool to take next. It reports whether a reconcile held back its offer meanwhile
// (inHand).
func (r *recordedRuns) done(key types.NamespacedName) (heldBack bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	run, ok := r.runs[key]
	if !ok || !run.taken {
		return false
	}
	heldBack = run.heldBack
	if run.written {
		run.heldBack = false
		r.runs[key] = run
	} else {
		delete(r.runs, key)
	}
	return heldBack
}

// inHand reports whether submission id of key was recorded by this process and the pool is
// not yet through with it (see recordedRuns); a reconcile that therefore does not offer it
// says so by asking.
func (r *recordedRuns) inHand(key types.NamespacedName, id string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	run, ok := r.runs[key]
	if !ok || id == "" || run.id != id || run.written && now.Sub(run.at) >= recordedFreshFor {
		return false
	}
	run.heldBack = true
	r.runs[key] = run
	return true
}
