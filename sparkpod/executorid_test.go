/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

import (
	"testing"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

func TestExecutorID(t *testing.T) {
	tests := []struct {
		name   string
		pod    string
		label  string
		want   int
		wantOK bool
	}{
		{"label", "whatever", "7", 7, true},
		{"label wins over the name", "app-exec-3", "12", 12, true},
		{"name suffix without a label", "spark-pi-0a1b-exec-4", "", 4, true},
		{"neither", "spark-pi-driver", "", 0, false},
		{"label not a number, name suffix used", "app-exec-5", "x", 5, true},
		{"zero is no id", "app-exec-0", "", 0, false},
		{"negative label", "app", "-2", -2, false},
		{"label zero, name suffix used", "app-exec-6", "0", 6, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			labels := map[string]string{}
			if tt.label != "" {
				labels[v1beta2.SparkExecutorIDLabel] = tt.label
			}
			id, ok := ExecutorID(tt.pod, labels)
			if ok != tt.wantOK || (ok && id != tt.want) {
				t.Errorf("ExecutorID(%q, %q) = %d, %v; want %d, %v", tt.pod, tt.label, id, ok, tt.want, tt.wantOK)
			}
		})
	}
}
