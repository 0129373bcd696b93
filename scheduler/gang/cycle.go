/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"errors"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
)

// round is what one cycle has read and decided, handed from one step of the cycle to the next.
type round struct {
	w       world
	opts    snapshotOptions
	now     time.Time
	snap    core.Snapshot
	objects map[core.Key]*object
	out     core.Outcome
	busy    time.Duration // deciding, without the wait for an external scheduler
	gate    *startGate
	// replan holds the workloads planned again this cycle (their room taken, or not held in
	// time), with why.
	replan map[core.Key]string
	// startNow holds the workloads admitted this cycle that may start once stored.
	startNow map[core.Key]bool
	wake     []core.Key
	errs     []error
}

// cycle reads the world, decides, stores the new reservations, and only then wakes the
// applications admitted; then it lets executors go, brings what holds room up to date, and
// writes the reservations' and queues' status. Each step is a method below, in this order.
func (l *loop) cycle(ctx context.Context) error {
	clock := phaseClock{last: time.Now()}
	r, err := l.read(ctx)
	if err != nil {
		return err
	}
	clock.done("read")
	l.enforcer().beforeDecide(ctx, l, r.w)
	l.decide(ctx, r)
	clock.done("decide")
	l.replanHeld(ctx, r)
	l.persist(ctx, r)
	clock.done("store")
	refresh := l.publish(r)
	if s := l.s; s.waker != nil {
		// Woken first: an admitted workload's capacity is idle until its driver exists, while
		// a refreshed reason only tells a user more exactly why it waits.
		s.waker.Wake(r.wake...)
		s.waker.Refresh(refresh...)
	}
	clock.done("wake")
	l.s.ungateExecutors(ctx, r.w, r.opts, r.out.Ungated)
	clock.done("ungate")
	// The reservations this cycle stored hold their room once their placeholders do.
	l.s.overlayStored(r.w.Workloads, false)
	l.enforcer().reconcile(ctx, l, r)
	clock.done("placeholders")
	l.s.writeReservationStatus(ctx, r.w)
	clock.done("reservation_status")
	// The ungating loop lets go executors that appeared while this cycle ran.
	l.s.triggerUngate()
	if err := l.s.writeQueueStatus(ctx, r.w, r.snap, r.out); err != nil {
		r.errs = append(r.errs, err)
	}
	clock.done("queue_status")
	return errors.Join(r.errs...)
}

// read reads the world from the cluster cache, with what this process wrote that the cache may
// not show yet laid over it, and makes the snapshot the cycle decides on.
func (l *loop) read(ctx context.Context) (*round, error) {
	s := l.s
	w, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	s.overlayStored(w.Workloads, true)
	l.overlayMarked(w.Workloads)
	if err := s.migrate(ctx, w.Workloads); err != nil {
		log.FromContext(ctx).Error(err, "migrating reservations from annotations")
	}
	s.ungating.Forget(w.Pods)
	s.ungating.Overlay(w.Pods)
	opts := s.readingAt(s.cfg.Clock.Now())
	s.forgetReleased(opts.Now)
	snap, err := snapshot(w, opts)
	if err != nil {
		return nil, err
	}
	r := &round{w: w, opts: opts, now: opts.Now, snap: snap, objects: map[core.Key]*object{}, replan: map[core.Key]string{}, startNow: map[core.Key]bool{}}
	for i := range w.Workloads {
		r.objects[w.Workloads[i].Key] = &w.Workloads[i]
	}
	return r, nil
}

// decide runs the decision core, then the start gate: which admitted workloads may start their
// driver now. That is decided, and published to Admit (replanHeld), before any reservation is
// stored, so that Admit never lets a held one start in between. Those admitted earlier and not
// submitted yet (held, or their wake-up lost in a restart) come first, and are woken; not those
// this loop woke already (wokenFor).
func (l *loop) decide(ctx context.Context, r *round) {
	s := l.s
	start := time.Now()
	out, asking := s.schedule(ctx, r.snap, r.objects)
	r.out, r.busy = out, time.Since(start)-asking
	r.gate = newStartGate(r.w, r.snap, r.now, s.ungating.InFlight(), s.cfg.StartBacklog, l.let)
	l.enforcer().holdStarts(l, r)
	l.startAdmittedBefore(r)
	held := l.enforcer().heldAtAdmission()
	for _, a := range r.out.Admitted {
		if o := r.objects[a.Key]; o == nil {
			continue
		} else if held != "" {
			r.gate.held[a.Key] = held
		} else {
			r.startNow[a.Key] = r.gate.start(a.Key, o.Run, a.Admission.Driver, a.Admission.Executors)
		}
	}
}

