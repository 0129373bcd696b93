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
	"fmt"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
)

// backstop is how often a cycle runs without any event: it lets reservation timeouts expire.
const backstop = 30 * time.Second

// storeCalls bounds the reservations a cycle stores at once.
const storeCalls = 16

// loop is the single cycle loop: one goroutine, on the leader only, so two cycles never
// decide at once and nothing is admitted twice. Beside it, on the leader too, runs the ungating
// loop (ungate.go), which admits nothing.
type loop struct {
	s   *Scheduler
	mgr manager.Manager
	// marked holds the runs this loop preempted, so that the next cycle does not count their
	// reservations again before the cache shows the mark.
	marked map[core.Key]string
	// let holds the drivers the start gate let start, with when, for owedFor: the cache may
	// not show them started yet (newStartGate).
	let map[boundMember]time.Time
	// dropped holds the stale reservations (by UID) this loop deleted, with the plugin
	// enforcement, that the cache may still show (plugin.go).
	dropped map[types.UID]bool
	// warnedUnheld holds the runs, by workload, told they started without the pod scheduler
	// holding their room (plugin.go).
	warnedUnheld map[core.Key]string
}

func (l *loop) NeedLeaderElection() bool { return true }

// Start runs cycles until ctx ends: at once, on every trigger (merged while one runs), and
// every backstop interval.
func (l *loop) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("gang-scheduler")
	ctx = log.IntoContext(ctx, logger)
	l.marked = map[core.Key]string{}
	l.let = map[boundMember]time.Time{}
	if !l.s.cluster.WaitForCacheSync(ctx) || !l.mgr.GetCache().WaitForCacheSync(ctx) {
		return errors.New("gang scheduler: caches did not sync")
	}
	if err := l.s.watch(ctx, l.mgr); err != nil {
		return err
	}
	if err := l.s.ensureDefaultQueue(ctx); err != nil {
		logger.Error(err, "could not create the default queue")
	}
	l.s.trigger()
	go l.ungateLoop(ctx)
	tick := time.NewTicker(backstop)
	defer tick.Stop()
	var askAgain <-chan time.Time // while the external scheduler's workloads wait
	if e := l.s.cfg.External; e != nil {
		t := time.NewTicker(e.Interval)
		defer t.Stop()
		askAgain = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-l.s.kick:
		case <-tick.C:
		case <-askAgain:
			if !l.s.ext.waiting.Load() {
				continue
			}
		}
		if err := l.cycle(ctx); err != nil {
			logger.Error(err, "gang scheduling cycle failed; retrying")
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
			}
			l.s.trigger()
		}
	}
}

