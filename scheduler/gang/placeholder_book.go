/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// placeholderBook remembers the placeholders created and deleted until the cluster cache
// shows it, so that a lagging cache does not have them created or deleted twice; and those
// being swapped or swapped, for bookLag whatever the cache shows: a cycle must neither delete
// such a placeholder before the swap has nominated its member (it sees the member given from
// the moment the swap is chosen) nor, having read the world before the swap began, create it
// again.
//
// It keeps time by clock, the scheduler's (the wall clock if nil). Every field is read and
// written under mu: the write goroutines note and forget while a cycle asks.
type placeholderBook struct {
	mu    sync.Mutex
	clock clock.PassiveClock
	// ledgers holds, for each ledger, the placeholders noted in it and when.
	ledgers [ledgers]map[types.NamespacedName]time.Time
	// arrived holds when the first member of a node group was seen waiting for the others to
	// take the group's placeholder's place (takeGroups), by that placeholder.
	arrived map[types.NamespacedName]time.Time
	// nodes holds the swap running onto each node (swapOnto).
	nodes map[string]*nodeSwap
	// classes are the placeholders' PriorityClasses.
	classes placeholderClasses
}

// pendingSwap is a member waiting to take its placeholder's place, with what lets it go once
// the placeholder is gone (or says why it could not be).
type pendingSwap struct {
	rel    toUngate
	finish func(toUngate, error)
}

// nodeSwap is the swap running onto one node: first its members make room (makeRoom), then,
// all together, they are let go and awaited bound. Members that arrive while it makes room
// join it; those that arrive while its members are let go wait for the next swap.
type nodeSwap struct {
	letting bool           // its members are being let go: arrivals wait for the next
	making  sync.WaitGroup // groups of it still making room
	members []pendingSwap
	errs    []error // what failed making room, aligned with members
	next    []pendingSwap
}

// swapTurn is what a group arriving for a node does (queueSwaps).
type swapTurn int

const (
	// swapLead: it starts the swap onto the node; the caller makes its room and lets the swap's
	// members go.
	swapLead swapTurn = iota
	// swapJoin: it joins the swap making room there; the caller makes its room, and the swap's
	// lead lets it go with the others.
	swapJoin
	// swapWait: it waits for the next swap, which the lead of the one there runs.
	swapWait
)

// queueSwaps adds group to the swap onto node: it starts one, joins the one making room there,
// or waits for the next (swapTurn). A lead or joiner gets the offset of its members in the
// swap's, for doneMaking.
func (b *placeholderBook) queueSwaps(node string, group []pendingSwap) (*nodeSwap, int, swapTurn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.nodes == nil {
		b.nodes = map[string]*nodeSwap{}
	}
	st := b.nodes[node]
	switch {
	case st == nil:
		st = &nodeSwap{}
		b.nodes[node] = st
		return st, st.joinLocked(group), swapLead
	case st.letting:
		st.next = append(st.next, group...)
		return st, 0, swapWait
	default:
		return st, st.joinLocked(group), swapJoin
	}
}

func (st *nodeSwap) joinLocked(group []pendingSwap) int {
	off := len(st.members)
	st.members = append(st.members, group...)
	st.errs = append(st.errs, make([]error, len(group))...)
	st.making.Add(1)
	return off
}

// doneMaking records what failed making room for the members of st from off.
func (b *placeholderBook) doneMaking(st *nodeSwap, off int, errs []error) {
	b.mu.Lock()
	copy(st.errs[off:], errs)
	b.mu.Unlock()
	st.making.Done()
}

// letGo closes st to arrivals and returns its members, with what failed making room, once all
// have made theirs.
func (b *placeholderBook) letGo(st *nodeSwap) ([]pendingSwap, []error) {
	b.mu.Lock()
	st.letting = true
	b.mu.Unlock()
	st.making.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	return st.members, st.errs
}

// nextSwap starts the next swap onto node after st, with the members that waited for it, or
// ends the swaps there when none did (nil).
func (b *placeholderBook) nextSwap(node string, st *nodeSwap) (*nodeSwap, []pendingSwap) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(st.next) == 0 {
		delete(b.nodes, node)
		return nil, nil
	}
	next := &nodeSwap{}
	next.joinLocked(st.next)
	b.nodes[node] = next
	return next, st.next
}

// bookLag bounds how long the book trusts itself over the cache.
const bookLag = 30 * time.Second

// ledger is one of the book's lists of placeholders.
type ledger int

const (
	bookCreated ledger = iota // created, until the cache shows them
	bookDeleted               // deleted, until the cache lacks them
	bookSwapped               // being swapped or swapped, for bookLag
	ledgers
)

// now is the book's clock's time.
func (b *placeholderBook) now() time.Time {
	if b.clock == nil {
		return time.Now()
	}
	return b.clock.Now()
}

// note records key in l, now.
func (b *placeholderBook) note(l ledger, key types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ledgers[l] == nil {
		b.ledgers[l] = map[types.NamespacedName]time.Time{}
	}
	b.ledgers[l][key] = b.now()
}

// sync forgets what the cache shows: created placeholders it holds, deleted ones it lacks.
func (b *placeholderBook) sync(existing map[types.NamespacedName]*corev1.Pod) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	old := func(at time.Time) bool { return now.Sub(at) > bookLag }
	for key, at := range b.ledgers[bookCreated] {
		if existing[key] != nil || old(at) {
			delete(b.ledgers[bookCreated], key)
		}
	}
	for key, at := range b.ledgers[bookDeleted] {
		if existing[key] == nil || old(at) {
			delete(b.ledgers[bookDeleted], key)
		}
	}
	for key, at := range b.ledgers[bookSwapped] {
		if old(at) {
			delete(b.ledgers[bookSwapped], key)
		}
	}
	for key, at := range b.arrived {
		if old(at) {
			delete(b.arrived, key)
		}
	}
}

// arrivedAt is when a member of the node group held by placeholder was first seen waiting:
// now, when none was before.
func (b *placeholderBook) arrivedAt(placeholder types.NamespacedName, now time.Time) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	if at, ok := b.arrived[placeholder]; ok {
		return at
	}
	if b.arrived == nil {
		b.arrived = map[types.NamespacedName]time.Time{}
	}
	b.arrived[placeholder] = now
	return now
}

// forget takes key out of l.
func (b *placeholderBook) forget(l ledger, key types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.ledgers[l], key)
}

// has reports whether key is in l.
func (b *placeholderBook) has(l ledger, key types.NamespacedName) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.ledgers[l][key]
	return ok
}
