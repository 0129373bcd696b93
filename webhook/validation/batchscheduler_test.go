/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package validation

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
)

// queueChecker is a scheduler that refuses one queue, as the gang scheduler refuses unknown ones.
type queueChecker struct{ scheduler.AdmitAll }

func (queueChecker) Name() string { return "checker" }

func (queueChecker) ValidateApplication(_ context.Context, app *v1beta2.SparkApplication) field.ErrorList {
	if o := app.Spec.BatchSchedulerOptions; o != nil && o.Queue != nil && *o.Queue == "missing" {
		return field.ErrorList{field.NotFound(field.NewPath("spec", "batchSchedulerOptions", "queue"), "missing")}
	}
	return nil
}

func TestBatchSchedulers(t *testing.T) {
	reg := scheduler.NewRegistry(scheduler.AdmitAll{}, queueChecker{})
	tests := []struct {
		name, scheduler, defaultName, queue string
		registry                            *scheduler.Registry
		want                                string // "" = allowed; else a part of the message
	}{
		{name: "names none, no default", registry: reg},
		{name: "names an enabled one", registry: reg, scheduler: "checker"},
		{name: "names one not enabled: refused, naming the enabled ones", registry: reg, scheduler: "volcano",
			want: "enabled: checker, default"},
		{name: "the default is asked when the application names none", registry: reg, defaultName: "checker", queue: "missing",
			want: "spec.batchSchedulerOptions.queue"},
		{name: "the scheduler refuses its options", registry: reg, scheduler: "checker", queue: "missing",
			want: "spec.batchSchedulerOptions.queue"},
		{name: "no registry: not checked", scheduler: "volcano"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := &v1beta2.SparkApplication{}
			if tt.scheduler != "" {
				app.Spec.BatchScheduler = ptr(tt.scheduler)
			}
			if tt.queue != "" {
				app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr(tt.queue)}
			}
			errs := BatchSchedulers{Registry: tt.registry, Default: tt.defaultName}.validate(context.Background(), app)
			got := errs.ToAggregate()
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("refused: %v", got)
			case tt.want != "" && (got == nil || !strings.Contains(got.Error(), tt.want)):
				t.Errorf("got %v, want an error containing %q", got, tt.want)
			}
		})
	}
}

// queueingScheduler keeps workloads in queues of its own, as the gang scheduler does.
type queueingScheduler struct{ scheduler.AdmitAll }

func (queueingScheduler) Name() string          { return "queues" }
func (queueingScheduler) QueuesWorkloads() bool { return true }

// kueueStandIn stands for the gang core's scheduler of Kueue's applications (scheduler.KueueName),
// which does not queue.
type kueueStandIn struct{ scheduler.AdmitAll }

func (kueueStandIn) Name() string { return scheduler.KueueName }

