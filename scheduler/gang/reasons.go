/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"maps"
	"slices"
	"sort"
	"sync/atomic"
	"time"
)

// Keeping every held application's shown reason current, at scale.
//
// A held application shows why it waits in its Queued condition, which the submission pool
// writes when the scheduler wakes it. A cycle can change the reasons of every waiting
// application at once: one admission moves everyone behind it up one place ("behind N
// applications" changes for all of a 1,000-long queue), and amounts free change with every pod
// that ends. Waking them all each cycle would be a storm of status writes that grows with the
// queue and delays the submissions that matter. So a shown reason is refreshed by how much it
// is out of date:
//
//   - Its meaning changed (its Kind: now over quota instead of behind others, no node fits
//     instead of over quota, another queue; or nothing shown yet, or a shown reason of unknown
//     kind, read back from a status this process did not write): first in line.
//
//   - Only its numbers changed (a position, an amount): after those, in rotation.
//
//     An application woken for its numbers is not woken for them again within
//     numbersRefreshEvery: a position in a long queue changes with every admission ahead of it,
//     and a minute-old "behind 812 applications" tells a user as much as a current one, for a
//     status write (and a reconcile, and a watch event for every client) less each time.
//
// Either way at most maxReasonWakes applications are woken per reasonRefreshPause, however
// many cycles run in it (a cycle follows every pod event), those out of date the longest first
// (then in queue order), so none is starved by others changing again and again; while some are
// left, another cycle follows reasonRefreshPause later. So every waiting
// application shows a true reason within about (waiting / maxReasonWakes) ×
// reasonRefreshPause (10 seconds for 1,000) of its meaning changing, and its numbers within
// numbersRefreshEvery, with at most maxReasonWakes wake-ups a second. The writes themselves run
// in the submission pool, whose workers bound how many happen at once, and a status that already
// shows the reason is not written again.
const (
	maxReasonWakes      = 100
	reasonRefreshPause  = time.Second
	numbersRefreshEvery = 30 * time.Second
)

// reasonRefresh is what the cycle loop keeps between cycles to refresh shown reasons fairly.
type reasonRefresh struct {
	cycle uint64
	// staleSince is, per held application whose shown reason is out of date, the cycle that
	// first found it so.
	staleSince map[Key]uint64
	// followUp is set while a cycle is asked for reasonRefreshPause from now.
	followUp atomic.Bool
	// windowStart is when the current reasonRefreshPause began; woken counts the wake-ups
	// handed out since.
	windowStart time.Time
	woken       int
	// woke is when each held application was last woken; its numbers alone wait
	// numbersRefreshEvery from then.
	woke map[Key]time.Time
}

// pick returns the held applications to wake in a cycle at now so that their shown reason
// (in shown; absent when nothing is known to be shown, of no kind when only its message is
// known) becomes out's, and how many out-of-date ones are left for later cycles.
func (r *reasonRefresh) pick(now time.Time, out Outcome, shown map[Key]Reason) (wake []Key, left int) {
	r.cycle++
	if now.Sub(r.windowStart) >= reasonRefreshPause || now.Before(r.windowStart) {
		r.windowStart, r.woken = now, 0
	}
	if r.staleSince == nil {
		r.staleSince = map[Key]uint64{}
	}
	if r.woke == nil {
		r.woke = map[Key]time.Time{}
	}
	type candidate struct {
		key     Key
		meaning bool // the meaning changed, not only the numbers
		since   uint64
		order   int
	}
	var stale []candidate
	queues := slices.Sorted(maps.Keys(out.Order))
	still := make(map[Key]uint64, len(r.staleSince))
	for _, q := range queues {
		for _, key := range out.Order[q] {
			why, ok := out.Waiting[key]
			if !ok {
				continue
			}
			was, known := shown[key]
			if known && was.Message == why.Message {
				continue
			}
			since, ok := r.staleSince[key]
			if !ok {
				since = r.cycle
			}
			still[key] = since
			meaning := !known || was.Kind == (ReasonKind{}) || was.Kind != why.Kind
			if at, ok := r.woke[key]; !meaning && ok && now.Sub(at) < numbersRefreshEvery && !now.Before(at) {
				continue // its numbers wait (it stays out of date, and first in line, meanwhile)
			}
			stale = append(stale, candidate{key, meaning, since, len(stale)})
		}
	}
	r.staleSince = still
	sort.SliceStable(stale, func(i, j int) bool {
		a, b := stale[i], stale[j]
		if a.meaning != b.meaning {
			return a.meaning
		}
		if a.since != b.since {
			return a.since < b.since
		}
		return a.order < b.order
	})
	for key, at := range r.woke {
		if _, waiting := out.Waiting[key]; !waiting || now.Sub(at) >= numbersRefreshEvery {
			delete(r.woke, key)
		}
	}
	for _, c := range stale[:min(len(stale), maxReasonWakes-r.woken)] {
		wake = append(wake, c.key)
		r.woke[c.key] = now
		// Woken, it goes to the back of the line: should the pool not have refreshed it by
		// the next cycle, those not woken yet come first (it counts as found stale then).
		r.staleSince[c.key] = r.cycle + 1
	}
	r.woken += len(wake)
	return wake, len(stale) - len(wake)
}

// followUpLater asks for a cycle reasonRefreshPause from now, unless one is asked for already.
func (r *reasonRefresh) followUpLater(trigger func()) {
	if r.followUp.Swap(true) {
		return
	}
	time.AfterFunc(reasonRefreshPause, func() {
		r.followUp.Store(false)
		trigger()
	})
}

// shownReasons is what each held workload shows as its reason: what this process last handed
// it (reported), else what its status says (written by an earlier operator, say, before a
// restart): an application's Queued condition, a session's ServerPodReady condition with
// reason Queued. A reason read from a status has its message only, no kind.
func shownReasons(workloads []object, reported map[Key]Reason) map[Key]Reason {
	shown := make(map[Key]Reason, len(workloads))
	for i := range workloads {
		o := &workloads[i]
		if why, ok := reported[o.Key]; ok {
			shown[o.Key] = why
			continue
		}
		if o.showing {
			shown[o.Key] = Reason{Message: o.shown}
		}
	}
	return shown
}
