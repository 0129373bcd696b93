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
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/sparkpod"
)

// The plugin enforcement: the pod scheduler (spark-scheduler's SparkReservations plugin) holds
// the room of the Reservations, and the gang scheduler keeps what it holds and what it plans
// the same.
//
// Stale reservations. The pod scheduler holds the room of every Reservation object
// there is, and the gang scheduler must hold no less: a run stops holding room here the moment
// it is over (its driver ended, its application finished, suspended or preempted), and the
// controller deletes its Reservation only when it gets to it (Release), tens of seconds later
// on a busy API server. Room the gang scheduler gave again in that time would still be held
// by the plugin, and the new run's members refused. So each cycle first deletes the
// Reservations that hold nothing here any more, and only then stores new ones: the plugin
// reads both through one watch, in order, so it has let go of the old room before it sees the
// new reservation, and long before the new run's pods arrive.

// staleReservations are the Reservation objects of w that hold nothing: of another run than
// their workload's current one, of a workload that holds nothing now, or of a run whose driver
// ended. Legacy annotations are not objects, and are left to Release.
func staleReservations(w world) map[core.Key]types.UID {
	ended := endedRuns(w.Pods)
	var stale map[core.Key]types.UID
	for i := range w.Workloads {
		o := &w.Workloads[i]
		if o.res == nil || o.res.UID == "" {
			continue
		}
		r, live := o.liveReservation()
		if live && !ended[boundMember{app: o.Key, submission: r.SubmissionID, role: v1beta2.SparkRoleExecutor}] {
			continue
		}
		if stale == nil {
			stale = map[core.Key]types.UID{}
		}
		stale[o.Key] = o.res.UID
	}
	return stale
}

// dropStale deletes the stale reservations of w (staleReservations), side by side, and waits
// for the deletions; the loop forgets having stored them. One the cache still shows after
// its deletion is not deleted again.
func (l *loop) dropStale(ctx context.Context, w world) error {
	stale := staleReservations(w)
	if len(stale) == 0 {
		l.dropped = nil
		return nil
	}
	next := make(map[types.UID]bool, len(stale))
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	calls := make(chan struct{}, storeCalls)
	for key, uid := range stale {
		next[uid] = true
		if l.dropped[uid] {
			continue
		}
		name := types.NamespacedName{Namespace: key.Namespace, Name: ReservationName(key)}
		wg.Add(1)
		calls <- struct{}{}
		go func() {
			defer func() { <-calls; wg.Done() }()
			// Preconditioned on its UID: a reservation stored since under the same name is
			// another run's.
			obj := &schedv1alpha1.Reservation{ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: name.Name}}
			err := l.s.client.Delete(ctx, obj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err):
				l.s.mu.Lock()
				if r, ok := l.s.stored[key]; ok && r.UID == uid {
					delete(l.s.stored, key)
				}
				l.s.mu.Unlock()
			default:
				errs = append(errs, fmt.Errorf("deleting the stale reservation %s: %w", name, err))
				next[uid] = false
			}
		}()
	}
	wg.Wait()
	l.dropped = next
	return errors.Join(errs...)
}

// Room taken before it was held. The gang scheduler plans from its cache, and the pod
// scheduler learns of a reservation only once it is stored, through a watch of its own: a pod
// it places in between (one the cache did not show yet, or one placed just after the decision,
// or before its watch delivered the reservation) can take room planned for a member, which
// would then wait unschedulable beside its running driver. So a run's driver starts only once
// the pod scheduler says it holds the room (the Reservation's Held condition, for its current
// plan, which spark-scheduler's plugin sets as soon as it reads it; false when it finds pods it
// placed before in the planned room, and the run is then planned again at once), and the run's
// planned nodes hold what is planned on them as the cache shows them: the pods on them that are
// not ending, and the members of every run not on them yet, fit. A run with a member planned on a node they do not fit is
// planned again at once. Pods that are ending (those of runs a preemptor was admitted in place
// of) are on their way out: the driver waits for them as always (startgate.go).
//
// A pod scheduler that never says so (the operator runs with the plugin enforcement, the
// cluster with the stock kube-scheduler) would hold every run for ever: after heldWait the run
// starts without it, as advisory, and its workload gets a warning event.

