/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package batchschedulers

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/yunikorn"
	"github.com/sparkop/spark-operator/test/cluster"
)

// annotationPlaceholder marks YuniKorn's placeholder pods.
const annotationPlaceholder = "internal.yunikorn.apache.org/placeholder"

// TestYuniKorn runs 20 applications, created at once, through YuniKorn (scheduler-plugin mode)
// on a cluster that fits 4 of them (2 nodes of 4 CPUs; a 1-CPU driver and a 1-CPU executor
// each): all complete, YuniKorn reserves each gang with placeholders, never more than 4 drivers
// run at once, and no executor of a running driver waits for room (no partial start). The pods
// carry the task groups (with each pod's full resources and node selector), their task group,
// the queue label, the gang settings of the operator's flags and the yunikorn scheduler.
func TestYuniKorn(t *testing.T) {
	requireThirdParty(t, "yunikorn-k8shim-v1.8.0.tar.gz", "yunikorn-core-v1.8.0-1.tar.gz", "yunikorn-scheduler-interface-v1.8.0-0.tar.gz")
	kubeconfig, _ := ownCluster(t, "yunikorn", 2, 4)
	c, _ := cluster.Clients(t, kubeconfig)
	ctx := context.Background()
	ns := cluster.Namespace(t, c, "yunikorn")
	f := newFixture(t, c, ns)
	t.Cleanup(f.describeOnFailure)

	cluster.StartOperator(t, "operator", "--kubeconfig", kubeconfig, "--namespaces", ns, "--enable-batch-scheduler",
		"--yunikorn-gang-scheduling-style=Hard", "--yunikorn-placeholder-timeout=3m",
		"--enable-spark-connect=false", "-logtostderr", "-v=1")

	apps := names("pi", 20)
	f.createAtOnce(apps, func(name string) *v1beta2.SparkApplication {
		app := f.app(name, yunikorn.Name, 1, fixtureDriverSeconds)
		app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To("root.spark")}
		// Every kwok node has it; the task groups must carry it to the placeholders.
		app.Spec.NodeSelector = map[string]string{"type": "kwok"}
		return app
	})

	// The placeholders YuniKorn made, by task group: they go once the real pods replace them.
	placeholders := map[string]map[string]bool{}
	recordPlaceholders := func() error {
		pods, err := f.pods()
		if err != nil {
			return err
		}
		for _, p := range pods {
			if p.Annotations[annotationPlaceholder] != "true" {
				continue
			}
			group := p.Annotations[yunikorn.AnnotationTaskGroupName]
			if placeholders[group] == nil {
				placeholders[group] = map[string]bool{}
			}
			placeholders[group][p.Name] = true
		}
		return nil
	}
	f.runToCompletion(4*time.Minute, apps, recordPlaceholders)

	t.Run("no partial starts", func(t *testing.T) {
		f.checkNoPartialStarts(t)
		// Each gang is reserved by placeholders: one per driver and executor. Polling may miss
		// some that lived briefly; most must have been seen.
		for _, group := range []string{yunikorn.TaskGroupDriver, yunikorn.TaskGroupExecutor} {
			if n := len(placeholders[group]); n < len(apps)/2 {
				t.Errorf("%d placeholders of task group %s seen for %d applications", n, group, len(apps))
			}
		}
		t.Logf("peak drivers %d; longest executor wait %s; placeholders seen: %d driver, %d executor", f.peakDrivers,
			f.waited.Round(time.Millisecond), len(placeholders[yunikorn.TaskGroupDriver]), len(placeholders[yunikorn.TaskGroupExecutor]))
	})

	t.Run("pods", func(t *testing.T) {
		pods, err := f.sparkPods()
		if err != nil {
			t.Fatal(err)
		}
		perPod := map[string]string{"cpu": "1", "memory": "896Mi"} // 512m and 384Mi overhead
		wantGroups := []yunikorn.TaskGroup{
			{Name: yunikorn.TaskGroupDriver, MinMember: 1, MinResource: perPod, NodeSelector: map[string]string{"type": "kwok"}},
			{Name: yunikorn.TaskGroupExecutor, MinMember: 1, MinResource: perPod, NodeSelector: map[string]string{"type": "kwok"}},
		}
		for _, name := range apps {
			app := f.get(name)
			roles := map[string]int{}
			for _, p := range pods {
				if p.Labels[v1beta2.LabelAppName] != name || p.Labels[v1beta2.LabelSubmissionID] != app.Status.SubmissionID {
					continue
				}
				role := p.Labels[v1beta2.SparkRoleLabel]
				roles[role]++
				if p.Spec.SchedulerName != yunikorn.SchedulerName {
					t.Errorf("%s pod %s: schedulerName %q, want %q", role, p.Name, p.Spec.SchedulerName, yunikorn.SchedulerName)
				}
				if got := p.Labels[yunikorn.LabelQueue]; got != "root.spark" {
					t.Errorf("%s pod %s: label %s = %q, want root.spark", role, p.Name, yunikorn.LabelQueue, got)
				}
				group := yunikorn.TaskGroupExecutor
				if role == v1beta2.SparkRoleDriver {
					group = yunikorn.TaskGroupDriver
					checkDriverAnnotations(t, &p, wantGroups)
				}
				if got := p.Annotations[yunikorn.AnnotationTaskGroupName]; got != group {
					t.Errorf("%s pod %s: annotation %s = %q, want %q", role, p.Name, yunikorn.AnnotationTaskGroupName, got, group)
				}
			}
			if diff := cmp.Diff(map[string]int{v1beta2.SparkRoleDriver: 1, v1beta2.SparkRoleExecutor: 1}, roles); diff != "" {
				t.Errorf("%s: pods by role (-want +got):\n%s", name, diff)
			}
		}
	})

	t.Run("placeholders are gone", func(t *testing.T) {
		cluster.Eventually(t, 60*time.Second, "YuniKorn to remove the placeholders", func() (bool, error) {
			var list corev1.PodList
			if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
				return false, err
			}
			for _, p := range list.Items {
				if p.Annotations[annotationPlaceholder] == "true" {
					return false, nil
				}
			}
			return true, nil
		})
	})
}

// checkDriverAnnotations checks the task groups and gang settings the driver carries.
func checkDriverAnnotations(t *testing.T, driver *corev1.Pod, want []yunikorn.TaskGroup) {
	t.Helper()
	var got []yunikorn.TaskGroup
	if err := json.Unmarshal([]byte(driver.Annotations[yunikorn.AnnotationTaskGroups]), &got); err != nil {
		t.Errorf("driver %s: annotation %s: %v", driver.Name, yunikorn.AnnotationTaskGroups, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("driver %s: task groups (-want +got):\n%s", driver.Name, diff)
	}
	if got, want := driver.Annotations[yunikorn.AnnotationSchedulingPolicyParams], "placeholderTimeoutInSeconds=180 gangSchedulingStyle=Hard"; got != want {
		t.Errorf("driver %s: annotation %s = %q, want %q", driver.Name, yunikorn.AnnotationSchedulingPolicyParams, got, want)
	}
}
