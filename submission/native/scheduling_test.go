/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package native

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
)

// testScheduling is a batch scheduler's decision that differs per role.
func testScheduling() sparkpod.RoleScheduling {
	role := func(r string) sparkpod.Scheduling {
		return sparkpod.Scheduling{
			SchedulerName:   "gang-" + r,
			Labels:          map[string]string{"queue.example/name": "q-" + r},
			Annotations:     map[string]string{"group.example/name": "g-" + r},
			NodeNames:       []string{"node-" + r},
			Tolerations:     []corev1.Toleration{{Key: "reserved-" + r, Operator: corev1.TolerationOpExists}},
			SchedulingGates: []corev1.PodSchedulingGate{{Name: "example/gate-" + r}},
		}
	}
	return sparkpod.RoleScheduling{Driver: role("driver"), Executor: role("executor")}
}

// checkScheduling fails unless pod carries every setting of s.
func checkScheduling(t *testing.T, what string, pod *corev1.Pod, s sparkpod.Scheduling) {
	t.Helper()
	want := pod.DeepCopy()
	s.Apply(&want.ObjectMeta, &want.Spec)
	if diff := cmp.Diff(want, pod); diff != "" {
		t.Errorf("%s lacks the batch scheduler's settings (-want +got):\n%s", what, diff)
	}
	if pod.Spec.SchedulerName != s.SchedulerName {
		t.Errorf("%s scheduler = %q, want %q", what, pod.Spec.SchedulerName, s.SchedulerName)
	}
}

// TestBuildAppliesScheduling: the batch scheduler's settings are on the driver pod and in the
// executor pod template.
func TestBuildAppliesScheduling(t *testing.T) {
	app := loadExample(t, "spark-pi.yaml")
	sched := testScheduling()
	attempt := submission.Attempt{SubmissionID: "s1", DriverPodName: app.DriverPodName(), Scheduling: sched}
	objs, err := Build(app, attempt, testOpts, testIDs)
	if err != nil {
		t.Fatal(err)
	}
	checkScheduling(t, "driver pod", objs.Pod, sched.Driver)
	if objs.PodTemplate == nil {
		t.Fatal("no executor pod template, though the batch scheduler has executor settings")
	}
	tmpl := &corev1.Pod{}
	if err := yaml.Unmarshal([]byte(objs.PodTemplate.Data[templateKey]), tmpl); err != nil {
		t.Fatal(err)
	}
	checkScheduling(t, "executor template", tmpl, sched.Executor)

}

// TestSubmitAppliesScheduling: through the real API server, the driver and an executor made
// from its template (as Spark makes them) carry the batch scheduler's settings.
func TestSubmitAppliesScheduling(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "native-sched")
	app := loadExample(t, "spark-pi.yaml")
	app.Namespace, app.UID, app.ResourceVersion = ns, "", ""
	app.Spec.Driver.ServiceAccount = nil
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	v1beta2.SetSparkApplicationDefaults(app)
	sched := testScheduling()
	sub := &Submitter{Client: c, Options: Options{Master: "k8s://https://kubernetes.default.svc:443", SparkUser: "spark"}}
	attempt := submission.Attempt{SubmissionID: "sched-1", DriverPodName: app.DriverPodName(), Scheduling: sched}
	if _, err := sub.Submit(ctx, app, attempt); err != nil {
		t.Fatal(err)
	}
	driver := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: attempt.DriverPodName}, driver); err != nil {
		t.Fatal(err)
	}
	checkStored(t, "driver", driver, sched.Driver)

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
	checkStored(t, "executor", exec, sched.Executor)
}

// checkStored compares the scheduling fields of a pod read from the API server, which adds
// default tolerations of its own.
func checkStored(t *testing.T, what string, pod *corev1.Pod, s sparkpod.Scheduling) {
	t.Helper()
	got := sparkpod.Scheduling{SchedulerName: pod.Spec.SchedulerName, SchedulingGates: pod.Spec.SchedulingGates, Labels: map[string]string{}, Annotations: map[string]string{}}
	for k := range s.Labels {
		got.Labels[k] = pod.Labels[k]
	}
	for k := range s.Annotations {
		got.Annotations[k] = pod.Annotations[k]
	}
	for _, tol := range pod.Spec.Tolerations {
		if tol.Key == s.Tolerations[0].Key {
			got.Tolerations = append(got.Tolerations, tol)
		}
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range term.MatchFields {
				if f.Key == metav1.ObjectNameField {
					got.NodeNames = append(got.NodeNames, f.Values...)
				}
			}
		}
	}
	if diff := cmp.Diff(s, got); diff != "" {
		t.Errorf("%s pod as stored (-want +got):\n%s", what, diff)
	}
}