// startAdmittedBefore passes the workloads admitted by earlier cycles that still wait to start
// through the start gate: woken if they may start, planned again if their room was taken or
// not held in time.
func (l *loop) startAdmittedBefore(r *round) {
	s, gate := l.s, r.gate
	for i := range r.w.Workloads {
		o := &r.w.Workloads[i]
		res, ok := o.liveReservation()
		if !ok || !o.waits() {
			continue
		}
		if gate.start(o.Key, o.Run, res.Driver, res.Executors) {
			if !l.wokenFor(o.Key, o.Run, r.now) {
				r.wake = append(r.wake, o.Key)
			}
		} else if node, taken := gate.nodeTaken(o.Key); taken {
			// Its room went to other pods before its placeholders held it: planned again
			// now, instead of after the room wait.
			why := takenReason(node)
			gate.held[o.Key] = why + "; waiting for the gang scheduler's next cycle"
			r.replan[o.Key] = why
		} else if gate.overdue(o.Key, res.Admitted, r.now, s.cfg.PreemptionWait) {
			// Held until the cache shows its reservation gone, lest Admit let it start.
			why := replanReason(res.Driver, s.cfg.PreemptionWait)
			gate.held[o.Key] = why + "; waiting for the gang scheduler's next cycle"
			r.replan[o.Key] = why
		}
	}
}

// replanHeld publishes the start gate's verdicts to Admit, releases the reservations of the
// workloads planned again, and remembers the drivers let start.
func (l *loop) replanHeld(ctx context.Context, r *round) {
	s := l.s
	s.mu.Lock()
	s.held = r.gate.held
	for key, why := range r.replan {
		s.replanned[key] = replanned{run: r.objects[key].Run, why: why}
	}
	s.mu.Unlock()
	for key, why := range r.replan {
		// Planned again: its reservation removed, the next cycle judges it as waiting (a
		// removal that failed is tried again by the next cycle, which finds it overdue still).
		if err := s.Release(ctx, r.objects[key].Workload); err != nil {
			r.errs = append(r.errs, err)
			continue
		}
		log.FromContext(ctx).Info("planned again", "workload", key.String(), "why", why)
	}
	for m, at := range l.let {
		if r.now.Sub(at) >= owedFor {
			delete(l.let, m)
		}
	}
	for m := range r.gate.letNow {
		l.let[m] = r.now
	}
}

// persist stores the reservations of the workloads admitted, side by side (a cycle that admits
// many, the first or one after a large application ends, would otherwise take a round trip for
// each), and marks the preempted ones.
func (l *loop) persist(ctx context.Context, r *round) {
	s := l.s
	if len(r.out.Admitted) > 0 && log.FromContext(ctx).V(2).Enabled() {
		used := map[string]string{}
		for _, n := range r.snap.Nodes {
			q := n.Used[corev1.ResourceCPU]
			used[n.Name] = q.String()
		}
		log.FromContext(ctx).V(2).Info("cycle admits", "admitted", len(r.out.Admitted), "cpuUsed", used, "workloads", len(r.snap.Workloads), "pods", len(r.w.Pods))
	}
	type storing struct {
		o   *object
		res Reservation
		err error
	}
	var stores []storing
	for _, a := range r.out.Admitted {
		if o := r.objects[a.Key]; o != nil {
			d, _ := o.demand() // the cycle worked it out already: snapshot skips those that fail
			stores = append(stores, storing{o: o, res: newReservation(o, a.Admission, d, r.now)})
		}
	}
	var storingWG sync.WaitGroup
	calls := make(chan struct{}, storeCalls)
	var room *sharedRoom
	if len(stores) > 0 {
		room = l.enforcer().storeRoom(r.w)
	}
	for i := range stores {
		storingWG.Add(1)
		calls <- struct{}{}
		go func() {
			defer func() { <-calls; storingWG.Done() }()
			stores[i].res, stores[i].err = l.store(ctx, stores[i].o, stores[i].res, room)
		}()
	}
	storingWG.Wait()
	for _, st := range stores {
		if st.err != nil {
			r.errs = append(r.errs, st.err)
			continue
		}
		if r.startNow[st.o.Key] {
			r.wake = append(r.wake, st.o.Key)
		}
	}
	for _, p := range r.out.Preempted {
		if err := s.preempt(ctx, r.objects[p.Key], p); err != nil {
			r.errs = append(r.errs, err)
		} else if o := r.objects[p.Key]; o != nil {
			l.marked[p.Key] = o.Run
		}
	}
}

