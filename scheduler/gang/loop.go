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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
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
