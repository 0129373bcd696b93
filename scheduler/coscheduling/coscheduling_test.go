/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package coscheduling

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/sparkpod"
)

func TestPodGroupName(t *testing.T) {
	long := strings.Repeat("a", 52) + "-" + strings.Repeat("b", 200)
	for _, name := range []string{"spark-pi", long, strings.Repeat("x", 54) + ".y", "a.b.c"} {
		got := PodGroupName(name, "run-1")
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
			t.Errorf("PodGroupName(%q) = %q, not a label value: %v", name, got, errs)
		}
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
			t.Errorf("PodGroupName(%q) = %q, not an object name: %v", name, got, errs)
		}
		if PodGroupName(name, "run-2") == got {
			t.Errorf("two runs of %q share the PodGroup %q", name, got)
		}
	}
}

// demand is a gang of a driver of 1 CPU and 1408Mi and n executors of 2 CPU and 2432Mi.
func demand(n int32) sparkpod.Demand {
	return sparkpod.Demand{
		Driver: sparkpod.PodDemand{Role: sparkpod.RoleDriver, Count: 1, Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1408Mi")}},
		Executor: sparkpod.PodDemand{Role: sparkpod.RoleExecutor, Count: n, Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("2432Mi")}},
	}
}

func workload(name, run string, created time.Time, n int32) scheduler.Workload {
	app := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-" + types.UID(name),
		CreationTimestamp: metav1.NewTime(created)}}
	app.Status.SubmissionID = run
	w := scheduler.ApplicationWorkload(app)
	w.Demand = demand(n)
	return w
}

func TestRunObjects(t *testing.T) {
	s := New(Config{ScheduleTimeout: 90 * time.Second})
	objs, err := s.RunObjects(context.Background(), workload("spark-pi", "run-1", time.Time{}, 4), gang.Reservation{})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 {
		t.Fatalf("%d objects, want the PodGroup", len(objs))
	}
	pg := objs[0]
	got := map[string]any{"gvk": pg.GetObjectKind().GroupVersionKind(), "name": pg.GetName(), "labels": pg.GetLabels(),
		"annotations": pg.GetAnnotations(), "spec": pg.(interface{ UnstructuredContent() map[string]any }).UnstructuredContent()["spec"]}
	want := map[string]any{
		"gvk":         schema.GroupVersionKind{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroup"},
		"name":        PodGroupName("spark-pi", "run-1"),
		"labels":      map[string]string{LabelBatchScheduler: DefaultName},
		"annotations": map[string]string(nil),
		// The whole gang: 1 + 4·2 CPU, 1408Mi + 4·2432Mi; minMember counts the driver only.
		"spec": map[string]any{"minMember": int64(1), "scheduleTimeoutSeconds": int64(90),
			"minResources": map[string]any{"cpu": "9", "memory": "11136Mi"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PodGroup (-want +got):\n%s", diff)
	}
}

func mapper(withCRD bool) meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	if withCRD {
		m.Add(PodGroupCRD.GVK, meta.RESTScopeNamespace)
	}
	return m
}

// TestPods: the pods of an admitted run are in its PodGroup, on this scheduler, and go to the
// nodes the gang scheduler's core planned (the executors not gated).
func TestPods(t *testing.T) {
	r := gang.Reservation{SubmissionID: "run-1", Queue: "default", Driver: "n1", Executors: map[string]int32{"n2": 2}}
	got, err := New(Config{}).Pods(workload("spark-pi", "run-1", time.Time{}, 2), r)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{LabelPodGroup: PodGroupName("spark-pi", "run-1"), gang.LabelQueue: "default"}
	want := sparkpod.RoleScheduling{
		Driver:   sparkpod.Scheduling{SchedulerName: DefaultName, Labels: labels, NodeNames: []string{"n1"}},
		Executor: sparkpod.Scheduling{SchedulerName: DefaultName, Labels: labels, NodeNames: []string{"n2"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
}

func TestMissingCRD(t *testing.T) {
	s := New(Config{Mapper: mapper(false)})
	d, ok, err := s.Check(context.Background(), workload("a", "ra", time.Time{}, 1))
	if err != nil || ok {
		t.Fatalf("Check: ok %v, %v; want a rejection", ok, err)
	}
	const want = "batch scheduler kube-scheduler needs the CRD podgroups.scheduling.x-k8s.io (scheduling.x-k8s.io/v1alpha1, Kind=PodGroup), which is not installed in the cluster: install it from scheduler-plugins'"
	if !d.Reject || !strings.HasPrefix(d.Reason, want) {
		t.Errorf("decision %+v, want a rejection saying %q", d, want)
	}
	errs := s.ValidateApplication(context.Background(), &v1beta2.SparkApplication{Spec: v1beta2.SparkApplicationSpec{BatchScheduler: ptr.To(DefaultName)}})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), want) || errs[0].Field != "spec.batchScheduler" {
		t.Errorf("validation %v, want spec.batchScheduler refused saying %q", errs, want)
	}
	if errs := New(Config{Mapper: mapper(true)}).ValidateApplication(context.Background(), &v1beta2.SparkApplication{}); len(errs) > 0 {
		t.Errorf("refused with the CRD installed: %v", errs)
	}
}

// TestMinResourcesFromTheDemand: the PodGroup of an application with dynamic allocation and
// PySpark asks for the gang sparkpod.DemandOf computes (the one demand function: initial
// executors, memory overhead, pyspark memory), not for the spec's numbers (Kubeflow #2244).
func TestMinResourcesFromTheDemand(t *testing.T) {
	app := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "py"}}
	app.Spec.Type = v1beta2.SparkApplicationTypePython
	app.Spec.MainApplicationFile = "local:///opt/spark/examples/src/main/python/pi.py"
	app.Spec.Driver.Cores, app.Spec.Driver.Memory = ptr.To[int32](1), ptr.To("512m")
	app.Spec.Executor.Cores, app.Spec.Executor.Memory = ptr.To[int32](2), ptr.To("1g")
	app.Spec.Executor.Instances = ptr.To[int32](1)
	app.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, InitialExecutors: ptr.To[int32](3), MinExecutors: ptr.To[int32](2)}
	app.Spec.SparkConf = map[string]string{"spark.executor.pyspark.memory": "512m"}
	d, err := sparkpod.DemandOf(app)
	if err != nil {
		t.Fatal(err)
	}
	w := scheduler.ApplicationWorkload(app)
	w.Demand = d
	objs, err := New(Config{}).RunObjects(context.Background(), w, gang.Reservation{})
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := unstructured.NestedStringMap(objs[0].(*unstructured.Unstructured).Object, "spec", "minResources")
	total := d.Total()
	if got["cpu"] != "7" { // 1 + 3 initial executors of 2
		t.Errorf("minResources cpu = %s, want 7: the driver and the 3 initial executors", got["cpu"])
	}
	if mem := total[corev1.ResourceMemory]; got["memory"] != mem.String() {
		t.Errorf("minResources memory = %s, want the demand's %s", got["memory"], mem.String())
	}
	// The spec alone says 512Mi + 3·1Gi; overheads and pyspark memory come on top.
	if mem, naive := resource.MustParse(got["memory"]), resource.MustParse("3584Mi"); mem.Cmp(naive) <= 0 {
		t.Errorf("minResources memory %s counts no overhead (the spec alone says %s)", got["memory"], naive.String())
	}
}
