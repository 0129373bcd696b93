/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package validation

import (
	"context"
	"strings"
	"testing"

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