// TestKueueDoubleQueueing: an application Kueue queues (its queue-name label) is refused when
// its batch scheduler queues too, whether named or the operator's default, with a message
// saying what to remove; schedulers that do not queue are left alone.
func TestKueueDoubleQueueing(t *testing.T) {
	reg := scheduler.NewRegistry(scheduler.AdmitAll{}, queueChecker{}, queueingScheduler{})
	tests := []struct {
		name, scheduler, defaultName string
		kueue, kueueServed           bool
		want                         string // "" = allowed; else the message
	}{
		{name: "Kueue and a scheduler that queues", scheduler: "queues", kueue: true,
			want: `metadata.labels[kueue.x-k8s.io/queue-name]: Forbidden: Kueue queues this application (LocalQueue "lq") and its batch scheduler queues queues it too, so it would wait in two queues: remove the label kueue.x-k8s.io/queue-name to queue it with queues alone, or remove spec.batchScheduler to let Kueue alone queue it`},
		{name: "Kueue and a default scheduler that queues", defaultName: "queues", kueue: true,
			want: `metadata.labels[kueue.x-k8s.io/queue-name]: Forbidden: Kueue queues this application (LocalQueue "lq") and the operator's default batch scheduler queues queues it too, so it would wait in two queues: remove the label kueue.x-k8s.io/queue-name to queue it with queues alone, or set spec.batchScheduler to "default" to let Kueue alone queue it`},
		{name: "named, while the default queues too", scheduler: "queues", defaultName: "queues", kueue: true,
			want: `metadata.labels[kueue.x-k8s.io/queue-name]: Forbidden: Kueue queues this application (LocalQueue "lq") and its batch scheduler queues queues it too, so it would wait in two queues: remove the label kueue.x-k8s.io/queue-name to queue it with queues alone, or set spec.batchScheduler to "default" to let Kueue alone queue it`},
		{name: "Kueue alone", kueue: true},
		{name: "Kueue and a scheduler that does not queue", scheduler: "checker", kueue: true},
		{name: "Kueue, naming default while the default queues", scheduler: "default", defaultName: "queues", kueue: true},
		{name: "a scheduler that queues, without Kueue", scheduler: "queues"},
		// With the gang core's Kueue scheduler served, Kueue's applications that name none go
		// to it (it does not queue): only naming a queueing scheduler is refused.
		{name: "Kueue served: a default scheduler that queues", defaultName: "queues", kueue: true, kueueServed: true},
		{name: "Kueue served: naming default", scheduler: "default", kueue: true, kueueServed: true},
		{name: "Kueue served: naming a scheduler that queues", scheduler: "queues", defaultName: "queues", kueue: true, kueueServed: true,
			want: `metadata.labels[kueue.x-k8s.io/queue-name]: Forbidden: Kueue queues this application (LocalQueue "lq") and its batch scheduler queues queues it too, so it would wait in two queues: remove the label kueue.x-k8s.io/queue-name to queue it with queues alone, or set spec.batchScheduler to "default" to let Kueue alone queue it`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := &v1beta2.SparkApplication{}
			if tt.scheduler != "" {
				app.Spec.BatchScheduler = ptr(tt.scheduler)
			}
			if tt.kueue {
				app.Labels = map[string]string{scheduler.LabelKueueQueueName: "lq"}
			}
			reg := reg
			if tt.kueueServed {
				reg = scheduler.NewRegistry(scheduler.AdmitAll{}, queueChecker{}, queueingScheduler{}, kueueStandIn{})
			}
			got := ""
			if err := (BatchSchedulers{Registry: reg, Default: tt.defaultName}.validate(context.Background(), app)).ToAggregate(); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestInternalErrorsAreRetryable: a refusal for an internal error (a scheduler that could not
// read a Queue) is an HTTP 500 with Retry-After, which clients retry; any other is a verdict.
func TestInternalErrorsAreRetryable(t *testing.T) {
	p := field.NewPath("spec", "batchSchedulerOptions", "queue")
	type got struct {
		Internal   bool
		Code       int32
		RetryAfter int32
		Message    string
	}
	tests := []struct {
		name string
		errs field.ErrorList
		want got
	}{
		{name: "not found: a verdict", errs: field.ErrorList{field.NotFound(p, "q")},
			want: got{Message: `spec.batchSchedulerOptions.queue: Not found: "q"`}},
		{name: "internal: retryable", errs: field.ErrorList{field.InternalError(p, errors.New("could not read Queue q: busy"))},
			want: got{Internal: true, Code: 500, RetryAfter: 1,
				Message: "Internal error occurred: spec.batchSchedulerOptions.queue: Internal error: could not read Queue q: busy; try again"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := refusal(tt.errs)
			g := got{Internal: apierrors.IsInternalError(err), Message: err.Error()}
			var status apierrors.APIStatus
			if errors.As(err, &status) {
				g.Code = status.Status().Code
				if d := status.Status().Details; d != nil {
					g.RetryAfter = d.RetryAfterSeconds
				}
			}
			if diff := cmp.Diff(tt.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
