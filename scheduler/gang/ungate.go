/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/scheduler/gang/placeholder"
	"github.com/sparkop/spark-operator/scheduler/gang/release"
)

// Ungating: letting gated executors go, each confined to the node chosen for it.
//
// Gated executors are let go off the decision cycle. A cycle waits for the reservations it
// stores and the queue status it writes; a new executor must not wait for those, or its driver
// runs without it. So the ungating loop runs as soon as the cluster cache shows a gated
// executor that is not being ungated yet, gives it its planned slot (executorsToUngate), and
// sends the ungating patch without waiting for it; executors beyond the plan are still ungated
// by the cycle, which decides them (Outcome.Ungated). Both go through ungating, which keeps
// what is being ungated so that neither lets an executor go twice nor gives its slot away.
// The patch, its guards and that record are package release's; which executor goes onto which
// node, and when, are decided here. (Not to be confused with Release, which frees a workload's
// reservation when its run ends.)

// ungateCalls bounds the API calls ungating executors in flight.
const ungateCalls = 32

// indexGated indexes the cluster cache's pods that carry the gang gate ("true").
const indexGated = "gang.gated"

// ungating holds the executors being let go (package release's Tracker: the node each was
// given, from the moment it is chosen until the cluster cache shows it ungated) and bounds the
// API calls letting them go.
type ungating struct {
	release.Tracker
	calls chan struct{}
}

func newUngating() ungating {
	return ungating{calls: make(chan struct{}, ungateCalls)}
}

// ungateExecutors lets go the gated executors of w that executorsToUngate chooses, with o
// saying which reservations still keep their planned nodes and beyondPlan the nodes a cycle
// released executors beyond their plans to (nil outside a cycle).
// Choosing is atomic with what is being ungated already, seen over w; the API calls run side
// by side and are not waited for. A call that fails is forgotten, and a cycle and the ungating
// loop asked for shortly, which choose again.
func (s *Scheduler) ungateExecutors(ctx context.Context, w world, o snapshotOptions, beyondPlan map[core.Key][]string) {
	r := &s.ungating
	var chosen []toUngate
	var placeholders map[types.NamespacedName]*corev1.Pod
	var missing map[string][]standIn
	r.Choose(w.Pods, func(start func(types.NamespacedName, string)) {
		// Drivers are gated only with placeholders (Reservation.Pods), or were by an operator
		// that ran with them before a restart: let go, without a swap, whatever the enforcement.
		chosen = append(executorsToUngate(w, beyondPlan, o), driversToUngate(w)...)
		placeholders = existingPlaceholders(w)
		chosen, missing = s.takeGroups(chosen, placeholders, s.cfg.Clock.Now())
		for _, rel := range chosen {
			start(rel.pod, rel.node)
		}
	})
	if len(chosen) == 0 {
		return
	}
	cached := make(map[types.NamespacedName]*corev1.Pod, len(chosen))
	for _, rel := range chosen {
		cached[rel.pod] = nil
	}
	for i := range w.Pods {
		if key := client.ObjectKeyFromObject(&w.Pods[i]); cached[key] == nil {
			if _, ok := cached[key]; ok {
				cached[key] = &w.Pods[i]
			}
		}
	}
	chosenAt := time.Now()
	// With placeholders, the members taking placeholders' places on one node swap together
	// (swapOnto): each is nominated there while its placeholder still stands, which
	// kube-scheduler counts twice until the placeholder goes, and would find a sibling let go
	// meanwhile short of room.
	swaps := map[string][]pendingSwap{}
	finish := func(rel toUngate, err error) {
		if err == nil {
			err = release.Pod(ctx, s.client, s.api, cached[rel.pod], rel.node)
		}
		ungateCallSeconds.Observe(time.Since(chosenAt).Seconds())
		r.Done(rel.pod, rel.node, err)
		if err != nil {
			log.FromContext(ctx).Error(err, "releasing a gated executor failed; retrying")
			time.AfterFunc(time.Second, func() { s.trigger(); s.triggerUngate() })
		}
	}
	for _, rel := range chosen {
		if p := cached[rel.pod]; p != nil && !p.CreationTimestamp.IsZero() {
			ungateWaitSeconds.Observe(chosenAt.Sub(p.CreationTimestamp.Time).Seconds())
		}
		if _, has := placeholders[rel.placeholder]; s.swaps(rel, has) {
			// From now on the swap alone deletes the placeholder, after the nomination: a
			// cycle that sees the member given must not delete it first.
			s.placeholders.Note(placeholder.Swapped, rel.placeholder)
			swaps[rel.node] = append(swaps[rel.node], pendingSwap{rel: rel, finish: finish})
			continue
		}
		go func() {
			r.calls <- struct{}{}
			defer func() { <-r.calls }()
			finish(rel, nil)
		}()
	}
	for node, group := range swaps {
		go func() { s.swapOnto(ctx, node, s.withStandIns(ctx, group, missing[node])) }()
	}
}

