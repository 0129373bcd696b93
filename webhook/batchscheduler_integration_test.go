/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package webhook_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/webhook"
	"github.com/sparkop/spark-operator/webhook/validation"
)

// flakyQueues reads Queues for the gang scheduler's validator: the first failures reads fail
// as a busy API server would, then every Queue exists.
type flakyQueues struct {
	client.Reader
	failures int32
	reads    atomic.Int32
}

func (f *flakyQueues) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if f.reads.Add(1) <= f.failures {
		return errors.New("etcdserver: request timed out")
	}
	obj.SetName(key.Name)
	return nil
}

// TestBatchSchedulerRefusals drives the gang scheduler's checks through the API server: an
// application Kueue queues too is refused, saying what to remove; one whose Queue cannot be
// read is refused with a retryable internal error, which the client retries until it is read.
func TestBatchSchedulerRefusals(t *testing.T) {
	reader := &flakyQueues{}
	e := startWebhook(t, func(o *webhook.Options) {
		o.BatchSchedulers = validation.BatchSchedulers{Registry: scheduler.NewRegistry(scheduler.AdmitAll{}, gang.New(gang.Config{Reader: reader}))}
	})
	ctx := context.Background()
	inQueue := func(name string) *v1beta2.SparkApplication {
		app := testApp(e.ns, name)
		app.Spec.BatchScheduler = ptr(gang.Name)
		app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr("team-a")}
		return app
	}

	t.Run("Kueue and gang", func(t *testing.T) {
		app := inQueue("kueued")
		app.Labels = map[string]string{scheduler.LabelKueueQueueName: "lq"}
		err := e.c.Create(ctx, app)
		if err == nil || !strings.Contains(err.Error(), "remove the label kueue.x-k8s.io/queue-name to queue it with gang alone, or remove spec.batchScheduler") {
			t.Fatalf("created, or refused otherwise: %v", err)
		}
		// Either removal is accepted.
		app = inQueue("kueued")
		if err := e.c.Create(ctx, app); err != nil {
			t.Fatalf("without the label: %v", err)
		}
		app = testApp(e.ns, "kueue-alone")
		app.Labels = map[string]string{scheduler.LabelKueueQueueName: "lq"}
		if err := e.c.Create(ctx, app); err != nil {
			t.Fatalf("without spec.batchScheduler: %v", err)
		}
	})

	t.Run("a Queue that cannot be read once", func(t *testing.T) {
		reader.reads.Store(0)
		reader.failures = 1
		if err := e.c.Create(ctx, inQueue("retried")); err != nil {
			t.Fatalf("not created after the client's retry: %v", err)
		}
		if n := reader.reads.Load(); n < 2 {
			t.Errorf("the Queue was read %d times; want a refusal and a retry", n)
		}
	})

	t.Run("a Queue that cannot be read at all", func(t *testing.T) {
		reader.reads.Store(0)
		reader.failures = 1 << 30
		err := e.c.Create(ctx, inQueue("unreadable"))
		if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "could not read Queue team-a") {
			t.Fatalf("got %v, want an internal error saying the Queue could not be read", err)
		}
	})
}