// cycle reads the world, decides, stores the new reservations, and only then wakes the
// applications admitted; then it brings the queues' status and held reasons up to date.
func (l *loop) cycle(ctx context.Context) error {
	s := l.s
	clock := phaseClock{last: time.Now()}
	w, err := s.read(ctx)
	if err != nil {
		return err
	}
	s.overlayStored(w.Workloads, true)
	l.overlayMarked(w.Workloads)
	if err := s.migrate(ctx, w.Workloads); err != nil {
		log.FromContext(ctx).Error(err, "migrating reservations from annotations")
	}
	s.ungating.forget(w.Pods)
	s.ungating.overlay(w.Pods)
	opts := s.readingAt(s.cfg.Clock.Now())
	now := opts.Now
	s.forgetReleased(now)
	snap, err := snapshot(w, opts)
	if err != nil {
		return err
	}
	clock.done("read")
	if s.cfg.Enforcement == EnforcementPlugin {
		// Before any reservation is stored, delete those that hold nothing here any more, so
		// that the pod scheduler lets go of their room first (plugin.go). A deletion that
		// failed is tried again by the next cycle.
		if err := l.dropStale(ctx, w); err != nil {
			log.FromContext(ctx).Error(err, "deleting stale reservations")
		}
	}
	objects := map[core.Key]*object{}
	for i := range w.Workloads {
		objects[w.Workloads[i].Key] = &w.Workloads[i]
	}
	start := time.Now()
	out, asking := s.schedule(ctx, snap, objects)
	busy := time.Since(start) - asking
	var wake []core.Key
	var errs []error
	// Which admitted workloads may start their driver now (startgate.go): decided, and published to
	// Admit, before any reservation is stored, so that Admit never lets a held one start in
	// between. Those admitted earlier and not submitted yet (held, or their wake-up lost in a
	// restart) come first, and are woken; not those this loop woke already (wokenFor).
	gate := newStartGate(w, snap, now, s.ungating.inFlight(), s.cfg.StartBacklog, l.let)
	switch s.cfg.Enforcement {
	case EnforcementPlaceholders:
		if recheck := gate.holdForPlaceholders(w, opts); recheck > 0 {
			time.AfterFunc(recheck, s.trigger)
		}
	case EnforcementPlugin:
		recheck, unheld := gate.holdForPlugin(w, snap, now)
		if recheck > 0 {
			time.AfterFunc(recheck, s.trigger)
		}
		l.warnUnheld(objects, unheld)
	}
	replan := map[core.Key]string{}
	for i := range w.Workloads {
		o := &w.Workloads[i]
		r, ok := o.liveReservation()
		if !ok || !o.waits() {
			continue
		}
		if gate.start(o.Key, o.Run, r.Driver, r.Executors) {
			if !l.wokenFor(o.Key, o.Run) {
				wake = append(wake, o.Key)
			}
		} else if node, taken := gate.nodeTaken(o.Key); taken {
			// Its room went to other pods before its placeholders held it: planned again
			// now, instead of after the room wait.
			why := takenReason(node)
			gate.held[o.Key] = why + "; waiting for the gang scheduler's next cycle"
			replan[o.Key] = why
		} else if gate.overdue(o.Key, r.Admitted, now, s.cfg.PreemptionWait) {
			// Held until the cache shows its reservation gone, lest Admit let it start.
			why := replanReason(r.Driver, s.cfg.PreemptionWait)
			gate.held[o.Key] = why + "; waiting for the gang scheduler's next cycle"
			replan[o.Key] = why
		}
	}
	startNow := map[core.Key]bool{}
	for _, a := range out.Admitted {
		if o := objects[a.Key]; o == nil {
			continue
		} else if s.cfg.Enforcement == EnforcementPlaceholders {
			// Not before its placeholders, created as it is stored, hold its room.
			gate.held[a.Key] = placeholderReason
		} else if s.cfg.Enforcement == EnforcementPlugin {
			// Not before the pod scheduler holds its room (plugin.go): a later cycle.
			gate.held[a.Key] = pluginReason
		} else {
			startNow[a.Key] = gate.start(a.Key, o.Run, a.Admission.Driver, a.Admission.Executors)
		}
	}
	clock.done("decide")
	s.mu.Lock()
	s.held = gate.held
	for key, why := range replan {
		s.replanned[key] = replanned{run: objects[key].Run, why: why}
	}
	s.mu.Unlock()
	for key, why := range replan {
		// Planned again: its reservation removed, the next cycle judges it as waiting (a
		// removal that failed is tried again by the next cycle, which finds it overdue still).
		if err := s.Release(ctx, objects[key].Workload); err != nil {
			errs = append(errs, err)
			continue
		}
		log.FromContext(ctx).Info("planned again", "workload", key.String(), "why", why)
	}
	for m, at := range l.let {
		if now.Sub(at) >= owedFor {
			delete(l.let, m)
		}
	}
	for m := range gate.letNow {
		l.let[m] = now
	}
	if len(out.Admitted) > 0 && log.FromContext(ctx).V(2).Enabled() {
		used := map[string]string{}
		for _, n := range snap.Nodes {
			q := n.Used[corev1.ResourceCPU]
			used[n.Name] = q.String()
		}
		log.FromContext(ctx).V(2).Info("cycle admits", "admitted", len(out.Admitted), "cpuUsed", used, "workloads", len(snap.Workloads), "pods", len(w.Pods))
	}
	// Reservations are stored side by side: a cycle that admits many (the first, or one after
	// a large application ends) would otherwise take a round trip for each.
	type storing struct {
		o   *object
		res Reservation
		err error
	}
	var stores []storing
	for _, a := range out.Admitted {
		if o := objects[a.Key]; o != nil {
			d, _ := o.demand() // the cycle worked it out already: snapshot skips those that fail
			stores = append(stores, storing{o: o, res: newReservation(o, a.Admission, d, now)})
		}
	}
	var storingWG sync.WaitGroup
	calls := make(chan struct{}, storeCalls)
	var room *sharedRoom
	if s.cfg.Enforcement == EnforcementPlaceholders && len(stores) > 0 {
		room = &sharedRoom{room: podRoom(w)}
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
			errs = append(errs, st.err)
			continue
		}
		if startNow[st.o.Key] {
			wake = append(wake, st.o.Key)
		}
	}
	for _, p := range out.Preempted {
		if err := s.preempt(ctx, objects[p.Key], p); err != nil {
			errs = append(errs, err)
		} else if o := objects[p.Key]; o != nil {
			l.marked[p.Key] = o.Run
		}
	}

	clock.done("store")

	judged := make(map[core.Key]judgement, len(snap.Workloads))
	for _, wl := range snap.Workloads {
		if o := objects[wl.Key]; o != nil && wl.Admission == nil && !wl.Unrecorded {
			judged[wl.Key] = judgementOf(o.Workload)
		}
	}

	s.mu.Lock()
	s.explainReplanned(objects, out)
	s.last, s.judged = out, judged
	for key, why := range gate.held {
		// To show why it has not started; not for pacing, which holds it for moments (and
		// is at its busiest when the API server is).
		if why != pacedReason && why != placeholderReason && s.reported[key].Message != why {
			wake = append(wake, key)
		}
	}
	cyclesTotal.Inc()
	decisionsTotal.Add(float64(len(out.Admitted) + len(out.Waiting) + len(out.Rejected)))
	scheduleSeconds.Add(busy.Seconds())
	admittedTotal.Add(float64(len(out.Admitted)))
	// Rejected applications are woken to be failed with their reason; held ones whose shown
	// reason is out of date, a bounded number per cycle (see reasons.go).
	for key := range out.Rejected {
		wake = append(wake, key)
	}
	refresh, next := s.reasons.pick(now, out, shownReasons(w.Workloads, s.reported))
	if next > 0 {
		s.reasons.next.after(now, next, s.trigger)
	}
	for key := range s.reported {
		if _, ok := objects[key]; !ok {
			delete(s.reported, key)
		}
	}
	s.mu.Unlock()

	if s.waker != nil {
		// Woken first: an admitted workload's capacity is idle until its driver exists, while
		// a refreshed reason only tells a user more exactly why it waits.
		s.waker.Wake(wake...)
		s.waker.Refresh(refresh...)
	}
	clock.done("wake")
	s.ungateExecutors(ctx, w, opts, out.Ungated)
	clock.done("ungate")
	// The reservations this cycle stored hold their room once their placeholders do.
	s.overlayStored(w.Workloads, false)
	logPlaceholderError(ctx, s.reconcilePlaceholders(ctx, w, opts))
	clock.done("placeholders")
	s.writeReservationStatus(ctx, w)
	clock.done("reservation_status")
	// The ungating loop lets go executors that appeared while this cycle ran.
	s.triggerUngate()
	if err := s.writeQueueStatus(ctx, w, snap, out); err != nil {
		errs = append(errs, err)
	}
	clock.done("queue_status")
	return errors.Join(errs...)
}

