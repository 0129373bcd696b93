/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package batchschedulers

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/volcano"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/sparkplay"
)

// TestVolcano runs 20 applications, created at once, through Volcano's scheduler on a cluster
// that fits 4 of them (after one held for its queue until the queue exists) (2 nodes of 4 CPUs; a 1-CPU driver and a 1-CPU executor each): all
// complete, never more than 4 drivers run at once, and no executor of a running driver waits
// for room (no partial start). Each run has its PodGroup, owned by its application, with the
// whole gang as minResources and the options' queue and priority class, created before its
// pods, which name it and the volcano scheduler.
func TestVolcano(t *testing.T) {
	requireThirdParty(t, "volcano-v1.15.1.tar.gz")
	kubeconfig, _ := ownCluster(t, "volcano", 2, 4)
	c, _ := cluster.Clients(t, kubeconfig)
	ctx := context.Background()
	ns := cluster.Namespace(t, c, "volcano")
	f := newFixture(t, c, ns, sparkplay.Options{})
	t.Cleanup(f.describeOnFailure)

	priority := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "spark-batch"}, Value: 1000}
	if err := c.Create(ctx, priority); err != nil {
		t.Fatal(err)
	}
	queue := createVolcanoQueue(t, c, "spark", map[string]any{"weight": int64(1), "reclaimable": true})

	cluster.StartOperator(t, "operator", "--kubeconfig", kubeconfig, "--namespaces", ns, "--enable-batch-scheduler",
		"--enable-spark-connect=false", "-logtostderr", "-v=1")

	// An application of a Volcano queue that does not exist yet waits, saying so, with no pod;
	// created, the queue lets it run. It runs before the others: while a second queue has pods,
	// Volcano's proportion plugin binds a queue's pods only up to its share, so a running
	// application's executor could wait (docs/design/batch-schedulers.md).
	early := f.app("early", volcano.Name, 1)
	early.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To("later")}
	if err := c.Create(ctx, early); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 60*time.Second, "early to wait for its queue", func() (bool, error) {
		cond := meta.FindStatusCondition(f.get("early").Status.Conditions, scheduler.ConditionQueued)
		return cond != nil && cond.Status == metav1.ConditionTrue && cond.Message == `Volcano queue "later" does not exist`, nil
	})
	if pods, err := f.pods(); err != nil || len(pods) != 0 {
		t.Fatalf("%d pods (%v) for an application held for its queue", len(pods), err)
	}
	later := queue.DeepCopy()
	later.SetName("later")
	later.SetResourceVersion("")
	if err := c.Create(ctx, later); err != nil {
		t.Fatal(err)
	}
	f.runToCompletion(2*time.Minute, []string{"early"}, nil)

	apps := names("pi", 20)
	f.createAtOnce(apps, func(name string) *v1beta2.SparkApplication {
		app := f.app(name, volcano.Name, 1)
		app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To("spark"), PriorityClassName: ptr.To("spark-batch")}
		return app
	})

	// Every run's PodGroup as it was while the run lasted: Release deletes it when the run ends.
	groups := map[string]*unstructured.Unstructured{}
	recordGroups := func() error {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(volcano.PodGroupKind.GroupVersion().WithKind("PodGroupList"))
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		for i := range list.Items {
			if _, ok := groups[list.Items[i].GetName()]; !ok {
				groups[list.Items[i].GetName()] = &list.Items[i]
			}
		}
		return nil
	}
	f.runToCompletion(8*time.Minute, append([]string{"early"}, apps...), recordGroups)

	t.Run("no partial starts", func(t *testing.T) {
		f.checkNoPartialStarts(t, 4)
		t.Logf("peak drivers %d", f.PeakDrivers())
	})

	t.Run("PodGroups and pods", func(t *testing.T) {
		pods, err := f.sparkPods()
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range apps {
			app := f.get(name)
			pgName := volcano.PodGroupName(scheduler.Workload{Key: scheduler.ApplicationKey(client.ObjectKeyFromObject(app)), Run: app.Status.SubmissionID})
			pg, ok := groups[pgName]
			if !ok {
				t.Errorf("%s: no PodGroup %s was seen", name, pgName)
				continue
			}
			owners := pg.GetOwnerReferences()
			if len(owners) != 1 || owners[0].UID != app.UID || owners[0].Kind != "SparkApplication" {
				t.Errorf("PodGroup %s owners = %+v, want the SparkApplication %s", pgName, owners, app.UID)
			}
			spec, _, _ := unstructured.NestedMap(pg.Object, "spec")
			want := map[string]any{
				"minMember": int64(1),
				// A 1-CPU, 512m driver and executor: 512Mi + 384Mi overhead each.
				"minResources":      map[string]any{"cpu": "2", "memory": "1792Mi"},
				"queue":             "spark",
				"priorityClassName": "spark-batch",
			}
			if diff := cmp.Diff(want, spec); diff != "" {
				t.Errorf("PodGroup %s spec (-want +got):\n%s", pgName, diff)
			}
			roles := map[string]int{}
			for _, p := range pods {
				if p.Labels[v1beta2.LabelAppName] != name || p.Labels[v1beta2.LabelSubmissionID] != app.Status.SubmissionID {
					continue
				}
				role := p.Labels[v1beta2.SparkRoleLabel]
				roles[role]++
				if p.Spec.SchedulerName != volcano.SchedulerName {
					t.Errorf("%s pod %s: schedulerName %q, want %q", role, p.Name, p.Spec.SchedulerName, volcano.SchedulerName)
				}
				if got := p.Annotations[volcano.AnnotationGroupName]; got != pgName {
					t.Errorf("%s pod %s: annotation %s = %q, want %q", role, p.Name, volcano.AnnotationGroupName, got, pgName)
				}
				if p.CreationTimestamp.Before(ptr.To(pg.GetCreationTimestamp())) {
					t.Errorf("%s pod %s was created before its PodGroup", role, p.Name)
				}
			}
			if diff := cmp.Diff(map[string]int{v1beta2.SparkRoleDriver: 1, v1beta2.SparkRoleExecutor: 1}, roles); diff != "" {
				t.Errorf("%s: pods by role (-want +got):\n%s", name, diff)
			}
		}
	})

	t.Run("a finished run's PodGroup is deleted", func(t *testing.T) {
		cluster.Eventually(t, 30*time.Second, "the PodGroups of the finished runs to be deleted", func() (bool, error) {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(volcano.PodGroupKind.GroupVersion().WithKind("PodGroupList"))
			if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
				return false, err
			}
			return len(list.Items) == 0, nil
		})
	})
}

