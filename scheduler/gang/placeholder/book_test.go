/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package placeholder

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestPlaceholderBookConcurrent notes and asks about placeholders from several goroutines at
// once, as the write goroutines and the ungating loop do; under -race it fails when the book
// reads a ledger outside its lock.
func TestPlaceholderBookConcurrent(t *testing.T) {
	var b Book[string]
	key := types.NamespacedName{Namespace: "ns", Name: "a-ph-driver"}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(2)
		go func() { defer wg.Done(); b.Note(Created, key) }()
		go func() { defer wg.Done(); b.Has(Created, key) }()
	}
	wg.Wait()
	if !b.Has(Created, key) {
		t.Errorf("the book does not have %s after noting it", key)
	}
}

// TestPlaceholderBookClock checks that the book keeps and forgets by the scheduler's clock:
// what it noted stays for bookLag by that clock, whatever the wall clock says, and goes after.
func TestPlaceholderBookClock(t *testing.T) {
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) // far from the wall clock
	clock := clocktesting.NewFakeClock(start)
	b := &Book[string]{Clock: clock}
	key := types.NamespacedName{Namespace: "ns", Name: "a-ph-executors-2-3"}
	b.Note(Swapped, key)
	b.ArrivedAt(key, clock.Now())

	clock.Step(bookLag / 2)
	b.Sync(nil)
	if !b.Has(Swapped, key) {
		t.Errorf("swapped %s forgotten %v after it was noted; want kept for bookLag (%v)", key, bookLag/2, bookLag)
	}
	if got := b.ArrivedAt(key, clock.Now()); !got.Equal(start) {
		t.Errorf("arrival of %s after %v is %v; want the first one, %v", key, bookLag/2, got, start)
	}

	clock.Step(bookLag)
	b.Sync(nil)
	if b.Has(Swapped, key) {
		t.Errorf("swapped %s kept %v after it was noted; want forgotten after bookLag (%v)", key, bookLag*3/2, bookLag)
	}
	if got := b.ArrivedAt(key, clock.Now()); !got.Equal(clock.Now()) {
		t.Errorf("arrival of %s after %v is %v; want a new one, %v", key, bookLag*3/2, got, clock.Now())
	}
}

// TestSwapsOntoANodeBatch: members that arrive for a node while a swap there makes room join
// it, and are let go with it once all made theirs; those that arrive while it lets its members
// go wait, and the next swap takes all of them at once; other nodes' swaps do not wait.
func TestSwapsOntoANodeBatch(t *testing.T) {
	// In a bubble: synctest.Wait says when the goroutine letting members go is blocked.
	synctest.Test(t, func(t *testing.T) {
		var b Book[types.NamespacedName]
		member := func(name string) []types.NamespacedName {
			return []types.NamespacedName{{Namespace: "ns", Name: name}}
		}
		names := func(ps []types.NamespacedName) []string {
			var out []string
			for _, p := range ps {
				out = append(out, p.Name)
			}
			return out
		}
		lead, off, turn := b.QueueSwaps("n1", member("e1"))
		if turn != SwapLead || off != 0 {
			t.Fatalf("the first swap onto n1: turn %v at %d, want the lead at 0", turn, off)
		}
		if _, _, turn := b.QueueSwaps("n2", member("f1")); turn != SwapLead {
			t.Error("a swap onto n2 waits for n1's")
		}
		st, off, turn := b.QueueSwaps("n1", member("e2"))
		if turn != SwapJoin || st != lead || off != 1 {
			t.Fatalf("e2, arriving while n1's swap makes room: turn %v at %d, want to join it at 1", turn, off)
		}
		b.DoneMaking(lead, 0, []error{nil})

		// The lead lets its members go only once e2 made its room too.
		type letGo struct {
			members []types.NamespacedName
			errs    []error
		}
		done := make(chan letGo)
		go func() {
			members, errs := b.LetGo(lead)
			done <- letGo{members, errs}
		}()
		synctest.Wait() // LetGo has returned, or is blocked for good
		select {
		case <-done:
			t.Fatal("the swap let its members go before e2 made its room")
		default:
		}
		for _, name := range []string{"e3", "e4"} {
			if _, _, turn := b.QueueSwaps("n1", member(name)); turn != SwapWait {
				t.Fatalf("%s, arriving while the swap lets its members go: turn %v, want to wait", name, turn)
			}
		}
		failed := errors.New("nominating failed")
		b.DoneMaking(lead, off, []error{failed})
		got := <-done
		if diff := cmp.Diff([]string{"e1", "e2"}, names(got.members)); diff != "" {
			t.Errorf("members let go (-want +got):\n%s", diff)
		}
		if len(got.errs) != 2 || got.errs[0] != nil || got.errs[1] != failed {
			t.Errorf("what failed making room = %v, want [nil %v]", got.errs, failed)
		}

		next, group := b.NextSwap("n1", lead)
		if diff := cmp.Diff([]string{"e3", "e4"}, names(group)); diff != "" {
			t.Errorf("next swap onto n1 (-want +got):\n%s", diff)
		}
		if _, _, turn := b.QueueSwaps("n1", member("e5")); turn != SwapJoin {
			t.Errorf("e5, arriving while the next swap makes room: turn %v, want to join it", turn)
		}
		b.DoneMaking(next, 0, []error{nil, nil})
		b.DoneMaking(next, 2, []error{nil})
		if members, _ := b.LetGo(next); len(members) != 3 {
			t.Errorf("the next swap let %v go, want e3, e4 and e5", names(members))
		}
		if after, _ := b.NextSwap("n1", next); after != nil {
			t.Error("a swap after all were taken")
		}
		if _, _, turn := b.QueueSwaps("n1", member("e6")); turn != SwapLead {
			t.Errorf("a member arriving once the swaps onto n1 were done: turn %v, want the lead", turn)
		}
	})
}
