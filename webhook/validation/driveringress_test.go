/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package validation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

func TestValidateDriverIngressOptions(t *testing.T) {
	tests := []struct {
		name    string
		options []v1beta2.DriverIngressConfiguration
		want    []string // error messages, each a prefix
	}{{
		name: "ports and URLs apart, one entry without an Ingress",
		options: []v1beta2.DriverIngressConfiguration{
			{ServicePort: 15002, IngressURLFormat: "{{$appName}}.connect.example.com"},
			{ServicePort: 4041, IngressURLFormat: "example.com/{{$appNamespace}}/{{$appName}}"},
			{ServicePort: 7000},
		},
	}, {
		name: "the same port twice",
		options: []v1beta2.DriverIngressConfiguration{
			{ServicePort: 15002}, {ServicePort: 15002},
		},
		want: []string{"spec.driverIngressOptions[1].servicePort: Duplicate value: 15002"},
	}, {
		name: "the same URL twice",
		options: []v1beta2.DriverIngressConfiguration{
			{ServicePort: 1, IngressURLFormat: "{{$appName}}.example.com"},
			{ServicePort: 2, IngressURLFormat: "{{$appName}}.example.com"},
		},
		want: []string{`spec.driverIngressOptions[1].ingressURLFormat: Duplicate value: "{{$appName}}.example.com"`},
	}, {
		name: "a placeholder the operator does not know",
		options: []v1beta2.DriverIngressConfiguration{
			{ServicePort: 1, IngressURLFormat: "{{$appId}}.example.com"},
		},
		want: []string{`spec.driverIngressOptions[0].ingressURLFormat: Invalid value: "{{$appId}}.example.com": invalid Spark UI ingress URL format`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app := validApp()
			app.Spec.DriverIngressOptions = tc.options
			var got []string
			for _, e := range ValidateSparkApplication(app) {
				got = append(got, e.Error())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("errors %q, want %d starting %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("%s", cmp.Diff(tc.want[i], got[i]))
				}
			}
		})
	}
}
