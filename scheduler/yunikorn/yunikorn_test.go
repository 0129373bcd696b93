/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package yunikorn

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/sparkpod"
)

func pi(mutate func(*v1beta2.SparkApplication)) *v1beta2.SparkApplication {
	app := &v1beta2.SparkApplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pi", UID: "uid-pi"},
		Spec: v1beta2.SparkApplicationSpec{
			Type: v1beta2.SparkApplicationTypeScala, Mode: v1beta2.DeployModeCluster, SparkVersion: "4.0.4",
			Image: ptr.To("spark:4.0.4"), MainApplicationFile: "local:///app.jar", MainClass: ptr.To("Pi"),
			BatchScheduler: ptr.To(Name),
			Driver:         v1beta2.DriverSpec{SparkPodSpec: v1beta2.SparkPodSpec{Cores: ptr.To[int32](1), Memory: ptr.To("512m")}},
			Executor: v1beta2.ExecutorSpec{SparkPodSpec: v1beta2.SparkPodSpec{Cores: ptr.To[int32](2), Memory: ptr.To("1g")},
				Instances: ptr.To[int32](3)},
		},
		Status: v1beta2.SparkApplicationStatus{SubmissionID: "run-1"},
	}
	if mutate != nil {
		mutate(app)
	}
	return app
}

