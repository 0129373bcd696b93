/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package webhook_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestKueueCount creates, through the API server, applications Kueue queues: one with cores
// but no coreRequest, no executor.instances and the default memory overhead is stored with
// coreRequest and executor.instances filled in (what Kueue counts), and the client is told
// that Kueue's count of memory is short of the pods' by the overhead; an update leaves the
// spec as the user wrote it; an application Kueue does not queue is stored as written.
func TestKueueCount(t *testing.T) {
	e := startWebhook(t, nil)
	w := &warnings{}
	cfg := cluster.Config(t)
	cfg.WarningHandler = w
	c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	kueued := func(name string) *v1beta2.SparkApplication {
		app := testApp(e.ns, name)
		app.Labels = map[string]string{scheduler.LabelKueueQueueName: "lq"}
		app.Spec.Driver.Cores, app.Spec.Driver.Memory = ptr(int32(2)), ptr("1g")
		app.Spec.Executor.Cores, app.Spec.Executor.Memory, app.Spec.Executor.Instances = ptr(int32(3)), ptr("2g"), nil
		app.Spec.SparkConf = map[string]string{"spark.executor.instances": "4"}
		return app
	}
	app := kueued("filled")
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	stored := &v1beta2.SparkApplication{}
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(app), stored); err != nil {
		t.Fatal(err)
	}
	got := []string{deref(stored.Spec.Driver.CoreRequest), deref(stored.Spec.Executor.CoreRequest), deref(stored.Spec.Driver.Memory)}
	if stored.Spec.Executor.Instances == nil || *stored.Spec.Executor.Instances != 4 {
		t.Errorf("executor.instances stored as %v, want 4 (spark.executor.instances)", stored.Spec.Executor.Instances)
	}
	if diff := cmp.Diff([]string{"2", "3", "1g"}, got); diff != "" {
		t.Errorf("driver and executor coreRequest, driver memory as stored (-want +got):\n%s", diff)
	}
	w.mu.Lock()
	seen := w.seen
	w.seen = nil
	w.mu.Unlock()
	want := []string{"Kueue counts 1Gi of memory for each driver pod (spec.driver.memory), which requests 1408Mi",
		"Kueue counts 2Gi of memory for each executor pod (spec.executor.memory), which requests 2432Mi"}
	if len(seen) != len(want) {
		t.Fatalf("warnings %q, want %d", seen, len(want))
	}
	for i := range want {
		if !strings.Contains(seen[i], want[i]) {
			t.Errorf("warning %q, want it to say %q", seen[i], want[i])
		}
	}

	t.Run("an update is stored as written", func(t *testing.T) {
		stored.Spec.Executor.CoreRequest = nil
		if err := e.c.Update(ctx, stored); err != nil {
			t.Fatal(err)
		}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(stored), stored); err != nil {
			t.Fatal(err)
		}
		if stored.Spec.Executor.CoreRequest != nil {
			t.Errorf("executor.coreRequest filled in on update: %q", *stored.Spec.Executor.CoreRequest)
		}
	})

	t.Run("an application Kueue does not queue is stored as written", func(t *testing.T) {
		app := kueued("not-kueued")
		app.Labels = nil
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			t.Fatal(err)
		}
		if app.Spec.Driver.CoreRequest != nil || app.Spec.Executor.Instances != nil {
			t.Errorf("filled in: driver.coreRequest %v, executor.instances %v", app.Spec.Driver.CoreRequest, app.Spec.Executor.Instances)
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if len(w.seen) != 0 {
			t.Errorf("warnings %q, want none", w.seen)
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