// publish makes the cycle's outcome what Admit and the status writers read, counts it, and
// says who to wake (r.wake) and whose shown reason to refresh (returned).
func (l *loop) publish(r *round) []core.Key {
	s := l.s
	judged := make(map[core.Key]judgement, len(r.snap.Workloads))
	for _, wl := range r.snap.Workloads {
		if o := r.objects[wl.Key]; o != nil && wl.Admission == nil && !wl.Unrecorded {
			judged[wl.Key] = judgementOf(o.Workload)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.explainReplanned(r.objects, r.out)
	s.last, s.judged = r.out, judged
	for key, why := range r.gate.held {
		// To show why it has not started; not for pacing, which holds it for moments (and
		// is at its busiest when the API server is).
		if why != pacedReason && why != placeholderReason && s.reported[key].Message != why {
			r.wake = append(r.wake, key)
		}
	}
	cyclesTotal.Inc()
	decisionsTotal.Add(float64(len(r.out.Admitted) + len(r.out.Waiting) + len(r.out.Rejected)))
	scheduleSeconds.Add(r.busy.Seconds())
	admittedTotal.Add(float64(len(r.out.Admitted)))
	// Rejected applications are woken to be failed with their reason; held ones whose shown
	// reason is out of date, a bounded number per cycle (see status.ReasonRefresh).
	for key := range r.out.Rejected {
		r.wake = append(r.wake, key)
	}
	refresh, next := s.reasons.Pick(r.now, r.out, shownReasons(r.w.Workloads, s.reported))
	if next > 0 {
		s.reasonsDue.after(r.now, next, s.trigger)
	}
	for key := range s.reported {
		if _, ok := r.objects[key]; !ok {
			delete(s.reported, key)
		}
	}
	return refresh
}

// wokenFor reports whether an earlier cycle of this loop let the driver of run of key start, and
// woke it, less than owedFor ago (l.let): until the cache shows its submission, the workload
// still waits to start, and woken again by every cycle it would only be read again by the
// submission pool. One let start by another process (before a restart, or by the leader
// before) is woken again.
func (l *loop) wokenFor(key core.Key, run string, now time.Time) bool {
	at, ok := l.let[boundMember{app: key, submission: run, role: v1beta2.SparkRoleDriver}]
	return ok && now.Sub(at) < owedFor
}

// phaseClock times the phases of a cycle (cyclePhaseSeconds).
type phaseClock struct{ last time.Time }

// done counts the time since the last phase ended to phase.
func (c *phaseClock) done(phase string) {
	now := time.Now()
	cyclePhaseSeconds.WithLabelValues(phase).Add(now.Sub(c.last).Seconds())
	c.last = now
}

// explainReplanned puts, before the reason a workload planned again waits for, why it was
// planned again; it forgets those admitted again, and those whose run moved on or that are
// gone. The caller holds s.mu.
func (s *Scheduler) explainReplanned(objects map[core.Key]*object, out core.Outcome) {
	for key, rp := range s.replanned {
		o := objects[key]
		if o == nil || o.Run != rp.run {
			delete(s.replanned, key)
			continue
		}
		if why, ok := out.Waiting[key]; ok {
			why.Message = rp.why + "; " + why.Message
			out.Waiting[key] = why
		}
	}
	for _, a := range out.Admitted {
		delete(s.replanned, a.Key)
	}
}

// readingAt says how the world reads at now: which reservations still keep node capacity.
func (s *Scheduler) readingAt(now time.Time) snapshotOptions {
	return snapshotOptions{ReservationTimeout: s.cfg.ReservationTimeout, Now: now}
}