// volcanoRefusedWithoutCRDs: in ns of a cluster without Volcano, whose operator has the batch
// schedulers enabled, an application naming Volcano fails at once with a message saying which
// CRD is missing, and no pod is created.
func volcanoRefusedWithoutCRDs(t *testing.T, c client.Client, ns string) {
	ctx := context.Background()
	app := cluster.SparkPi(ns, "no-volcano")
	app.Spec.BatchScheduler = ptr.To(volcano.Name)
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 60*time.Second, "no-volcano to fail", func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return false, err
		}
		return app.Status.AppState.State == v1beta2.ApplicationStateFailed, nil
	})
	msg := app.Status.AppState.ErrorMessage
	for _, part := range []string{"batch scheduler volcano", "podgroups.scheduling.volcano.sh", "not installed", "install it from Volcano"} {
		if !strings.Contains(msg, part) {
			t.Errorf("error message %q does not say %q", msg, part)
		}
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, pod := range pods.Items {
		if strings.HasPrefix(pod.Name, app.Name+"-") {
			t.Errorf("pod %s was created for a refused application", pod.Name)
		}
	}
	if err := c.Delete(ctx, app); err != nil {
		t.Fatal(err)
	}
}

// cappedVolcanoQueue is a Volcano Queue, capped, whose capability is cappedCPU: Volcano lets in
// a PodGroup only while its minResources fit what is left of it, and binds no pod beyond it.
func cappedVolcanoQueue() *cappedQueue {
	return &cappedQueue{name: "capped", setup: func(t *testing.T, c client.Client) {
		createVolcanoQueue(t, c, "capped", map[string]any{"weight": int64(1), "capability": map[string]any{"cpu": cappedCPU}})
	}}
}

// createVolcanoQueue creates the Volcano Queue name of spec, and waits until it is open.
func createVolcanoQueue(t *testing.T, c client.Client, name string, spec map[string]any) *unstructured.Unstructured {
	t.Helper()
	ctx := context.Background()
	queue := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	queue.SetGroupVersionKind(volcano.QueueKind)
	queue.SetName(name)
	if err := c.Create(ctx, queue); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 60*time.Second, "Volcano queue "+name+" to be open", func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(queue), queue); err != nil {
			return false, err
		}
		state, _, _ := unstructured.NestedString(queue.Object, "status", "state")
		return state == "Open", nil
	})
	return queue
}
