/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package status

import (
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/sparkop/spark-operator/scheduler/gang/core"
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
//   - Nothing shown yet, no cycle's verdict shown yet (NotJudgedYet, which the run shows from
//     its recording on), or a shown reason of unknown kind (read back from a status this
//     process did not write): first in line, at once.
//
//   - Its meaning changed (its Kind: now over quota instead of behind others, no node fits
//     instead of over quota, another queue): next, unless the application was woken within
//     meaningRefreshEvery. At the head of a queue whose quota binds, an application's reason
//     can change kind with every run that ends or starts (over quota, then no node fits, then
//     over quota again), and cycles follow pod events, so refreshed at once it would be
//     written as often as cycles run: more cycles would mean more writes.
//
//   - Only its numbers changed (a position, an amount): after those, in rotation, and not
//     within numbersRefreshEvery of its last wake-up, that wait doubling with each refresh of
//     its numbers alone up to numbersRefreshLongest: a position in a long queue changes with
//     every admission ahead of it, and a two-minute-old "behind 812 applications" tells a user
//     as much as a current one, for a status write (and a reconcile, and a watch event for
//     every client) less each time. An application that waits long is the one whose position
//     would otherwise be written most often: in five minutes, at a steady
//     numbersRefreshEvery, nine times (30 s, 60 s, ... 270 s); with the doubling, three (30 s,
//     90 s, 210 s). A change of meaning, or numbers that stood still for the whole wait,
//     brings the pace back to numbersRefreshEvery, so a queue that starts to move again after
//     a stall shows it soon.
//
// Either way at most maxReasonWakes applications are woken per ReasonRefreshPause, however
// many cycles run in it (a cycle follows every pod event), those out of date the longest first
// (then in queue order), so none is starved by others changing again and again. While some
// are out of date, a cycle is asked for when the next of them is due (ReasonRefreshPause
// later if the bound left some), so none waits for a pod event that may not come. So every
// waiting application shows a true reason within about (waiting / maxReasonWakes) ×
// ReasonRefreshPause (10 seconds for 1,000) of first being held, its meaning within
// meaningRefreshEvery more, and its numbers within numbersRefreshLongest, with at most
// maxReasonWakes wake-ups a second and, for each application, one per meaningRefreshEvery at
// most after the first. The writes themselves run in the submission pool, whose workers bound
// how many happen at once, and a status that already shows the reason is not written again.
const (
	maxReasonWakes      = 100
	ReasonRefreshPause  = time.Second
	meaningRefreshEvery = 10 * time.Second
	numbersRefreshEvery = 30 * time.Second
	// numbersRefreshLongest bounds the doubling wait between refreshes of numbers alone.
	numbersRefreshLongest = 2 * time.Minute
)

// ReasonRefresh is what the cycle loop keeps between cycles to refresh shown reasons fairly.
type ReasonRefresh struct {
	cycle uint64
	// staleSince is, per held application whose shown reason is out of date, the cycle that
	// first found it so.
	staleSince map[core.Key]uint64
	// windowStart is when the current ReasonRefreshPause began; woken counts the wake-ups
	// handed out since.
	windowStart time.Time
	woken       int
	// woke is, per held application woken lately, when and how long a change of its numbers
	// alone waits from then; a change of its meaning waits meaningRefreshEvery.
	woke map[core.Key]wakeUp
}

// Pick returns the held applications to wake in a cycle at now so that their shown reason
// (in shown; absent when nothing is known to be shown, of no kind when only its message is
// known) becomes out's, and how long after now a cycle should come to wake those still out of
// date (zero: none is).
func (r *ReasonRefresh) Pick(now time.Time, out core.Outcome, shown map[core.Key]core.Reason) (wake []core.Key, next time.Duration) {
	r.cycle++
	if now.Sub(r.windowStart) >= ReasonRefreshPause || now.Before(r.windowStart) {
		r.windowStart, r.woken = now, 0
	}
	if r.staleSince == nil {
		r.staleSince = map[core.Key]uint64{}
	}
	if r.woke == nil {
		r.woke = map[core.Key]wakeUp{}
	}
	var stale []staleReason
	queues := slices.Sorted(maps.Keys(out.Order))
	still := make(map[core.Key]uint64, len(r.staleSince))
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
			first := !known || was.Kind == (core.ReasonKind{}) || was.Kind.Is == NotJudgedYet
			c := staleReason{key: key, first: first, since: since, order: len(stale), last: r.woke[key]}
			c.meaning = c.first || was.Kind != why.Kind
			if due := c.due(now); now.Before(due) {
				// It waits, out of date (and first in line once due); a cycle comes for it.
				next = shortest(next, due.Sub(now))
				continue
			}
			stale = append(stale, c)
		}
	}
	r.staleSince = still
	sort.SliceStable(stale, func(i, j int) bool {
		a, b := stale[i], stale[j]
		if a.first != b.first {
			return a.first
		}
		if a.meaning != b.meaning {
			return a.meaning
		}
		if a.since != b.since {
			return a.since < b.since
		}
		return a.order < b.order
	})
	for key, last := range r.woke {
		// Forgotten once it no longer waits, or once its numbers' wait passed with its reason
		// current: it is then woken at once when next out of date, and its pace starts again.
		// One out of date stays known, so that the bound on wake-ups does not reset its pace.
		_, waiting := out.Waiting[key]
		_, outOfDate := r.staleSince[key]
		if !waiting || (now.Sub(last.at) >= last.numbersAfter && !outOfDate) {
			delete(r.woke, key)
		}
	}
	for _, c := range stale[:min(len(stale), maxReasonWakes-r.woken)] {
		wake = append(wake, c.key)
		r.woke[c.key] = wakeUp{at: now, numbersAfter: c.nextNumbersAfter()}
		reasonRefreshesTotal.WithLabelValues(c.change()).Inc()
		// Woken, it goes to the back of the line: should the pool not have refreshed it by
		// the next cycle, those not woken yet come first (it counts as found stale then).
		r.staleSince[c.key] = r.cycle + 1
	}
	r.woken += len(wake)
	if len(wake) < len(stale) {
		next = shortest(next, ReasonRefreshPause-now.Sub(r.windowStart))
	}
	return wake, next
}

