/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/sparkop/spark-operator/internal/eventnote"
)

// TestManagerRecordersCut: every recorder of the operator's manager cuts long messages, so no
// controller can emit an event the API server refuses.
func TestManagerRecordersCut(t *testing.T) {
	mgr, err := newManager(&rest.Config{Host: "https://127.0.0.1:1"}, manager.Options{
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := mgr.GetEventRecorder("spark-application-controller").(*eventnote.Recorder); !ok {
		t.Errorf("GetEventRecorder returned %T, want an *eventnote.Recorder", mgr.GetEventRecorder("x"))
	}
}
