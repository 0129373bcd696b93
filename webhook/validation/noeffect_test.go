/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package validation

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// noEffectSamples sets each field of NoEffect, as a user's manifest would.
var noEffectSamples = map[string]string{
	".spec.failureRetries":                  `{"failureRetries": 3}`,
	".spec.retryInterval":                   `{"retryInterval": 10}`,
	".spec.batchSchedulerOptions.resources": `{"batchSchedulerOptions": {"resources": {"cpu": "4"}}}`,
}

func TestNoEffectWarnings(t *testing.T) {
	for _, f := range NoEffect {
		t.Run(f.Path, func(t *testing.T) {
			sample, ok := noEffectSamples[f.Path]
			if !ok {
				t.Fatalf("no sample setting %s in noEffectSamples", f.Path)
			}
			app := validApp()
			if err := json.Unmarshal([]byte(sample), &app.Spec); err != nil {
				t.Fatal(err)
			}
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Operation: admissionv1.Create, Namespace: "ns", Object: raw(t, app)}}
			resp := admission.WithValidator(scheme(t), &SparkApplicationValidator{}).Handle(context.Background(), req)
			if !resp.Allowed || len(resp.Warnings) != 1 || !strings.HasPrefix(resp.Warnings[0], f.Path+" has no effect") {
				t.Errorf("allowed %v, warnings %q: want one warning about %s", resp.Allowed, resp.Warnings, f.Path)
			}

			ssa := &v1beta2.ScheduledSparkApplication{Spec: v1beta2.ScheduledSparkApplicationSpec{Schedule: "@hourly", Template: app.Spec}}
			ssa.Name = "nightly"
			req.Object = raw(t, ssa)
			resp = admission.WithValidator(scheme(t), ScheduledSparkApplicationValidator{}).Handle(context.Background(), req)
			want := ".spec.template" + strings.TrimPrefix(f.Path, ".spec") + " has no effect"
			if !resp.Allowed || len(resp.Warnings) != 1 || !strings.HasPrefix(resp.Warnings[0], want) {
				t.Errorf("scheduled: allowed %v, warnings %q: want one starting %q", resp.Allowed, resp.Warnings, want)
			}
		})
	}
	t.Run("nothing set", func(t *testing.T) {
		if d := cmp.Diff([]string(nil), NoEffectWarnings(".spec", &validApp().Spec)); d != "" {
			t.Errorf("warnings for an application setting none of the fields (-want +got):\n%s", d)
		}
	})
}