func admit(t *testing.T, opts Options, app *v1beta2.SparkApplication) scheduler.Decision {
	t.Helper()
	w := scheduler.ApplicationWorkload(app)
	var err error
	if w.Demand, err = sparkpod.DemandOf(app); err != nil {
		t.Fatal(err)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Admit(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Admit {
		t.Fatalf("not admitted: %+v", d)
	}
	return d
}

func taskGroups(t *testing.T, d scheduler.Decision) []TaskGroup {
	t.Helper()
	var groups []TaskGroup
	if err := json.Unmarshal([]byte(d.Pods.Driver.Annotations[AnnotationTaskGroups]), &groups); err != nil {
		t.Fatalf("annotation %s: %v", AnnotationTaskGroups, err)
	}
	return groups
}

func TestTaskGroups(t *testing.T) {
	toleration := []corev1.Toleration{{Key: "spark", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	affinity := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}}
	driver := TaskGroup{Name: TaskGroupDriver, MinMember: 1, MinResource: map[string]string{"cpu": "1", "memory": "896Mi"}}
	tests := []struct {
		name string
		app  *v1beta2.SparkApplication
		want []TaskGroup
	}{
		{name: "each pod's full resources, with the memory overhead", app: pi(nil), want: []TaskGroup{driver,
			{Name: TaskGroupExecutor, MinMember: 3, MinResource: map[string]string{"cpu": "2", "memory": "1408Mi"}}}},
		{name: "pyspark: the non-JVM overhead and the python workers' memory", app: pi(func(a *v1beta2.SparkApplication) {
			a.Spec.Type = v1beta2.SparkApplicationTypePython
			a.Spec.MainClass = nil
			a.Spec.MainApplicationFile = "local:///pi.py"
			a.Spec.SparkConf = map[string]string{"spark.executor.pyspark.memory": "1g"}
		}), want: []TaskGroup{driver, // 1g + 0.4·1g overhead + 1g pyspark
			{Name: TaskGroupExecutor, MinMember: 3, MinResource: map[string]string{"cpu": "2", "memory": "2457Mi"}}}},
		{name: "off-heap memory", app: pi(func(a *v1beta2.SparkApplication) {
			a.Spec.SparkConf = map[string]string{"spark.memory.offHeap.enabled": "true", "spark.memory.offHeap.size": "1g"}
		}), want: []TaskGroup{driver,
			{Name: TaskGroupExecutor, MinMember: 3, MinResource: map[string]string{"cpu": "2", "memory": "2432Mi"}}}},
		{name: "node selector, tolerations and affinity of each role", app: pi(func(a *v1beta2.SparkApplication) {
			a.Spec.NodeSelector = map[string]string{"pool": "spark"}
			a.Spec.Executor.Tolerations = toleration
			a.Spec.Executor.Affinity = affinity
		}), want: []TaskGroup{
			{Name: TaskGroupDriver, MinMember: 1, MinResource: driver.MinResource, NodeSelector: map[string]string{"pool": "spark"}},
			{Name: TaskGroupExecutor, MinMember: 3, MinResource: map[string]string{"cpu": "2", "memory": "1408Mi"},
				NodeSelector: map[string]string{"pool": "spark"}, Tolerations: toleration, Affinity: affinity}}},
		{name: "dynamic allocation: its initial executors", app: pi(func(a *v1beta2.SparkApplication) {
			a.Spec.Executor.Instances = nil
			a.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, InitialExecutors: ptr.To[int32](2), MaxExecutors: ptr.To[int32](10)}
		}), want: []TaskGroup{driver,
			{Name: TaskGroupExecutor, MinMember: 2, MinResource: map[string]string{"cpu": "2", "memory": "1408Mi"}}}},
		{name: "no initial executors: no executor group", app: pi(func(a *v1beta2.SparkApplication) {
			a.Spec.Executor.Instances = nil
			a.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, InitialExecutors: ptr.To[int32](0), MinExecutors: ptr.To[int32](0), MaxExecutors: ptr.To[int32](10)}
		}), want: []TaskGroup{driver}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := admit(t, Options{}, tt.app)
			if diff := cmp.Diff(tt.want, taskGroups(t, d)); diff != "" {
				t.Errorf("task groups (-want +got):\n%s", diff)
			}
			wantExecutor := map[string]string{AnnotationTaskGroupName: TaskGroupExecutor}
			if len(tt.want) == 1 {
				wantExecutor = nil
			}
			if diff := cmp.Diff(wantExecutor, d.Pods.Executor.Annotations); diff != "" {
				t.Errorf("executor annotations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAdmitPodSettings(t *testing.T) {
	tests := []struct {
		name           string
		opts           Options
		queue          *string
		wantLabels     map[string]string
		wantParameters string
	}{
		{name: "YuniKorn's defaults, no queue"},
		{name: "the queue label and the gang settings", queue: ptr.To("root.spark"), wantLabels: map[string]string{LabelQueue: "root.spark"},
			opts: Options{Style: StyleHard, PlaceholderTimeout: 90 * time.Second}, wantParameters: "placeholderTimeoutInSeconds=90 gangSchedulingStyle=Hard"},
		{name: "the style alone", opts: Options{Style: StyleSoft}, wantParameters: "gangSchedulingStyle=Soft"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := admit(t, tt.opts, pi(func(a *v1beta2.SparkApplication) {
				a.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: tt.queue}
			}))
			for role, s := range map[string]sparkpod.Scheduling{"driver": d.Pods.Driver, "executor": d.Pods.Executor} {
				if s.SchedulerName != SchedulerName {
					t.Errorf("%s schedulerName %q", role, s.SchedulerName)
				}
				if diff := cmp.Diff(tt.wantLabels, s.Labels); diff != "" {
					t.Errorf("%s labels (-want +got):\n%s", role, diff)
				}
			}
			if got := d.Pods.Driver.Annotations[AnnotationTaskGroupName]; got != TaskGroupDriver {
				t.Errorf("driver task group %q", got)
			}
			if got := d.Pods.Driver.Annotations[AnnotationSchedulingPolicyParams]; got != tt.wantParameters {
				t.Errorf("schedulingPolicyParameters %q, want %q", got, tt.wantParameters)
			}
			if _, ok := d.Pods.Executor.Annotations[AnnotationTaskGroups]; ok {
				t.Errorf("the executors carry the task groups; only the driver, the originating pod, does")
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, tt := range []struct {
		opts    Options
		wantErr string
	}{
		{opts: Options{}},
		{opts: Options{Style: StyleHard, PlaceholderTimeout: time.Minute}},
		{opts: Options{Style: "hard"}, wantErr: `gang scheduling style "hard": want Hard or Soft`},
		{opts: Options{PlaceholderTimeout: 1500 * time.Millisecond}, wantErr: "whole number of seconds"},
		{opts: Options{PlaceholderTimeout: -time.Second}, wantErr: "whole number of seconds"},
	} {
		_, err := New(tt.opts)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("New(%+v) = %v, want %q", tt.opts, err, tt.wantErr)
		}
	}
}
