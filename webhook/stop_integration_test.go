/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package webhook_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/webhook"
)

// TestStopDuringTheRotatorsFirstRead: a replica told to stop while cert-controller's rotator
// makes its first read of the Secret, through a cache of its own, stops. That read lists the
// namespace's Secrets; here the list waits at the client until the manager tells its runnables
// that need no leader to stop (the rotator's group). The rotator's read then needs its cache to
// outlive it: a cache stopped with it never finished the list, and the rotator, whose read is
// not cancellable, waited forever (a whole CI run, 2026-12-07, in TestWebhooks' restart).
func TestStopDuringTheRotatorsFirstRead(t *testing.T) {
	c := cluster.Client(t)
	opts, ns, _ := testOptions(t, c, nil)
	othersStopping := make(cluster.StopSignal)
	// The list of the namespace's Secrets, not a read of one (the rotator's cache has no field
	// selector; the serving certificate's has one).
	cfg, held := cluster.HoldFirst(cluster.Config(t), func(req *http.Request) bool {
		return req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/namespaces/"+ns+"/secrets") &&
			!strings.Contains(req.URL.RawQuery, "fieldSelector")
	}, othersStopping)
	mgr := newManager(t, cfg, opts)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := webhook.Setup(ctx, mgr, opts); err != nil {
		t.Fatal(err)
	}
	if err := mgr.Add(othersStopping); err != nil {
		t.Fatal(err)
	}
	done := cluster.StartHeld(t, ctx, cancel, mgr, held, "the rotator's list of the Secrets")
	cancel()
	cluster.Stopped(t, done, "webhook manager stopped during the rotator's first read")
}
