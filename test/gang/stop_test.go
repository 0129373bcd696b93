/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestStopBeforeTheReservationsSync: an operator told to stop while the gang scheduler's cache
// makes its first list of the Reservations stops, and a read of an application's reservation
// (Admit, as the controller asks it) returns. Here that list waits at the client until the
// manager tells its runnables that need no leader (the cache's group) to stop: the cache then
// stops before its Reservations ever synced, and a read waiting for that sync with no deadline
// waited for ever, holding the scheduler's lock (and so the cycle loop, and the manager's stop).
func TestStopBeforeTheReservationsSync(t *testing.T) {
	othersStopping := make(cluster.StopSignal)
	// The cache's first list: a watch that sends the initial events, or a plain list.
	cfg, held := cluster.HoldFirst(cluster.Config(t), func(req *http.Request) bool {
		return req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/reservations")
	}, othersStopping)
	noGraceTimeout := time.Duration(-1)
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:                  cluster.Scheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		GracefulShutdownTimeout: &noGraceTimeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	s := gang.New(gang.Config{Default: true})
	if err := s.SetupWithManager(mgr, noWaker{}); err != nil {
		t.Fatal(err)
	}
	if err := mgr.Add(othersStopping); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := cluster.StartHeld(t, ctx, cancel, mgr, held, "the gang scheduler's list of the Reservations")

	app := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "stop", UID: "stop-uid"},
		Spec: v1beta2.SparkApplicationSpec{BatchScheduler: ptr.To(gang.Name)}}
	admitted := make(chan error, 1)
	go func() {
		_, err := s.Admit(context.Background(), scheduler.ApplicationWorkload(app))
		admitted <- err
	}()
	cancel()
	cluster.Stopped(t, done, "gang scheduler's manager stopped before its Reservations synced")
	cluster.Stopped(t, admitted, "Admit of an application after the gang scheduler's cache stopped")
}

type noWaker struct{}

func (noWaker) Wake(...scheduler.WorkloadKey)    {}
func (noWaker) Refresh(...scheduler.WorkloadKey) {}
