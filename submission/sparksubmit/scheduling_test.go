/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparksubmit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/sparkpod"
)

// TestTemplatesApplyScheduling: the pod template files spark-submit gets carry the batch
// scheduler's settings for each role, over the spec's own.
func TestTemplatesApplyScheduling(t *testing.T) {
	app := baseApp()
	app.Spec.Driver.SchedulerName = ptr("from-spec")
	app.Spec.Executor.Tolerations = []corev1.Toleration{{Key: "own", Operator: corev1.TolerationOpExists}}
	role := func(r string) sparkpod.Scheduling {
		return sparkpod.Scheduling{
			SchedulerName: "gang-" + r, Labels: map[string]string{"q": r}, Annotations: map[string]string{"g": r},
			NodeNames:       []string{"node-" + r},
			Tolerations:     []corev1.Toleration{{Key: "reserved-" + r, Operator: corev1.TolerationOpExists}},
			SchedulingGates: []corev1.PodSchedulingGate{{Name: "gate-" + r}},
		}
	}
	sched := sparkpod.RoleScheduling{Driver: role("driver"), Executor: role("executor")}
	plainDriver, plainExecutor, err := PodTemplates(app, sparkpod.RoleScheduling{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	opts, err := writeFiles(dir, app, sched)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		file  string
		plain *corev1.Pod
		s     sparkpod.Scheduling
	}{{opts.DriverPodTemplateFile, plainDriver, sched.Driver}, {opts.ExecutorPodTemplateFile, plainExecutor, sched.Executor}} {
		data, err := os.ReadFile(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		got := &corev1.Pod{}
		if err := yaml.Unmarshal(data, got); err != nil {
			t.Fatal(err)
		}
		want := tt.plain.DeepCopy()
		tt.s.Apply(&want.ObjectMeta, &want.Spec)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", filepath.Base(tt.file), diff)
		}
		if got.Spec.SchedulerName != tt.s.SchedulerName || len(got.Spec.SchedulingGates) != 1 || got.Labels["q"] == "" {
			t.Errorf("%s lacks the scheduler's settings: %+v", filepath.Base(tt.file), got)
		}
	}
}
