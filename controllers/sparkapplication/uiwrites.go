/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/controllers/uiresources"
)

// uiWrites writes applications' UI Services and Ingresses beside the reconciles instead of
// in them. Creating a Service with a cluster IP takes 1.7 s on average on a busy API server (it
// allocates the IP), several times a status write: done in the reconcile, it kept the
// controller's workers busy half of the time in the 1,000-application benchmark, and every
// state change waited behind it. A reconcile starts the write and goes on; the Service's watch
// event brings the application back once it is in the cache, with the UI's address.
//
// It keeps the order of writes for one application that the reconciles, one at a time, gave:
// at most one write per application is in flight, and the reconcile that deletes the UI
// resources waits for it first.
type uiWrites struct {
	mu       sync.Mutex
	inFlight map[types.UID]chan struct{} // closed when the write ends
	slots    chan struct{}               // bounds the writes at once
}

// uiWriteTimeout bounds one write, which no reconcile waits for otherwise.
const uiWriteTimeout = time.Minute

func newUIWrites(concurrency int) *uiWrites {
	return &uiWrites{inFlight: map[types.UID]chan struct{}{}, slots: make(chan struct{}, concurrency)}
}

// start begins write for app unless one is in flight for it (the reconcile after it ends finds
// what is still to do). write gets its own copy of app.
func (u *uiWrites) start(ctx context.Context, app *v1beta2.SparkApplication, write func(context.Context, *v1beta2.SparkApplication) error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, busy := u.inFlight[app.UID]; busy {
		return
	}
	done := make(chan struct{})
	u.inFlight[app.UID] = done
	app = app.DeepCopy()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), uiWriteTimeout)
	go func() {
		defer cancel()
		defer func() {
			u.mu.Lock()
			delete(u.inFlight, app.UID)
			u.mu.Unlock()
			close(done)
		}()
		u.slots <- struct{}{}
		defer func() { <-u.slots }()
		if err := write(ctx, app); err != nil {
			log.FromContext(ctx).Error(err, "could not create the Spark UI resources")
		}
	}()
}

// wait returns once no write is in flight for the application uid, or ctx is done.
func (u *uiWrites) wait(ctx context.Context, uid types.UID) error {
	u.mu.Lock()
	done, busy := u.inFlight[uid]
	u.mu.Unlock()
	if !busy {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ensureUI keeps the UI Service (and Ingress), and those of spec.driverIngressOptions, of a
// live run in place and records where the UI is once they are. What is to be written is
// written beside the reconcile (uiWrites); until it shows in the cache the status keeps what it
// said. A failure is logged, not fatal: the run goes on without them.
func (s *step) ensureUI(ctx context.Context) {
	info, current, err := uiresources.Observe(ctx, s.r.Client, s.app, s.r.UI)
	if err != nil {
		log.FromContext(ctx).Error(err, "could not create the Spark UI resources")
		return
	}
	if !current {
		s.r.uiWrites.start(ctx, s.app, func(ctx context.Context, app *v1beta2.SparkApplication) error {
			_, err := uiresources.Ensure(ctx, s.r.UIClient, app, s.r.UI)
			return err
		})
		return
	}
	di := &s.app.Status.DriverInfo
	di.WebUIServiceName = info.ServiceName
	di.WebUIPort = info.Port
	di.WebUIAddress = info.Address
	di.WebUIIngressName = info.IngressName
	di.WebUIIngressAddress = info.IngressAddress
}
