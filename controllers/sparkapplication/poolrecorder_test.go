/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/test/cluster"
)

// poolRecorder records, by application, what each of the submission pool's handlings returned
// and how many are under way: a test learns that the pool has handled an application, and
// whether it asked to handle it again (a retry is the pool's answer to an error or a
// submission.RetryAfter), without waiting for time to pass.
type poolRecorder struct {
	mu       sync.Mutex
	running  map[types.NamespacedName]int
	returned map[types.NamespacedName][]error
}

func newPoolRecorder() *poolRecorder {
	return &poolRecorder{running: map[types.NamespacedName]int{}, returned: map[types.NamespacedName][]error{}}
}

// use gives r, before it is set up, the pool SetupWithManager would make (r.Submit as its
// handler, r's number of workers), its handlings recorded.
func (p *poolRecorder) use(r *Reconciler) {
	r.Options.setDefaults()
	r.Pool = submission.NewPool(r.Options.SubmissionWorkers, func(ctx context.Context, key types.NamespacedName) error {
		p.mu.Lock()
		p.running[key]++
		p.mu.Unlock()
		err := r.Submit(ctx, key)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.running[key]--
		p.returned[key] = append(p.returned[key], err)
		return err
	})
}

// waitDone waits until asked holds and then no handling of key is under way, with at least one
// handling decided, and returns what the decided handlings of key returned so far. asked must
// turn true only within a handling (the scheduler was asked): the handling that made it so has
// then returned.
func (p *poolRecorder) waitDone(t *testing.T, key types.NamespacedName, what string, asked func() bool) []error {
	t.Helper()
	var returned []error
	cluster.Eventually(t, 20*time.Second, what+", and the pool done with "+key.Name, func() (bool, error) {
		if !asked() {
			return false, nil
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		returned = decided(p.returned[key])
		return p.running[key] == 0 && len(returned) > 0, nil
	})
	return returned
}

// decided keeps what the handlings that decided returned: nil (done, nothing to retry) or a
// submission.RetryAfter. Any other error is an attempt that failed (an API request, say), which
// the pool retries with back-off whatever the scheduler said.
func decided(returned []error) []error {
	var out []error
	for _, err := range returned {
		var after *submission.RetryAfterError
		if err == nil || errors.As(err, &after) {
			out = append(out, err)
		}
	}
	return out
}

// retriedAfter is nil if every decided handling asked to be offered again after delay (the
// application was held each time), and says what they returned otherwise.
func retriedAfter(returned []error, delay time.Duration) error {
	for _, err := range returned {
		var after *submission.RetryAfterError
		if !errors.As(err, &after) || after.Delay != delay {
			return fmt.Errorf("the pool's handlings returned %v, want each to ask for a retry after %s", returned, delay)
		}
	}
	return nil
}

// reconcileAsStored waits until r's cache has the application as the API server stores it,
// then reconciles it once, beside the manager's own reconciles, and returns the result.
func (e *env) reconcileAsStored(t *testing.T, r *Reconciler, key types.NamespacedName) ctrl.Result {
	t.Helper()
	app := &v1beta2.SparkApplication{}
	app.Namespace, app.Name = key.Namespace, key.Name
	cluster.InCache(t, e.c, r.Client, app)
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
	if err != nil {
		t.Fatalf("reconciling %s: %v", key, err)
	}
	return res
}