// wokenFor reports whether an earlier cycle of this loop let the driver of run of key start, and
// woke it, less than owedFor ago (l.let): until the cache shows its submission, the workload
// still waits to start, and woken again by every cycle it would only be read again by the
// submission pool. One let start by another process (before a restart, or by the leader
// before) is woken again.
func (l *loop) wokenFor(key core.Key, run string) bool {
	_, ok := l.let[boundMember{app: key, submission: run, role: v1beta2.SparkRoleDriver}]
	return ok
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

// store writes res as the workload's Reservation before anything else happens, so that an
// operator restarting just after finds it, and remembers it until the cluster cache shows it
// (overlayStored); then, with placeholders, it creates its placeholders where there is room. The one cycle loop is the
// only writer of reservations: one of an earlier run, or of an earlier workload of the same
// name, is replaced.
func (l *loop) store(ctx context.Context, o *object, res Reservation, room *sharedRoom) (Reservation, error) {
	s := l.s
	obj, err := reservationObject(o, res, s.cfg.Enforcement)
	if err != nil {
		return res, err
	}
	err = s.client.Create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var cur schedv1alpha1.Reservation
			if err := s.api.Get(ctx, client.ObjectKeyFromObject(obj), &cur); err != nil {
				return err
			}
			cur.Spec, cur.OwnerReferences, cur.Labels = obj.Spec, obj.OwnerReferences, obj.Labels
			if err := s.client.Update(ctx, &cur); err != nil {
				return err
			}
			obj = &cur
			return nil
		})
	}
	if err != nil {
		return res, fmt.Errorf("storing the reservation of %s: %w", o.Key, err)
	}
	// As the cache will show it: until it does, the overlay says the pod scheduler does not
	// hold it yet (holdForPlugin).
	res.UID, res.Enforcement = obj.UID, Enforcement(obj.Spec.Enforcement)
	s.mu.Lock()
	s.stored[o.Key] = res
	s.mu.Unlock()
	log.FromContext(ctx).V(1).Info("admitted", "workload", o.Key.String(), "queue", res.Queue, "driver", res.Driver, "executors", res.Executors)
	// Its placeholders at once, into the room free now: pods created after the admission
	// queue behind them. Those without room yet are created by a later cycle.
	if !o.ownPlacement {
		logPlaceholderError(ctx, s.createPlaceholders(ctx, o.Key, res, room))
	}
	return res, nil
}

