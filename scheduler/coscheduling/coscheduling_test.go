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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
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
	objs, err := s.RunObjects(context.Background(), workload("spark-pi", "run-1", time.Time{}, 4), scheduler.Decision{Admit: true})
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
		"labels":      map[string]string{LabelBatchScheduler: DefaultName, labelRun: "run-1"},
		"annotations": map[string]string{AnnotationGangSize: "5"},
		// The whole gang: 1 + 4·2 CPU, 1408Mi + 4·2432Mi; minMember counts the driver only.
		"spec": map[string]any{"minMember": int64(1), "scheduleTimeoutSeconds": int64(90),
			"minResources": map[string]any{"cpu": "9", "memory": "11136Mi"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PodGroup (-want +got):\n%s", diff)
	}
}

// pod is a pod of PodGroup pg, bound to a node if bound.
func pod(name, pg string, bound bool, phase corev1.PodPhase) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{LabelPodGroup: pg}}}
	if bound {
		p.Spec.NodeName = "node"
	}
	p.Status.Phase = phase
	return p
}

func mapper(withCRD bool) meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	if withCRD {
		m.Add(PodGroupCRD.GVK, meta.RESTScopeNamespace)
	}
	return m
}

// TestAdmitOneGangAtATime: a run is admitted only once the gang admitted before it is placed,
// has ended or has had its time; the oldest held run goes first.
func TestAdmitOneGangAtATime(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	clock := clocktesting.NewFakeClock(t0)
	s := New(Config{Mapper: mapper(true), Reader: listPodsOnly{c}, Clock: clock})
	a, b, old := workload("a", "ra", t0, 2), workload("b", "rb", t0.Add(time.Second), 2), workload("old", "ro", t0.Add(-time.Hour), 2)
	pgA := PodGroupName("a", "ra")

	admit := func(w scheduler.Workload) scheduler.Decision {
		t.Helper()
		d, err := s.Admit(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := admit(a)
	want := sparkpod.Scheduling{SchedulerName: DefaultName, Labels: map[string]string{LabelPodGroup: pgA}}
	if diff := cmp.Diff(scheduler.Decision{Admit: true, Pods: sparkpod.RoleScheduling{Driver: want, Executor: want}}, d); diff != "" {
		t.Fatalf("decision for a (-want +got):\n%s", diff)
	}
	if d := admit(a); !d.Admit {
		t.Errorf("a admitted again: %+v", d)
	}
	steps := []struct {
		name  string
		pods  []*corev1.Pod
		after time.Duration
		w     scheduler.Workload
		admit bool
		why   string
	}{
		{name: "a has no pod yet", w: b, why: "the gang of ns/a"},
		{name: "a's driver waits for capacity, however long", pods: []*corev1.Pod{pod("a-driver", pgA, false, corev1.PodPending)},
			after: time.Hour, w: b, why: "the gang of ns/a"},
		{name: "a's driver is bound, its executors are not", pods: []*corev1.Pod{pod("a-driver", pgA, true, corev1.PodRunning),
			pod("a-exec-1", pgA, true, corev1.PodRunning), pod("a-exec-2", pgA, false, corev1.PodPending)}, w: b, why: "the gang of ns/a"},
		{name: "an older workload asked meanwhile goes first", w: old, why: "the gang of ns/a"},
		{name: "a's gang is placed, but old is older than b", pods: []*corev1.Pod{pod("a-exec-2", pgA, true, corev1.PodRunning)},
			w: b, why: "ns/old, which was created earlier"},
		{name: "old", w: old, admit: true},
		{name: "then b, once old is released", w: b, admit: true},
	}
	for _, st := range steps {
		for _, p := range st.pods {
			if err := c.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
				t.Fatal(err)
			}
			if err := c.Create(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		// Past the time a gang found being placed is trusted without a look at its pods.
		clock.Step(st.after + recheck)
		if st.name == "then b, once old is released" {
			if err := s.Release(ctx, old); err != nil {
				t.Fatal(err)
			}
		}
		d := admit(st.w)
		if d.Admit != st.admit || (st.why != "" && !strings.Contains(d.Reason, st.why)) {
			t.Errorf("%s: decision %+v, want admit %v, a reason naming %q", st.name, d, st.admit, st.why)
		}
		if !d.Admit && d.RetryAfter <= 0 {
			t.Errorf("%s: held without a time to ask again", st.name)
		}
	}
}

// TestAdmitAfterTimeout: a gang whose executors never all come stops holding the others
// ScheduleTimeout after its driver was bound; one whose driver ended at once, at once.
func TestAdmitAfterTimeout(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		driver *corev1.Pod
		wait   time.Duration
	}{
		{name: "executors never come", driver: pod("a-driver", PodGroupName("a", "ra"), true, corev1.PodRunning), wait: time.Minute},
		{name: "the driver ended", driver: pod("a-driver", PodGroupName("a", "ra"), true, corev1.PodFailed)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			_ = clientgoscheme.AddToScheme(scheme)
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tt.driver).Build()
			clock := clocktesting.NewFakeClock(t0)
			s := New(Config{Mapper: mapper(true), Reader: listPodsOnly{c}, Clock: clock, ScheduleTimeout: time.Minute})
			if d, err := s.Admit(ctx, workload("a", "ra", t0, 4)); err != nil || !d.Admit {
				t.Fatalf("a: %+v, %v", d, err)
			}
			b := workload("b", "rb", t0, 4)
			clock.Step(recheck)
			if tt.wait > 0 {
				if d, err := s.Admit(ctx, b); err != nil || d.Admit {
					t.Fatalf("b admitted while a's driver was just bound: %+v, %v", d, err)
				}
				clock.Step(tt.wait)
			}
			clock.Step(recheck)
			if d, err := s.Admit(ctx, b); err != nil || !d.Admit {
				t.Errorf("b: %+v, %v; want it admitted", d, err)
			}
		})
	}
}

