/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package volcano

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/sparkpod"
)

// newClient is a fake client whose RESTMapper serves Volcano's PodGroup only if installed.
func newClient(installed bool, objs ...client.Object) client.Client {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1beta2.AddToScheme(scheme)
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{v1beta2.GroupVersion})
	mapper.Add(v1beta2.GroupVersion.WithKind("SparkApplication"), meta.RESTScopeNamespace)
	if installed {
		mapper.Add(PodGroupKind, meta.RESTScopeNamespace)
		mapper.Add(QueueKind, meta.RESTScopeRoot)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithObjects(objs...).Build()
}

func newScheduler(c client.Client) *Scheduler { return New(c, c) }

// queue is the Volcano Queue name.
func queue(name string) client.Object {
	q := &unstructured.Unstructured{}
	q.SetGroupVersionKind(QueueKind)
	q.SetName(name)
	return q
}

func pi(mutate func(*v1beta2.SparkApplication)) *v1beta2.SparkApplication {
	app := &v1beta2.SparkApplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pi", UID: "uid-pi"},
		Spec: v1beta2.SparkApplicationSpec{
			Type: v1beta2.SparkApplicationTypeScala, Mode: v1beta2.DeployModeCluster, SparkVersion: "4.0.4",
			Image: ptr.To("spark:4.0.4"), MainApplicationFile: "local:///app.jar", MainClass: ptr.To("Pi"),
			BatchScheduler: ptr.To(Name),
			Driver:         v1beta2.DriverSpec{SparkPodSpec: v1beta2.SparkPodSpec{Cores: ptr.To[int32](1), Memory: ptr.To("512m")}},
			Executor: v1beta2.ExecutorSpec{SparkPodSpec: v1beta2.SparkPodSpec{Cores: ptr.To[int32](1), Memory: ptr.To("512m")},
				Instances: ptr.To[int32](2)},
		},
		Status: v1beta2.SparkApplicationStatus{SubmissionID: "run-1"},
	}
	if mutate != nil {
		mutate(app)
	}
	return app
}

