/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package hostile

import (
	"context"
	"math"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestCRDBounds checks, through the API server alone (no webhook), the integer rules the CRD
// states: extremes that mean something are accepted as written, contradictions and negative
// counts are refused with a message naming the field.
func TestCRDBounds(t *testing.T) {
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "crd-bounds")
	for _, tc := range []struct {
		name   string
		change func(*v1beta2.SparkApplicationSpec)
		want   string // empty: accepted
	}{
		{"largest-ttl", func(s *v1beta2.SparkApplicationSpec) { s.TimeToLiveSeconds = ptr.To[int64](math.MaxInt64) }, ""},
		{"largest-retry-interval", func(s *v1beta2.SparkApplicationSpec) {
			s.RestartPolicy = v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyOnFailure,
				OnFailureRetries: ptr.To[int32](math.MaxInt32), OnFailureRetryInterval: ptr.To[int64](math.MaxInt64)}
		}, ""},
		{"largest-instances", func(s *v1beta2.SparkApplicationSpec) { s.Executor.Instances = ptr.To[int32](math.MaxInt32) }, ""},
		{"negative-ttl", func(s *v1beta2.SparkApplicationSpec) { s.TimeToLiveSeconds = ptr.To[int64](-1) }, "spec.timeToLiveSeconds"},
		{"zero-retry-interval", func(s *v1beta2.SparkApplicationSpec) {
			s.RestartPolicy.OnSubmissionFailureRetryInterval = ptr.To[int64](0)
		}, "spec.restartPolicy.onSubmissionFailureRetryInterval"},
		{"min-above-max", func(s *v1beta2.SparkApplicationSpec) {
			s.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, MinExecutors: ptr.To[int32](5), MaxExecutors: ptr.To[int32](2)}
		}, "spec.dynamicAllocation: Invalid value: minExecutors must not be greater than maxExecutors"},
		{"min-equal-max", func(s *v1beta2.SparkApplicationSpec) {
			s.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, MinExecutors: ptr.To[int32](2), MaxExecutors: ptr.To[int32](2)}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := base(ns, tc.name)
			tc.change(&app.Spec)
			err := c.Create(context.Background(), app)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want a refusal naming %q", err, tc.want)
			}
		})
	}
}
