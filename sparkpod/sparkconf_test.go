/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSchedulerNameAndHadoopConfigMapFromProperties(t *testing.T) {
	type got struct {
		Scheduler string
		Named     bool
		Hadoop    string
	}
	tests := []struct {
		name string
		role Role
		conf map[string]string
		want got
	}{
		{"nothing", RoleDriver, nil, got{}},
		{"global key", RoleExecutor, map[string]string{KeySchedulerName: "g"}, got{"g", true, ""}},
		{"role key over global", RoleDriver, map[string]string{KeySchedulerName: "g",
			"spark.kubernetes.driver.scheduler.name": "d", "spark.kubernetes.executor.scheduler.name": "e"}, got{"d", true, ""}},
		{"empty role key still set", RoleExecutor, map[string]string{KeySchedulerName: "g",
			"spark.kubernetes.executor.scheduler.name": ""}, got{"", true, ""}},
		{"driver's Hadoop ConfigMap", RoleDriver, map[string]string{KeyHadoopConfigMap: "h"}, got{Hadoop: "h"}},
		{"executor's Hadoop ConfigMap from the driver", RoleExecutor,
			map[string]string{KeyHadoopConfigMap: "h", KeyExecutorHadoopConfigMap: "hx"}, got{Hadoop: "hx"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, ok := SchedulerName(tt.role, tt.conf)
			if diff := cmp.Diff(tt.want, got{name, ok, HadoopConfigMap(tt.role, tt.conf)}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