// overlayStored gives the cached workloads the reservations the cycle loop stored that the
// cache does not show yet; with forget, on the objects as the cache holds them, it forgets
// those the cache shows (or whose run has moved on, or whose workload is gone).
func (s *Scheduler) overlayStored(objects []object, forget bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[core.Key]bool{}
	for i := range objects {
		o := &objects[i]
		seen[o.Key] = true
		res, ok := s.stored[o.Key]
		if !ok {
			continue
		}
		if forget && ((o.res != nil && !o.legacy && o.res.UID == res.UID && o.res.SubmissionID == res.SubmissionID) || o.Run != res.SubmissionID) {
			delete(s.stored, o.Key)
			continue
		}
		if o.Run != res.SubmissionID {
			continue
		}
		stored := res
		o.res, o.legacy = &stored, false
	}
	for key := range s.stored {
		if forget && !seen[key] {
			delete(s.stored, key)
		}
	}
}

// overlayMarked puts on the cached workloads the preemption marks this loop wrote that the
// cache does not show yet, and forgets those it shows (or whose run has moved on). The objects
// are the cache's: a mark is put on a copy.
func (l *loop) overlayMarked(objects []object) {
	seen := map[core.Key]bool{}
	for i := range objects {
		o := &objects[i]
		seen[o.Key] = true
		id, ok := l.marked[o.Key]
		if !ok {
			continue
		}
		if o.Run != id || o.preempted() {
			delete(l.marked, o.Key)
			continue
		}
		obj := o.Object.DeepCopyObject().(client.Object)
		annotations := maps.Clone(obj.GetAnnotations())
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[scheduler.AnnotationPreempted] = id
		obj.SetAnnotations(annotations)
		o.Object = obj
	}
	for key := range l.marked {
		if !seen[key] {
			delete(l.marked, key)
		}
	}
}

// preempt stops a whole admitted workload so a waiting one of higher priority fits: it is
// marked for its controller, which stops its run and queues it again, with an event.
func (s *Scheduler) preempt(ctx context.Context, o *object, p core.Preemption) error {
	if o == nil {
		return nil
	}
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, scheduler.AnnotationPreempted, o.Run))
	if err := s.client.Patch(ctx, o.Object.DeepCopyObject().(client.Object), client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("preempting %s: %w", o.Key, err)
	}
	if s.recorder != nil {
		s.recorder.Eventf(o.Object, nil, corev1.EventTypeWarning, "Preempted", "Preempt",
			"preempted by %s: %s; the run is stopped and queued again", p.By, p.Reason)
	}
	return nil
}
