/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// A held application reads QUEUED, with why it waits, in list and status; its stored state
// stays NEW for Kubeflow tools.
func TestQueuedApplication(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	app := v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns"},
		Status: v1beta2.SparkApplicationStatus{AppState: v1beta2.ApplicationState{State: v1beta2.ApplicationStateNew},
			Conditions: []metav1.Condition{{Type: "Queued", Status: metav1.ConditionTrue, Reason: "HeldByBatchScheduler",
				Message: "no node fits: needs 17 cpu"}}}}
	var list, status bytes.Buffer
	if err := printAppTable(&list, []v1beta2.SparkApplication{app}, false, false, now); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(list.String(), "QUEUED") {
		t.Errorf("list does not say QUEUED:\n%s", list.String())
	}
	if err := printStatus(&status, &app, nil, now); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"QUEUED", "no node fits: needs 17 cpu"} {
		if !strings.Contains(status.String(), want) {
			t.Errorf("status does not say %q:\n%s", want, status.String())
		}
	}
	app.Status.AppState.State = v1beta2.ApplicationStateRunning
	if got := displayState(&app); got != "RUNNING" {
		t.Errorf("a running application reads %s", got)
	}
	// What the operator summarises is what sparkctl shows: a driver waiting for its node.
	app.Status.AppState.State = v1beta2.ApplicationStateSubmitted
	app.Status.Conditions = nil
	app.Status.Summary = v1beta2.StatusSummary{State: "SUBMITTED", Waiting: "0/3 nodes are available"}
	status.Reset()
	if err := printStatus(&status, &app, nil, now); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(status.String(), "0/3 nodes are available") || displayState(&app) != "SUBMITTED" {
		t.Errorf("status of a driver waiting for a node:\n%s", status.String())
	}
}
