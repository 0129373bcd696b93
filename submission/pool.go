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
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Pool runs submissions on a controller-runtime controller of their own, named "submission",
// apart from the reconcilers, so that a slow submitter (spark-submit takes seconds) never holds
// up status updates: its own work queue and its own workers. The queue is keyed by application:
// an application enqueued many times before a worker picks it up is handled once, and one
// application is never handled by two workers at the same time. The controller recovers from
// a handler that panics and retries failed keys with back-off; its queue and reconciles show in
// controller-runtime's metrics (workqueue_depth{name="submission"},
// controller_runtime_reconcile_total{controller="submission"}, ...).
//
// Keys are handled by priority, first come first served within one (see Priority).
//
// Nothing in the queue survives a restart; the controller re-enqueues applications that are
// still waiting for their submission when it reconciles them.
type Pool struct {
	controller.TypedController[reconcile.Request]
	// queue exists before the controller starts, so that Enqueue works at any time; the
	// controller takes it as its own when it starts.
	queue priorityqueue.PriorityQueue[reconcile.Request]
	err   error
}

// Priority orders the keys waiting in the pool: higher first. A key enqueued again while it
// waits keeps the higher of its priorities.
type Priority int

const (
	// PriorityRefresh is for an application its batch scheduler still holds, enqueued only so
	// that the reason it shows is brought up to date: it may wait behind every submission.
	PriorityRefresh Priority = -1
	// PriorityNormal is for a submission the controller asks for, and retries.
	PriorityNormal Priority = 0
	// PriorityWoken is for an application its batch scheduler woke to be admitted: capacity
	// is kept for it, idle, until its driver exists.
	PriorityWoken Priority = 1
)

// NewPool returns a pool of workers (at least one) calling handle for each enqueued key. An
// error from handle retries the key with exponential back-off; an error wrapping RetryAfter
// retries it after the given delay instead.
func NewPool(workers int, handle func(ctx context.Context, key types.NamespacedName) error) *Pool {
	return NewPoolWithRateLimiter(workers, handle,
		workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
}

// NewPoolWithRateLimiter is NewPool with the back-off of failed keys chosen by the caller.
func NewPoolWithRateLimiter(workers int, handle func(ctx context.Context, key types.NamespacedName) error,
	limiter workqueue.TypedRateLimiter[reconcile.Request]) *Pool {
	p := &Pool{queue: priorityqueue.New("submission", func(o *priorityqueue.Opts[reconcile.Request]) {
		o.RateLimiter = limiter
		o.Log = log.Log.WithName("submission")
	})}
	p.TypedController, p.err = controller.NewTypedUnmanaged("submission", controller.TypedOptions[reconcile.Request]{
		MaxConcurrentReconciles: max(workers, 1),
		RecoverPanic:            ptr.To(true),
		NeedLeaderElection:      ptr.To(true),
		// Every manager of a process (tests make several) gets a pool of its own.
		SkipNameValidation: ptr.To(true),
		RateLimiter:        limiter,
		NewQueue: func(string, workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
			return p.queue
		},
		Logger: log.Log.WithName("submission"),
		Reconciler: reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			if handle == nil {
				return reconcile.Result{}, errors.New("submission pool has no handler")
			}
			err := handle(ctx, req.NamespacedName)
			if after := (*RetryAfterError)(nil); errors.As(err, &after) {
				return reconcile.Result{RequeueAfter: after.Delay}, nil
			}
			return reconcile.Result{}, err
		}),
	})
	return p
}

// Enqueue asks for key to be handled, with PriorityNormal. It is cheap and never blocks.
func (p *Pool) Enqueue(key types.NamespacedName) {
	p.EnqueueWith(PriorityNormal, key)
}

// EnqueueWith asks for keys to be handled with priority. It is cheap and never blocks.
func (p *Pool) EnqueueWith(priority Priority, keys ...types.NamespacedName) {
	reqs := make([]reconcile.Request, len(keys))
	for i, k := range keys {
		reqs[i] = reconcile.Request{NamespacedName: k}
	}
	p.queue.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(int(priority))}, reqs...)
}

// NeedLeaderElection is true: only the leader may create drivers, or two operators would
// submit the same application.
func (p *Pool) NeedLeaderElection() bool { return true }

// Start runs the workers until ctx is done, then waits for the ones still submitting. It
// implements manager.Runnable.
func (p *Pool) Start(ctx context.Context) error {
	if p.err != nil {
		return p.err
	}
	return p.TypedController.Start(ctx)
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
