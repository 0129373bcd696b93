/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"math"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// executorBatch remembers, per application, since when a write of executor states alone has
// been held back. The first such change starts the wait; every reconcile before its end finds
// more to hold; the one after it (RequeueAfter brings it) writes them all. A write for any
// other reason writes them too and ends the wait. Kept in memory: an operator that restarts
// writes sooner, never later.
type executorBatch struct {
	mu    sync.Mutex
	since map[types.UID]time.Time
}

// hold reports how much longer the write of app's executor states may wait (0: write now),
// and starts the wait on the first call.
func (b *executorBatch) hold(uid types.UID, now time.Time, window time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.since == nil {
		b.since = map[types.UID]time.Time{}
	}
	first, ok := b.since[uid]
	if !ok {
		b.since[uid] = now
		return window
	}
	if left := first.Add(window).Sub(now); left > 0 {
		return left
	}
	delete(b.since, uid)
	return 0
}

// forget ends app's wait: its executor states are written (or it is gone).
func (b *executorBatch) forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.since, uid)
}

// holdExecutorWrite reports how long to wait before writing the step's status, when all it
// changes is bookkeeping: executor states, or where the UI is (its Service, written beside the
// reconciles, shows up moments after the driver starts, as the executors do). The
// application's state as it was, nothing to tell (no event), nothing to hand to the pool.
// Otherwise it returns 0, and the write that follows carries what was held back so far.
//
// Where the UI is, found before the driver runs, waits for the write of RUNNING (or of the run's
// end): untilStateChange. A UI that does not serve yet is worth no write of its own, and the
// driver's change brings that write.
func (r *Reconciler) holdExecutorWrite(app *v1beta2.SparkApplication, s *step) time.Duration {
	window := r.Options.ExecutorStateBatch
	if window <= 0 || len(s.events) > 0 || s.enqueue || statusEqual(&app.Status, &s.app.Status) ||
		!bookkeepingOnly(&app.Status, &s.app.Status) {
		r.executorWrites.forget(app.UID)
		return 0
	}
	if app.Status.AppState.State == v1beta2.ApplicationStateSubmitted && mapsEqual(app.Status.ExecutorState, s.app.Status.ExecutorState) {
		return untilStateChange
	}
	wait := r.executorWrites.hold(app.UID, s.now, window)
	if s.requeueAfter > 0 && s.requeueAfter < wait {
		return s.requeueAfter
	}
	return wait
}

// untilStateChange is holdExecutorWrite's wait for a write that the next change of state makes.
const untilStateChange = time.Duration(math.MaxInt64)

// bookkeepingOnly reports whether next differs from prev in executor states and the UI's
// whereabouts alone.
func bookkeepingOnly(prev, next *v1beta2.SparkApplicationStatus) bool {
	if prev.AppState != next.AppState {
		return false
	}
	same := *next // shallow: only read
	same.ExecutorState = prev.ExecutorState
	same.DriverInfo = prev.DriverInfo
	same.DriverInfo.PodName = next.DriverInfo.PodName
	return statusEqual(prev, &same)
}