// pluginReason is what a workload waiting for the pod scheduler to hold its room shows, should
// its status be written (it lasts moments).
const pluginReason = "admitted; starting once the pod scheduler holds the room planned for it"

// heldWait is how long after its admission a run waits for the pod scheduler to say it holds
// its room before it starts without.
const heldWait = 30 * time.Second

// holdForPlugin makes the gate hold, of w's runs waiting to start, those whose Reservation the
// pod scheduler does not say it holds yet (not Held; one this loop stored that the cache does
// not show yet says nothing), for heldWait after their admission at most; and take for planning again those
// with a member planned on a node snap finds over-committed by pods that are not ending. It
// returns when a run held would stop waiting (0: none is), and the runs that started without
// the pod scheduler holding their room.
func (g *startGate) holdForPlugin(w world, snap core.Snapshot, now time.Time) (recheck time.Duration, unheld []core.Key) {
	g.placing, g.taken = map[core.Key]string{}, map[core.Key]string{}
	ending := map[string]corev1.ResourceList{}
	for i := range w.Pods {
		p := &w.Pods[i]
		if p.DeletionTimestamp.IsZero() || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if on := placedOn(p); on != "" {
			if ending[on] == nil {
				ending[on] = corev1.ResourceList{}
			}
			sparkpod.AddTimes(ending[on], requestsOf(p), 1)
		}
	}
	over := map[string]bool{}
	for i := range snap.Nodes {
		n := &snap.Nodes[i]
		for name, alloc := range n.Allocatable {
			used := n.Used[name]
			if e, ok := ending[n.Name][name]; ok {
				used.Sub(e)
			}
			if used.Cmp(alloc) > 0 {
				over[n.Name] = true
			}
		}
	}
	for i := range w.Workloads {
		o := &w.Workloads[i]
		r, ok := o.liveReservation()
		if !ok || !o.waits() {
			continue
		}
		if r.TakenOn != "" {
			// The pod scheduler found pods it placed before it read the plan in its room.
			g.taken[o.Key] = r.TakenOn
			continue
		}
		if r.Enforcement == EnforcementPlugin && !r.Held {
			if left := heldWait - now.Sub(r.Admitted); left > 0 {
				g.placing[o.Key] = pluginReason
				if recheck == 0 || left < recheck {
					recheck = left
				}
				continue
			}
			unheld = append(unheld, o.Key)
		}
		for _, node := range append([]string{r.Driver}, slices.Sorted(maps.Keys(r.Executors))...) {
			if over[node] {
				g.taken[o.Key] = node
				break
			}
		}
	}
	return recheck, unheld
}

// warnUnheld tells the owners of the runs unheld, that start without the pod scheduler holding
// their room, once a run.
func (l *loop) warnUnheld(objects map[core.Key]*object, unheld []core.Key) {
	warned := make(map[core.Key]string, len(l.warnedUnheld))
	for key, run := range l.warnedUnheld {
		if o := objects[key]; o != nil && o.Run == run {
			warned[key] = run
		}
	}
	for _, key := range unheld {
		o := objects[key]
		if o == nil || warned[key] == o.Run {
			continue
		}
		warned[key] = o.Run
		l.s.recorder.Eventf(o.Object, nil, corev1.EventTypeWarning, "ReservationNotHeld", "Start",
			"the pod scheduler did not say within %s that it holds Reservation %s (the gang enforcement is plugin); starting without: other pods may take the room planned for its members. Run spark-scheduler (the SparkReservations plugin) as the cluster's scheduler, or use another enforcement",
			heldWait, ReservationName(key))
	}
	l.warnedUnheld = warned
}