// listPodsOnly lists pods from the fake client, and no PodGroups (an earlier process left none).
type listPodsOnly struct{ client.Reader }

func (r listPodsOnly) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*corev1.PodList); ok {
		return r.Reader.List(ctx, list, opts...)
	}
	return nil
}

func TestMissingCRD(t *testing.T) {
	s := New(Config{Mapper: mapper(false)})
	d, err := s.Admit(context.Background(), workload("a", "ra", time.Time{}, 1))
	if err != nil {
		t.Fatal(err)
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
	objs, err := New(Config{}).RunObjects(context.Background(), w, scheduler.Decision{Admit: true})
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
	if ann := objs[0].GetAnnotations()[AnnotationGangSize]; ann != "4" {
		t.Errorf("gang size %s, want 4", ann)
	}
}

// podGroupsAndPods lists groups as the PodGroups of the cluster, and pods from the fake client.
type podGroupsAndPods struct {
	client.Reader
	groups []unstructured.Unstructured
}

func (r podGroupsAndPods) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if l, ok := list.(*unstructured.UnstructuredList); ok {
		l.Items = r.groups
		return nil
	}
	return r.Reader.List(ctx, list, opts...)
}

// TestAdmitAfterRestart: a gang an earlier operator process admitted, still being placed, keeps
// a restarted one from admitting the next until it is placed: it is found from its PodGroup.
func TestAdmitAfterRestart(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ctx := context.Background()
	a := workload("a", "ra", t0, 2)
	objs, err := New(Config{}).RunObjects(ctx, a, scheduler.Decision{Admit: true})
	if err != nil {
		t.Fatal(err)
	}
	pg := objs[0].(*unstructured.Unstructured)
	pg.SetNamespace("ns")
	pg.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication", Name: "a", UID: "uid-a"}})
	pgA := pg.GetName()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(pod("a-driver", pgA, true, corev1.PodRunning),
		pod("a-exec-1", pgA, false, corev1.PodPending), pod("a-exec-2", pgA, false, corev1.PodPending)).Build()
	clock := clocktesting.NewFakeClock(t0)
	s := New(Config{Mapper: mapper(true), Reader: podGroupsAndPods{Reader: c, groups: []unstructured.Unstructured{*pg}}, Clock: clock})

	b := workload("b", "rb", t0, 2)
	if d, err := s.Admit(ctx, b); err != nil || d.Admit || !strings.Contains(d.Reason, "the gang of ns/a") {
		t.Fatalf("b: %+v, %v; want it held for the gang of ns/a", d, err)
	}
	if d, err := s.Admit(ctx, a); err != nil || !d.Admit {
		t.Errorf("a, its run admitted before the restart: %+v, %v; want it admitted again", d, err)
	}
	for _, name := range []string{"a-exec-1", "a-exec-2"} {
		if err := c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, pod(name, pgA, true, corev1.PodRunning)); err != nil {
			t.Fatal(err)
		}
	}
	clock.Step(recheck)
	if d, err := s.Admit(ctx, b); err != nil || !d.Admit {
		t.Errorf("b once a's gang is placed: %+v, %v; want it admitted", d, err)
	}
}
