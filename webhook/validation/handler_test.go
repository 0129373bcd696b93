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
	"errors"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
)

// namedScheduler is a batch scheduler whose pods go to a Kubernetes scheduler of its own.
type namedScheduler struct{ scheduler.AdmitAll }

func (namedScheduler) Name() string          { return "named" }
func (namedScheduler) SchedulerName() string { return "my-scheduler" }

func raw(t *testing.T, v any) runtime.RawExtension {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: data}
}

func scheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := errors.Join(v1beta2.AddToScheme(s), v1alpha1.AddToScheme(s)); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSparkApplicationValidator(t *testing.T) {
	invalid := validApp()
	invalid.Spec.SparkConf = map[string]string{"spark.master": "local"}
	relabelled := invalid.DeepCopy()
	relabelled.Labels = map[string]string{"team": "data"}
	respecced := invalid.DeepCopy()
	respecced.Spec.Arguments = []string{"10"}

	tests := []struct {
		name    string
		op      admissionv1.Operation
		obj     *v1beta2.SparkApplication
		old     *v1beta2.SparkApplication
		allowed bool
	}{
		{"valid create", admissionv1.Create, validApp(), nil, true},
		{"invalid create", admissionv1.Create, invalid, nil, false},
		// An object stored before a rule existed can still get labels and finalizers.
		{"update leaving the spec alone", admissionv1.Update, relabelled, invalid, true},
		{"update changing the spec", admissionv1.Update, respecced, invalid, false},
	}
	h := admission.WithValidator(scheme(t), &SparkApplicationValidator{})
	t.Run("sparkConf keys the operator sets are warned of", func(t *testing.T) {
		app := validApp()
		app.Spec.SparkConf = map[string]string{"spark.app.name": "mine", "spark.kubernetes.submission.waitAppCompletion": "true", "spark.ui.port": "4041"}
		resp := h.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create, Namespace: "ns", Object: raw(t, app)}})
		want := []string{
			"spec.sparkConf[spark.app.name] is set by the operator; this value is ignored",
			"spec.sparkConf[spark.kubernetes.submission.waitAppCompletion] is set by the operator; this value is ignored",
		}
		if !resp.Allowed {
			t.Fatalf("refused: %v", resp.Result)
		}
		if diff := cmp.Diff(want, resp.Warnings); diff != "" {
			t.Errorf("warnings (-want +got):\n%s", diff)
		}
	})
	t.Run("unknown scheduler names are warned of", func(t *testing.T) {
		h := admission.WithValidator(scheme(t), &SparkApplicationValidator{KnownSchedulers: []string{"volcano"},
			Schedulers: BatchSchedulers{Registry: scheduler.NewRegistry(namedScheduler{})}})
		app := validApp()
		app.Spec.Driver.SchedulerName = ptr("no-such-scheduler")
		app.Spec.Executor.SchedulerName = ptr("my-scheduler") // the batch scheduler's
		resp := h.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create, Namespace: "ns", Object: raw(t, app)}})
		want := []string{`spec.driver.schedulerName: the operator knows of no scheduler "no-such-scheduler" ` +
			`(it knows default-scheduler, my-scheduler, volcano); if none of that name runs, the pod is never scheduled ` +
			`(an operator that knows it runs lists it in --known-schedulers)`}
		if !resp.Allowed {
			t.Fatalf("refused: %v", resp.Result)
		}
		if diff := cmp.Diff(want, resp.Warnings); diff != "" {
			t.Errorf("warnings (-want +got):\n%s", diff)
		}
	})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: tc.op, Namespace: "ns", Object: raw(t, tc.obj)}}
			if tc.old != nil {
				req.OldObject = raw(t, tc.old)
			}
			if resp := h.Handle(context.Background(), req); resp.Allowed != tc.allowed {
				t.Errorf("allowed = %v (%v), want %v", resp.Allowed, resp.Result, tc.allowed)
			}
		})
	}
}
