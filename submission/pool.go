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
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Pool runs submissions on a fixed number of workers, apart from the reconcilers, so that a slow
// submitter (spark-submit takes seconds) never holds up status updates. Its queue is keyed by
// application: an application enqueued many times before a worker picks it up is handled once,
// and one application is never handled by two workers at the same time.
//
// Nothing in the queue survives a restart; the controller re-enqueues applications that are
// still waiting for their submission when it reconciles them.
type Pool struct {
	workers int
	handle  func(ctx context.Context, key types.NamespacedName) error
	queue   workqueue.TypedRateLimitingInterface[types.NamespacedName]
}

// NewPool returns a pool of workers (at least one) calling handle for each enqueued key. An
// error from handle retries the key with exponential back-off; an error wrapping RetryAfter
// retries it after the given delay instead.
func NewPool(workers int, handle func(ctx context.Context, key types.NamespacedName) error) *Pool {
	return NewPoolWithRateLimiter(workers, handle,
		workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]())
}

// NewPoolWithRateLimiter is NewPool with the back-off of failed keys chosen by the caller.
func NewPoolWithRateLimiter(workers int, handle func(ctx context.Context, key types.NamespacedName) error,
	limiter workqueue.TypedRateLimiter[types.NamespacedName]) *Pool {
	if workers < 1 {
		workers = 1
	}
	return &Pool{
		workers: workers,
		handle:  handle,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "submission"}),
	}
}

// Enqueue asks for key to be handled. It is cheap and never blocks.
func (p *Pool) Enqueue(key types.NamespacedName) {
	p.queue.Add(key)
}

// Len is the number of keys waiting for a worker, for metrics.
func (p *Pool) Len() int {
	return p.queue.Len()
}

// NeedLeaderElection is true: only the leader may create drivers, or two operators would
// submit the same application.
func (p *Pool) NeedLeaderElection() bool { return true }

// Start runs the workers until ctx is done, then waits for the ones still submitting. It
// implements manager.Runnable.
func (p *Pool) Start(ctx context.Context) error {
	if p.handle == nil {
		return errors.New("submission pool has no handler")
	}
	var wg sync.WaitGroup
	for range p.workers {
		wg.Go(func() {
			for p.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	p.queue.ShutDown()
	wg.Wait()
	return nil
}

func (p *Pool) next(ctx context.Context) bool {
	key, shutdown := p.queue.Get()
	if shutdown {
		return false
	}
	defer p.queue.Done(key)

	err := p.run(ctx, key)
	var after *RetryAfterError
	switch {
	case err == nil:
		p.queue.Forget(key)
	case errors.As(err, &after):
		p.queue.Forget(key)
		p.queue.AddAfter(key, after.Delay)
	default:
		log.FromContext(ctx).Error(err, "submission failed, will retry", "sparkapplication", key)
		p.queue.AddRateLimited(key)
	}
	return true
}

// run isolates the worker from a handler that panics, so one bad application cannot take the
// pool down with it.
func (p *Pool) run(ctx context.Context, key types.NamespacedName) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("submission handler panicked: %v", r)
		}
	}()
	return p.handle(ctx, key)
}

// RetryAfterError asks the pool to handle the key again after Delay, without counting it as a
// failure (a batch scheduler holding the application back).
type RetryAfterError struct {
	Delay  time.Duration
	Reason string
}

func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("retry after %s: %s", e.Delay, e.Reason)
}

// RetryAfter returns an error that makes the pool retry the key after delay.
func RetryAfter(delay time.Duration, reason string) error {
	return &RetryAfterError{Delay: delay, Reason: reason}
}