// shortest is the shorter of two waits, a zero one being none.
func shortest(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// staleReason is a held application whose shown reason is out of date.
type staleReason struct {
	key     core.Key
	first   bool // no verdict of a known kind shown yet
	meaning bool // the meaning changed, not only the numbers (so also when first)
	since   uint64
	order   int
	last    wakeUp // its last wake-up, if lately
}

// wakeUp is when a held application was last woken, and how long after that a change of its
// numbers alone waits.
type wakeUp struct {
	at           time.Time
	numbersAfter time.Duration
}

// due is when it may be woken at now: at once if nothing of a known kind is shown, or it was
// not woken lately (or the clock went back since); else meaningRefreshEvery or its numbers'
// wait after its last wake-up.
func (s staleReason) due(now time.Time) time.Time {
	switch {
	case s.first || s.last.at.IsZero() || now.Before(s.last.at):
		return time.Time{}
	case s.meaning:
		return s.last.at.Add(meaningRefreshEvery)
	}
	return s.last.at.Add(s.last.numbersAfter)
}

// nextNumbersAfter is how long a change of its numbers alone will wait once it is woken now:
// numbersRefreshEvery after a first reason or a new meaning, or after a wait that lapsed;
// after a refresh of its numbers alone, twice the last wait, up to numbersRefreshLongest.
func (s staleReason) nextNumbersAfter() time.Duration {
	if s.meaning || s.last.numbersAfter == 0 {
		return numbersRefreshEvery
	}
	return min(2*s.last.numbersAfter, numbersRefreshLongest)
}

// change is what made it out of date, as reasonRefreshesTotal counts it.
func (s staleReason) change() string {
	switch {
	case s.first:
		return "first"
	case s.meaning:
		return "meaning"
	}
	return "numbers"
}

// NotJudgedYet is the reason a workload is held with before a cycle judges it as it is (its
// run and spec).
const NotJudgedYet = "waiting for the gang scheduler's next cycle"
