/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestPlaceholderBookConcurrent notes and asks about placeholders from several goroutines at
// once, as the write goroutines and the ungating loop do; under -race it fails when the book
// reads a ledger outside its lock.
func TestPlaceholderBookConcurrent(t *testing.T) {
	var b placeholderBook
	key := types.NamespacedName{Namespace: "ns", Name: "a-ph-driver"}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(2)
		go func() { defer wg.Done(); b.note(bookCreated, key) }()
		go func() { defer wg.Done(); b.has(bookCreated, key) }()
	}
	wg.Wait()
	if !b.has(bookCreated, key) {
		t.Errorf("the book does not have %s after noting it", key)
	}
}

// TestPlaceholderBookClock checks that the book keeps and forgets by the scheduler's clock:
// what it noted stays for bookLag by that clock, whatever the wall clock says, and goes after.
func TestPlaceholderBookClock(t *testing.T) {
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) // far from the wall clock
	clock := clocktesting.NewFakeClock(start)
	s := New(Config{Clock: clock})
	b := &s.placeholders
	key := types.NamespacedName{Namespace: "ns", Name: "a-ph-executors-2-3"}
	b.note(bookSwapped, key)
	b.arrivedAt(key, clock.Now())

	clock.Step(bookLag / 2)
	b.sync(nil)
	if !b.has(bookSwapped, key) {
		t.Errorf("swapped %s forgotten %v after it was noted; want kept for bookLag (%v)", key, bookLag/2, bookLag)
	}
	if got := b.arrivedAt(key, clock.Now()); !got.Equal(start) {
		t.Errorf("arrival of %s after %v is %v; want the first one, %v", key, bookLag/2, got, start)
	}

	clock.Step(bookLag)
	b.sync(nil)
	if b.has(bookSwapped, key) {
		t.Errorf("swapped %s kept %v after it was noted; want forgotten after bookLag (%v)", key, bookLag*3/2, bookLag)
	}
	if got := b.arrivedAt(key, clock.Now()); !got.Equal(clock.Now()) {
		t.Errorf("arrival of %s after %v is %v; want a new one, %v", key, bookLag*3/2, got, clock.Now())
	}
}
