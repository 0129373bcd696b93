/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
)

// TestKubeflowFlags runs the operator with the Kubeflow operator's --label-selector-filter,
// --default-time-to-live-seconds (behind its DefaultTimeToLive feature gate) and
// --zap-encoder=json: an application outside the selector is never submitted (another
// operator's); a finished one that sets no time to live is deleted once the default has
// passed, while one whose spec.timeToLiveSeconds is longer stays; every line the operator
// logged is a JSON object.
func TestKubeflowFlags(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "e2e-kubeflow")
	const ttl = 5 * time.Second
	op := startOperator(t, ns, "--label-selector-filter=team=ours", "--feature-gates=PartialRestart=false,DefaultTimeToLive=true",
		"--default-time-to-live-seconds=5", "--zap-encoder=json")

	app := func(name, team string) *v1beta2.SparkApplication {
		a := cluster.SparkPi(ns, name)
		a.Labels = map[string]string{"team": team}
		a.Spec.Driver.Annotations = map[string]string{executors.AnnotationRunSeconds: "1"}
		return a
	}
	theirs := app("theirs", "other")
	expiring := app("expiring", "ours")
	kept := app("kept", "ours")
	kept.Spec.TimeToLiveSeconds = ptr.To[int64](3600)
	for _, a := range []*v1beta2.SparkApplication{theirs, expiring, kept} {
		if err := c.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
	}

	var keptNow v1beta2.SparkApplication
	cluster.Eventually(t, 3*time.Minute, "kept to complete", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(kept), &keptNow)
		return keptNow.Status.AppState.State == v1beta2.ApplicationStateCompleted, err
	})
	// expiring is created before kept and runs as long: it ends about when kept does, and is
	// deleted the default time to live after. kept outlives that.
	cluster.Eventually(t, 3*time.Minute, "expiring to be deleted and the default time to live past kept's end", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(expiring), &v1beta2.SparkApplication{})
		if err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
		return apierrors.IsNotFound(err) && time.Since(keptNow.Status.TerminationTime.Time) > 2*ttl, nil
	})
	if err := c.Get(ctx, client.ObjectKeyFromObject(kept), &keptNow); err != nil {
		t.Errorf("kept, whose spec.timeToLiveSeconds is 3600, is gone %s after it ended: %v",
			time.Since(keptNow.Status.TerminationTime.Time).Round(time.Second), err)
	}
	// Created first, theirs was there all along: the operator never saw it.
	var th v1beta2.SparkApplication
	if err := c.Get(ctx, client.ObjectKeyFromObject(theirs), &th); err != nil {
		t.Fatalf("theirs, outside --label-selector-filter: %v (deleted by the operator's default time to live?)", err)
	}
	if th.Status.AppState.State != "" || th.Status.SubmissionID != "" {
		t.Errorf("theirs, outside --label-selector-filter, has the status %+v; want none", th.Status.AppState)
	}

	b, err := os.ReadFile(op.Log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, l := range lines {
		var entry map[string]any
		if err := json.Unmarshal([]byte(l), &entry); err != nil || entry["msg"] == nil {
			t.Errorf("a log line that is not a JSON entry with a msg: %q", l)
		}
	}
	if len(lines) < 2 {
		t.Errorf("the operator logged %d lines: %q", len(lines), lines)
	}
}