// pendingSwap is a member waiting to take its placeholder's place, with what lets it go once
// the placeholder is gone (or says why it could not be).
type pendingSwap struct {
	rel    toUngate
	finish func(toUngate, error)
}

// swapOnto swaps group onto node: its members make room (makeRoom) and are let go. One swap
// at a time lets members go onto a node, and awaits them bound before the next: a member let
// go and not bound yet would be found short of room by the nominations of a later swap beside
// its standing placeholders. Members that arrive while a swap makes room join it (they make
// room beside it, and are let go with it); those that arrive while it lets its members go wait
// for the next swap, all together. So executors created one by one onto one node are let go
// in a few batches, not one swap after another.
func (s *Scheduler) swapOnto(ctx context.Context, node string, group []pendingSwap) {
	st, off, turn := s.placeholders.QueueSwaps(node, group)
	if turn == placeholder.SwapWait {
		return
	}
	s.placeholders.DoneMaking(st, off, s.makeRoom(ctx, rels(group), s.ungating.calls))
	if turn == placeholder.SwapJoin {
		return
	}
	for st != nil {
		members, errs := s.placeholders.LetGo(st)
		var wg sync.WaitGroup
		for i, p := range members {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.ungating.calls <- struct{}{}
				defer func() { <-s.ungating.calls }()
				p.finish(p.rel, errs[i])
			}()
		}
		wg.Wait()
		s.awaitBound(ctx, rels(members), errs)
		if st, group = s.placeholders.NextSwap(node, st); st != nil {
			s.placeholders.DoneMaking(st, 0, s.makeRoom(ctx, rels(group), s.ungating.calls))
		}
	}
}

// rels are the members of group.
func rels(group []pendingSwap) []toUngate {
	out := make([]toUngate, len(group))
	for i := range group {
		out[i] = group[i].rel
	}
	return out
}

// ungateLoop runs the ungating loop until ctx ends: whenever a gated executor appears or
// changes, and after every cycle.
func (l *loop) ungateLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.s.ungateKick:
		}
		if err := l.s.ungateNew(ctx); err != nil {
			log.FromContext(ctx).Error(err, "releasing gated executors failed; retrying")
			time.AfterFunc(time.Second, l.s.triggerUngate)
		}
	}
}

// ungateNew lets go the gated executors that have a planned slot and are not being released
// yet; it reads nothing more unless there are some.
func (s *Scheduler) ungateNew(ctx context.Context) error {
	var gated corev1.PodList
	if err := s.cluster.List(ctx, &gated, client.MatchingFields{indexGated: "true"}); err != nil {
		return fmt.Errorf("listing gated executors: %w", err)
	}
	if !s.ungating.AnyNew(gated.Items) {
		return nil
	}
	w, err := s.read(ctx)
	if err != nil {
		return err
	}
	s.ungating.Forget(w.Pods)
	s.ungateExecutors(ctx, w, s.readingAt(s.cfg.Clock.Now()), nil)
	return nil
}

// triggerUngate asks the ungating loop to run; requests made while a run is pending are
// merged into it.
func (s *Scheduler) triggerUngate() {
	select {
	case s.ungateKick <- struct{}{}:
	default:
	}
}
