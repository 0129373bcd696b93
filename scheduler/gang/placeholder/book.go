/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package placeholder

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Book remembers the placeholders created and deleted until the cluster cache shows it, so
// that a lagging cache does not have them created or deleted twice; and those being swapped or
// swapped, for bookLag whatever the cache shows: a cycle must neither delete such a placeholder
// before the swap has nominated its member (it sees the member given from the moment the swap
// is chosen) nor, having read the world before the swap began, create it again. It also runs
// the swaps onto each node, of members of type M (the caller's: what lets one go), and keeps
// the placeholders' PriorityClasses. Its zero value is ready to use.
//
// It keeps time by Clock, the scheduler's (the wall clock if nil), set before it is used.
// Classes keeps its own lock; every other field is read and written under mu: the write
// goroutines note and forget while a cycle asks.
type Book[M any] struct {
	Clock clock.PassiveClock
	// Classes are the placeholders' PriorityClasses.
	Classes Classes

	mu sync.Mutex
	// ledgers holds, for each ledger, the placeholders noted in it and when.
	ledgers [ledgers]map[types.NamespacedName]time.Time
	// arrived holds when the first member of a node group was seen waiting for the others to
	// take the group's placeholder's place (package gang's takeGroups), by that placeholder.
	arrived map[types.NamespacedName]time.Time
	// nodes holds the swap running onto each node (package gang's swapOnto).
	nodes map[string]*Swap[M]
}

// Swap is the swap running onto one node: first its members make room (package gang's
// makeRoom), then, all together, they are let go and awaited bound. Members that arrive while
// it makes room join it; those that arrive while its members are let go wait for the next swap.
type Swap[M any] struct {
	letting bool           // its members are being let go: arrivals wait for the next
	making  sync.WaitGroup // groups of it still making room
	members []M
	errs    []error // what failed making room, aligned with members
	next    []M
}

// Turn is what a group arriving for a node does (QueueSwaps).
type Turn int

const (
	// SwapLead: it starts the swap onto the node; the caller makes its room and lets the swap's
	// members go.
	SwapLead Turn = iota
	// SwapJoin: it joins the swap making room there; the caller makes its room, and the swap's
	// lead lets it go with the others.
	SwapJoin
	// SwapWait: it waits for the next swap, which the lead of the one there runs.
	SwapWait
)

// QueueSwaps adds group to the swap onto node: it starts one, joins the one making room there,
// or waits for the next (Turn). A lead or joiner gets the offset of its members in the swap's,
// for DoneMaking.
func (b *Book[M]) QueueSwaps(node string, group []M) (*Swap[M], int, Turn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.nodes == nil {
		b.nodes = map[string]*Swap[M]{}
	}
	st := b.nodes[node]
	switch {
	case st == nil:
		st = &Swap[M]{}
		b.nodes[node] = st
		return st, st.joinLocked(group), SwapLead
	case st.letting:
		st.next = append(st.next, group...)
		return st, 0, SwapWait
	default:
		return st, st.joinLocked(group), SwapJoin
	}
}

func (st *Swap[M]) joinLocked(group []M) int {
	off := len(st.members)
	st.members = append(st.members, group...)
	st.errs = append(st.errs, make([]error, len(group))...)
	st.making.Add(1)
	return off
}

// DoneMaking records what failed making room for the members of st from off.
func (b *Book[M]) DoneMaking(st *Swap[M], off int, errs []error) {
	b.mu.Lock()
	copy(st.errs[off:], errs)
	b.mu.Unlock()
	st.making.Done()
}

// LetGo closes st to arrivals and returns its members, with what failed making room, once all
// have made theirs.
func (b *Book[M]) LetGo(st *Swap[M]) ([]M, []error) {
	b.mu.Lock()
	st.letting = true
	b.mu.Unlock()
	st.making.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	return st.members, st.errs
}

// NextSwap starts the next swap onto node after st, with the members that waited for it, or
// ends the swaps there when none did (nil).
func (b *Book[M]) NextSwap(node string, st *Swap[M]) (*Swap[M], []M) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(st.next) == 0 {
		delete(b.nodes, node)
		return nil, nil
	}
	next := &Swap[M]{}
	next.joinLocked(st.next)
	b.nodes[node] = next
	return next, st.next
}

// bookLag bounds how long the book trusts itself over the cache.
const bookLag = 30 * time.Second

// Ledger is one of the book's lists of placeholders.
type Ledger int

const (
	Created Ledger = iota // created, until the cache shows them
	Deleted               // deleted, until the cache lacks them
	Swapped               // being swapped or swapped, for bookLag
	ledgers
)

// now is the book's clock's time.
func (b *Book[M]) now() time.Time {
	if b.Clock == nil {
		return time.Now()
	}
	return b.Clock.Now()
}

// Note records key in l, now.
func (b *Book[M]) Note(l Ledger, key types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ledgers[l] == nil {
		b.ledgers[l] = map[types.NamespacedName]time.Time{}
	}
	b.ledgers[l][key] = b.now()
}

// Sync forgets what the cache shows: created placeholders it holds, deleted ones it lacks.
func (b *Book[M]) Sync(existing map[types.NamespacedName]*corev1.Pod) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	old := func(at time.Time) bool { return now.Sub(at) > bookLag }
	for key, at := range b.ledgers[Created] {
		if existing[key] != nil || old(at) {
			delete(b.ledgers[Created], key)
		}
	}
	for key, at := range b.ledgers[Deleted] {
		if existing[key] == nil || old(at) {
			delete(b.ledgers[Deleted], key)
		}
	}
	for key, at := range b.ledgers[Swapped] {
		if old(at) {
			delete(b.ledgers[Swapped], key)
		}
	}
	for key, at := range b.arrived {
		if old(at) {
			delete(b.arrived, key)
		}
	}
}

// ArrivedAt is when a member of the node group held by placeholder was first seen waiting:
// now, when none was before.
func (b *Book[M]) ArrivedAt(placeholder types.NamespacedName, now time.Time) time.Time {
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

// Forget takes key out of l.
func (b *Book[M]) Forget(l Ledger, key types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.ledgers[l], key)
}

// Has reports whether key is in l.
func (b *Book[M]) Has(l Ledger, key types.NamespacedName) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.ledgers[l][key]
	return ok
}
