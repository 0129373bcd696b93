/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparksubmit

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/sparkpod"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
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

// TestSubmitAppliesScheduling: through spark-submit and the real API server, the driver and an
// executor made from the template Spark mounted (as Spark's executor allocator makes them)
// carry the batch scheduler's settings.
func TestSubmitAppliesScheduling(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real spark-submit")
	}
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "sparksubmit-sched")
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "spark-operator-spark"}}); err != nil {
		t.Fatal(err)
	}
	app := createExample(t, c, ns, "spark-pi.yaml")
	role := func(r string) sparkpod.Scheduling {
		return sparkpod.Scheduling{
			SchedulerName: "gang-" + r, Labels: map[string]string{"queue.example/name": r}, Annotations: map[string]string{"group.example/name": r},
			NodeNames:       []string{"node-" + r},
			Tolerations:     []corev1.Toleration{{Key: "reserved-" + r, Operator: corev1.TolerationOpExists}},
			SchedulingGates: []corev1.PodSchedulingGate{{Name: "example/gate-" + r}},
		}
	}
	sched := sparkpod.RoleScheduling{Driver: role("driver"), Executor: role("executor")}
	s := &Submitter{SparkHome: sparkHome(t), Kubeconfig: cluster.Kubeconfig(t), Client: c, TempDir: t.TempDir()}
	attempt := submission.Attempt{SubmissionID: "11111111-aaaa-4bbb-8ccc-000000000002", DriverPodName: app.DriverPodName(), Scheduling: sched}
	if _, err := s.Submit(ctx, app, attempt); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	driver := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: attempt.DriverPodName}, driver); err != nil {
		t.Fatal(err)
	}
	tmpl, err := executors.TemplateOf(ctx, c, driver)
	if err != nil || tmpl == nil {
		t.Fatalf("executor template = %v, %v", tmpl, err)
	}
	execs, err := executors.Create(ctx, c, driver, 1, executors.Options{Template: tmpl})
	if err != nil {
		t.Fatal(err)
	}
	exec := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(execs[0]), exec); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		pod *corev1.Pod
		s   sparkpod.Scheduling
	}{{driver, sched.Driver}, {exec, sched.Executor}} {
		// Applying settings a pod already carries changes nothing.
		want := tt.pod.DeepCopy()
		tt.s.Apply(&want.ObjectMeta, &want.Spec)
		if diff := cmp.Diff(want, tt.pod); diff != "" || tt.pod.Spec.SchedulerName != tt.s.SchedulerName {
			t.Errorf("pod %s lacks the batch scheduler's settings (-want +got):\n%s", tt.pod.Name, diff)
		}
	}
}
