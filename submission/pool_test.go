/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package submission

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func key(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }

// startPool runs p until the test ends.
func startPool(t *testing.T, p *Pool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func TestPoolDeduplicatesWaitingKeys(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	calls := map[string]int{}
	p := NewPool(1, func(ctx context.Context, k types.NamespacedName) error {
		mu.Lock()
		calls[k.Name]++
		mu.Unlock()
		if k.Name == "blocker" {
			<-release
		}
		return nil
	})
	p.Enqueue(key("blocker"))
	startPool(t, p)
	waitFor(t, "blocker to start", func() bool { mu.Lock(); defer mu.Unlock(); return calls["blocker"] == 1 })
	for range 5 {
		p.Enqueue(key("a"))
	}
	if got := p.queue.Len(); got != 1 {
		t.Errorf("queue length %d with one distinct key waiting, want 1", got)
	}
	close(release)
	waitFor(t, "queue to drain", func() bool { mu.Lock(); defer mu.Unlock(); return calls["a"] == 1 && p.queue.Len() == 0 })
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(map[string]int{"blocker": 1, "a": 1}, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestPoolHandlesHigherPriorityFirst(t *testing.T) {
	tests := []struct {
		name    string
		enqueue func(p *Pool)
		want    []string
	}{{
		name: "by priority, first come first served within one",
		enqueue: func(p *Pool) {
			p.EnqueueWith(PriorityRefresh, key("refresh1"), key("refresh2"))
			p.Enqueue(key("normal"))
			p.EnqueueWith(PriorityWoken, key("woken"))
		},
		want: []string{"woken", "normal", "refresh1", "refresh2"},
	}, {
		name: "a key enqueued again keeps its higher priority",
		enqueue: func(p *Pool) {
			p.Enqueue(key("normal"))
			p.EnqueueWith(PriorityWoken, key("raised"))
			p.EnqueueWith(PriorityRefresh, key("raised"))
		},
		want: []string{"raised", "normal"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			started, release := make(chan struct{}), make(chan struct{})
			var mu sync.Mutex
			var order []string
			p := NewPool(1, func(ctx context.Context, k types.NamespacedName) error {
				if k.Name == "blocker" {
					close(started)
					<-release
					return nil
				}
				mu.Lock()
				order = append(order, k.Name)
				mu.Unlock()
				return nil
			})
			p.Enqueue(key("blocker"))
			startPool(t, p)
			<-started // the one worker is busy: what follows waits in the queue
			tt.enqueue(p)
			waitFor(t, "keys to queue", func() bool { return p.queue.Len() == len(tt.want) })
			close(release)
			waitFor(t, "queue to drain", func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == len(tt.want) })
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(tt.want, order); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPoolBoundsConcurrency: the pool handles as many keys at once as it has workers, never
// more. Each handler keeps its worker until the test lets one go: before each release the pool
// is seen with exactly its workers busy and the other keys waiting in its queue, a state that
// holds until the release (a pool with a worker more would take another key; one with a worker
// less would leave one more waiting), and no handler ever found more running beside it.
func TestPoolBoundsConcurrency(t *testing.T) {
	tests := []struct {
		workers, keys, want int
	}{
		{workers: 1, keys: 4, want: 1},
		{workers: 3, keys: 8, want: 3},
		{workers: 0, keys: 2, want: 1}, // at least one worker
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d workers", tt.workers), func(t *testing.T) {
			var running, peak atomic.Int32
			release := make(chan struct{})
			p := NewPool(tt.workers, func(ctx context.Context, k types.NamespacedName) error {
				n := running.Add(1)
				for {
					old := peak.Load()
					if n <= old || peak.CompareAndSwap(old, n) {
						break
					}
				}
				select {
				case <-release:
				case <-ctx.Done(): // the test failed and stops the pool
				}
				running.Add(-1)
				return nil
			})
			startPool(t, p)
			for i := range tt.keys {
				p.Enqueue(key(string(rune('a' + i))))
			}
			for done := 0; done < tt.keys; done++ {
				busy := min(tt.want, tt.keys-done)
				waiting := tt.keys - done - busy
				waitFor(t, fmt.Sprintf("%d keys handled at once and %d waiting", busy, waiting), func() bool {
					return int(running.Load()) == busy && p.queue.Len() == waiting
				})
				release <- struct{}{}
			}
			if got := int(peak.Load()); got != tt.want {
				t.Errorf("peak concurrency %d, want %d", got, tt.want)
			}
		})
	}
}

func TestPoolRetries(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		wantCalls int32
	}{
		{name: "error is retried with back-off", err: errors.New("boom"), wantCalls: 3},
		{name: "RetryAfter is retried after its delay", err: RetryAfter(10*time.Millisecond, "held"), wantCalls: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			p := NewPool(2, func(ctx context.Context, k types.NamespacedName) error {
				if calls.Add(1) < tt.wantCalls {
					return tt.err
				}
				return nil
			})
			startPool(t, p)
			p.Enqueue(key("a"))
			waitFor(t, "success", func() bool { return calls.Load() >= tt.wantCalls })
			// A success ends the retries: the key is forgotten, not queued again.
			waitFor(t, "key forgotten", func() bool {
				return p.queue.NumRequeues(reconcile.Request{NamespacedName: key("a")}) == 0 && p.queue.Len() == 0
			})
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("handler called %d times, want %d", got, tt.wantCalls)
			}
		})
	}
}

func TestPoolSurvivesPanics(t *testing.T) {
	var calls atomic.Int32
	p := NewPool(1, func(ctx context.Context, k types.NamespacedName) error {
		if calls.Add(1) == 1 {
			panic("bad application")
		}
		return nil
	})
	startPool(t, p)
	p.Enqueue(key("a"))
	waitFor(t, "retry after panic", func() bool { return calls.Load() == 2 })
}
