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
	"sync"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/webhook"
)

// warnings collects the admission warnings the API server passes on to a client.
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

// TestNoEffectFieldsWarn creates, through the API server, an application setting a field the
// operator ignores (webhook/validation.NoEffect): it is accepted, and kubectl-style clients
// are told the field does nothing.
func TestNoEffectFieldsWarn(t *testing.T) {
	e := startWebhook(t, nil)
	w := &warnings{}
	cfg := cluster.Config(t)
	cfg.WarningHandler = w
	c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	app := testApp(e.ns, "ignored-retries")
	app.Spec.FailureRetries = ptr(int32(3))
	if err := c.Create(context.Background(), app); err != nil {
		t.Fatalf("an application setting spec.failureRetries was refused: %v", err)
	}
	plain := testApp(e.ns, "plain")
	if err := c.Create(context.Background(), plain); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.seen) != 1 || !strings.HasPrefix(w.seen[0], ".spec.failureRetries has no effect") {
		t.Errorf("warnings %q: want one, about .spec.failureRetries, for the first application only", w.seen)
	}
}

// TestDuplicateDriverIngressPortRefused: two driverIngressOptions entries for one port would
// write one Service twice; the API server refuses the application, naming the field.
func TestDuplicateDriverIngressPortRefused(t *testing.T) {
	e := startWebhook(t, nil)
	app := testApp(e.ns, "two-ports")
	app.Spec.DriverIngressOptions = []v1beta2.DriverIngressConfiguration{{ServicePort: 15002}, {ServicePort: 15002}}
	err := e.c.Create(context.Background(), app)
	if err == nil || !strings.Contains(err.Error(), "spec.driverIngressOptions[1].servicePort: Duplicate value") {
		t.Fatalf("creating an application with one port twice in driverIngressOptions: %v, want a refusal naming the field", err)
	}
}

// TestUnknownSchedulerNameWarns: an application whose driver names a scheduler the operator
// does not know of is accepted with a warning naming it; one naming the default scheduler or
// one listed in --known-schedulers is not warned of.
func TestUnknownSchedulerNameWarns(t *testing.T) {
	e := startWebhook(t, func(o *webhook.Options) { o.KnownSchedulers = []string{"volcano"} })
	w := &warnings{}
	cfg := cluster.Config(t)
	cfg.WarningHandler = w
	c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	for name, scheduler := range map[string]string{"nowhere": "no-such-scheduler", "default": "default-scheduler", "known": "volcano"} {
		app := testApp(e.ns, name)
		app.Spec.Driver.SchedulerName = ptr(scheduler)
		if err := c.Create(context.Background(), app); err != nil {
			t.Fatalf("an application naming scheduler %q was refused: %v", scheduler, err)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.seen) != 1 || !strings.HasPrefix(w.seen[0], `spec.driver.schedulerName: the operator knows of no scheduler "no-such-scheduler"`) {
		t.Errorf("warnings %q: want one, about no-such-scheduler", w.seen)
	}
}