func workload(t *testing.T, app *v1beta2.SparkApplication) scheduler.Workload {
	t.Helper()
	w := scheduler.ApplicationWorkload(app)
	var err error
	if w.Demand, err = sparkpod.DemandOf(app); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestCheck: Volcano's own verdict, before the gang scheduler's core decides (ok).
func TestCheck(t *testing.T) {
	tests := []struct {
		name      string
		installed bool
		run       string
		queue     string
		want      scheduler.Decision
		ok        bool
		wantErr   string
	}{
		{name: "installed, a run: the core decides", installed: true, run: "run-1", ok: true},
		{name: "without Volcano's CRDs the run is rejected, saying so", run: "run-1",
			want: scheduler.Decision{Reject: true, Reason: "batch scheduler volcano needs the CRD podgroups.scheduling.volcano.sh " +
				"(scheduling.volcano.sh/v1beta1, Kind=PodGroup), which is not installed in the cluster: install it from Volcano"}},
		{name: "a workload without a run is an error", installed: true, wantErr: "no run"},
		{name: "a queue that exists", installed: true, run: "run-1", queue: "q", ok: true},
		{name: "a queue that does not exist holds the run, saying so", installed: true, run: "run-1", queue: "nope",
			want: scheduler.Decision{Reason: `Volcano queue "nope" does not exist`, RetryAfter: queueRetry}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := pi(func(a *v1beta2.SparkApplication) {
				a.Status.SubmissionID = tt.run
				if tt.queue != "" {
					a.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To(tt.queue)}
				}
			})
			got, ok, err := newScheduler(newClient(tt.installed, queue("q"))).Check(context.Background(), workload(t, app))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ok != tt.ok {
				t.Errorf("ok = %v, want %v", ok, tt.ok)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPods: the pods of an admitted run name its PodGroup and the volcano scheduler, and go to
// the nodes the core planned (the driver to its own, the executors, not gated, to theirs).
func TestPods(t *testing.T) {
	r := gang.Reservation{SubmissionID: "run-1", Queue: "default", Driver: "n1", Executors: map[string]int32{"n1": 1, "n2": 1}}
	got, err := newScheduler(newClient(true)).Pods(workload(t, pi(nil)), r)
	if err != nil {
		t.Fatal(err)
	}
	annotations := map[string]string{AnnotationGroupName: "pi-pg-run-1"}
	labels := map[string]string{gang.LabelQueue: "default"}
	want := sparkpod.RoleScheduling{
		Driver:   sparkpod.Scheduling{SchedulerName: "volcano", Labels: labels, Annotations: annotations, NodeNames: []string{"n1"}},
		Executor: sparkpod.Scheduling{SchedulerName: "volcano", Labels: labels, Annotations: annotations, NodeNames: []string{"n1", "n2"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
}

// objectsOf lets EnsureRunObjects create the PodGroup as the gang scheduler's variant does.
type objectsOf struct{ *Scheduler }

func (objectsOf) Admit(context.Context, scheduler.Workload) (scheduler.Decision, error) {
	return scheduler.Decision{Admit: true}, nil
}

func (o objectsOf) RunObjects(ctx context.Context, w scheduler.Workload, _ scheduler.Decision) ([]client.Object, error) {
	return o.Scheduler.RunObjects(ctx, w, gang.Reservation{})
}

func TestRunObjects(t *testing.T) {
	tests := []struct {
		name string
		app  *v1beta2.SparkApplication
		want map[string]any
	}{
		{name: "the whole gang with memory overheads; minMember 1", app: pi(nil),
			// 3 pods of 1 CPU and 512Mi + 384Mi overhead.
			want: map[string]any{"minMember": int64(1), "minResources": map[string]any{"cpu": "3", "memory": "2688Mi"}}},
		{name: "the options' queue and priority class", app: pi(func(a *v1beta2.SparkApplication) {
			a.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To("q"), PriorityClassName: ptr.To("high")}
		}), want: map[string]any{"minMember": int64(1), "minResources": map[string]any{"cpu": "3", "memory": "2688Mi"},
			"queue": "q", "priorityClassName": "high"}},
		{name: "dynamic allocation starts with its initial executors", app: pi(func(a *v1beta2.SparkApplication) {
			a.Spec.Executor.Instances = nil
			a.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, InitialExecutors: ptr.To[int32](4), MaxExecutors: ptr.To[int32](10)}
		}), want: map[string]any{"minMember": int64(1), "minResources": map[string]any{"cpu": "5", "memory": "4480Mi"}}},
		{name: "pyspark: the non-JVM overhead and the python workers' memory", app: pi(func(a *v1beta2.SparkApplication) {
			a.Spec.Type = v1beta2.SparkApplicationTypePython
			a.Spec.MainClass = nil
			a.Spec.MainApplicationFile = "local:///pi.py"
			a.Spec.PythonVersion = ptr.To("3")
			a.Spec.SparkConf = map[string]string{"spark.executor.pyspark.memory": "1g"}
		}), want: map[string]any{"minMember": int64(1), "minResources": map[string]any{"cpu": "3", "memory": "4736Mi"}}},
		{name: "GPUs are part of the gang", app: pi(func(a *v1beta2.SparkApplication) {
			a.Spec.Executor.GPU = &v1beta2.GPUSpec{Name: "nvidia.com/gpu", Quantity: 1}
		}), want: map[string]any{"minMember": int64(1), "minResources": map[string]any{"cpu": "3", "memory": "2688Mi", "nvidia.com/gpu": "2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := workload(t, tt.app)
			objs, err := newScheduler(newClient(true, queue("q"))).RunObjects(context.Background(), w, gang.Reservation{})
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) != 1 {
				t.Fatalf("%d objects, want the PodGroup", len(objs))
			}
			pg := objs[0].(*unstructured.Unstructured)
			if pg.GroupVersionKind() != PodGroupKind || pg.GetName() != "pi-pg-run-1" || pg.GetNamespace() != "ns" {
				t.Errorf("object %s %s/%s, want PodGroup ns/pi-pg-run-1", pg.GroupVersionKind(), pg.GetNamespace(), pg.GetName())
			}
			if diff := cmp.Diff(tt.want, pg.Object["spec"]); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

// The PodGroup is created owned by the application (EnsureRunObjects) and deleted on Release.
func TestPodGroupLifecycle(t *testing.T) {
	app := pi(nil)
	c := newClient(true, app)
	s := newScheduler(c)
	w := workload(t, app)
	if err := scheduler.EnsureRunObjects(context.Background(), c, objectsOf{s}, w, scheduler.Decision{Admit: true}); err != nil {
		t.Fatal(err)
	}
	pg := &unstructured.Unstructured{}
	pg.SetGroupVersionKind(PodGroupKind)
	key := client.ObjectKey{Namespace: "ns", Name: "pi-pg-run-1"}
	if err := c.Get(context.Background(), key, pg); err != nil {
		t.Fatal(err)
	}
	want := []metav1.OwnerReference{{APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication", Name: "pi", UID: "uid-pi"}}
	if diff := cmp.Diff(want, pg.GetOwnerReferences()); diff != "" {
		t.Errorf("owners (-want +got):\n%s", diff)
	}
	for range 2 { // twice: Release may be called again
		if err := s.Release(context.Background(), w); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Get(context.Background(), key, pg); err == nil {
		t.Errorf("the PodGroup of a released run still exists")
	}
	if err := newScheduler(newClient(false)).Release(context.Background(), w); err != nil {
		t.Errorf("release without Volcano's CRDs: %v", err)
	}
}

func TestValidateApplication(t *testing.T) {
	if errs := newScheduler(newClient(true, queue("q"))).ValidateApplication(context.Background(), pi(nil)); len(errs) != 0 {
		t.Errorf("with the CRDs: %v", errs)
	}
	errs := newScheduler(newClient(false)).ValidateApplication(context.Background(), pi(nil))
	if len(errs) != 1 || errs[0].Type != field.ErrorTypeForbidden || errs[0].Field != "spec.batchScheduler" ||
		!strings.Contains(errs[0].Detail, "podgroups.scheduling.volcano.sh") {
		t.Errorf("without the CRDs: %v, want spec.batchScheduler forbidden naming the CRD", errs)
	}
	inQueue := func(q string) *v1beta2.SparkApplication {
		return pi(func(a *v1beta2.SparkApplication) {
			a.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To(q)}
		})
	}
	if errs := newScheduler(newClient(true, queue("q"))).ValidateApplication(context.Background(), inQueue("q")); len(errs) != 0 {
		t.Errorf("a queue that exists: %v", errs)
	}
	errs = newScheduler(newClient(true, queue("q"))).ValidateApplication(context.Background(), inQueue("nope"))
	if len(errs) != 1 || errs[0].Type != field.ErrorTypeNotFound || errs[0].Field != "spec.batchSchedulerOptions.queue" {
		t.Errorf("a queue that does not exist: %v, want spec.batchSchedulerOptions.queue not found", errs)
	}
}

func TestPodGroupName(t *testing.T) {
	long := strings.Repeat("a", 250)
	tests := []struct{ name, run, want string }{
		{"pi", "6f1c", "pi-pg-6f1c"},
		{long, "6f1c", strings.Repeat("a", 253-len("-pg-6f1c")) + "-pg-6f1c"},
	}
	for _, tt := range tests {
		w := scheduler.Workload{Key: scheduler.WorkloadKey{Kind: scheduler.KindApplication}, Run: tt.run}
		w.Key.Name = tt.name
		if got := PodGroupName(w); got != tt.want || len(got) > 253 {
			t.Errorf("PodGroupName(%.10s…, %s) = %q, want %q", tt.name, tt.run, got, tt.want)
		}
	}
}
