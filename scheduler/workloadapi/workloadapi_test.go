/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package workloadapi

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/sparkpod"
)

const run = "0123abcd-4567-89ef-0123-456789abcdef"

func workload(name, priorityClass string) scheduler.Workload {
	return scheduler.Workload{Key: scheduler.ApplicationKey(types.NamespacedName{Namespace: "ns", Name: name}), Run: run,
		PriorityClassName: priorityClass}
}

func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{v1beta2.LabelAppName: "pi", v1beta2.LabelSubmissionID: run}}
}

func podGroup(name, template string, policy schedulingv1beta1.PodGroupSchedulingPolicy, priorityClass string) *schedulingv1beta1.PodGroup {
	return &schedulingv1beta1.PodGroup{
		TypeMeta:   metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1beta1", Kind: "PodGroup"},
		ObjectMeta: meta(name),
		Spec: schedulingv1beta1.PodGroupSpec{
			WorkloadRef:       &schedulingv1beta1.WorkloadReference{WorkloadName: "pi-0123abcd", TemplateName: template},
			SchedulingPolicy:  policy,
			DisruptionMode:    &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}},
			PriorityClassName: priorityClass,
		},
	}
}

var (
	basic  = schedulingv1beta1.PodGroupSchedulingPolicy{Basic: &schedulingv1beta1.BasicSchedulingPolicy{}}
	gangOf = func(n int32) schedulingv1beta1.PodGroupSchedulingPolicy {
		return schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: n}}
	}
)

func template(name string, policy schedulingv1beta1.PodGroupSchedulingPolicy, priorityClass string) schedulingv1beta1.PodGroupTemplate {
	return schedulingv1beta1.PodGroupTemplate{Name: name, SchedulingPolicy: policy, PriorityClassName: priorityClass,
		DisruptionMode: &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}}}
}

func workloadObject(templates ...schedulingv1beta1.PodGroupTemplate) *schedulingv1beta1.Workload {
	return &schedulingv1beta1.Workload{
		TypeMeta:   metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1beta1", Kind: "Workload"},
		ObjectMeta: meta("pi-0123abcd"),
		Spec: schedulingv1beta1.WorkloadSpec{
			ControllerRef:     &schedulingv1beta1.TypedLocalObjectReference{APIGroup: "sparkoperator.k8s.io", Kind: "SparkApplication", Name: "pi"},
			PodGroupTemplates: templates,
		},
	}
}

func TestObjects(t *testing.T) {
	tests := []struct {
		name      string
		w         scheduler.Workload
		executors int32
		want      []client.Object
		err       string
	}{{
		name: "a driver group of one and a gang of the planned executors", w: workload("pi", ""), executors: 4,
		want: []client.Object{
			workloadObject(template("driver", basic, ""), template("executors", gangOf(4), "")),
			podGroup("pi-0123abcd-driver", "driver", basic, ""),
			podGroup("pi-0123abcd-executors", "executors", gangOf(4), ""),
		},
	}, {
		name: "the run's priority class on every group", w: workload("pi", "high"), executors: 1,
		want: []client.Object{
			workloadObject(template("driver", basic, "high"), template("executors", gangOf(1), "high")),
			podGroup("pi-0123abcd-driver", "driver", basic, "high"),
			podGroup("pi-0123abcd-executors", "executors", gangOf(1), "high"),
		},
	}, {
		// minCount must be positive: a run of no executors has no executors' group.
		name: "no executors planned", w: workload("pi", ""), executors: 0,
		want: []client.Object{workloadObject(template("driver", basic, "")), podGroup("pi-0123abcd-driver", "driver", basic, "")},
	}, {
		name: "a session", w: scheduler.Workload{Key: scheduler.WorkloadKey{Kind: scheduler.KindSession, NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}, Run: run},
		err: "places SparkApplications only",
	}, {
		name: "no run", w: scheduler.Workload{Key: scheduler.ApplicationKey(types.NamespacedName{Namespace: "ns", Name: "pi"})},
		err: "no run",
	}, {
		name: "a negative count", w: workload("pi", ""), executors: -1, err: "-1 executors",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Objects(tt.w, tt.executors)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNamesOf: names stay valid object names, and two runs or two applications never share one.
func TestNamesOf(t *testing.T) {
	long := strings.Repeat("a", 253)
	tests := []struct {
		name string
		w    scheduler.Workload
	}{
		{"short", workload("pi", "")},
		{"the longest application name", workload(long, "")},
		{"a short run id", scheduler.Workload{Key: scheduler.ApplicationKey(types.NamespacedName{Name: "pi"}), Run: "r1"}},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := NamesOf(tt.w)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{n.Workload, n.Driver, n.Executors} {
				if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
					t.Errorf("%q: %v", name, errs)
				}
				if other, ok := seen[name]; ok {
					t.Errorf("%q names objects of %s and %s", name, other, tt.name)
				}
				seen[name] = tt.name
			}
		})
	}
	a, _ := NamesOf(workload(long, ""))
	b, _ := NamesOf(scheduler.Workload{Key: scheduler.ApplicationKey(types.NamespacedName{Name: long + "b"}), Run: run})
	if a == b {
		t.Errorf("two applications shortened to the same names %+v", a)
	}
}

// TestPods: gang's driver placement, the executors not gated but in the run's gang group, on
// the planned nodes; the driver in its own group.
func TestPods(t *testing.T) {
	r := gang.Reservation{SubmissionID: run, Queue: "q", Driver: "n1", Executors: map[string]int32{"n3": 1, "n2": 2}}
	got, err := Placement{}.Pods(workload("pi", ""), r)
	if err != nil {
		t.Fatal(err)
	}
	want := sparkpod.RoleScheduling{
		Driver: sparkpod.Scheduling{Labels: map[string]string{gang.LabelQueue: "q"}, NodeNames: []string{"n1"},
			SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: ptr.To("pi-0123abcd-driver")}},
		Executor: sparkpod.Scheduling{Labels: map[string]string{gang.LabelQueue: "q"}, NodeNames: []string{"n2", "n3"},
			SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: ptr.To("pi-0123abcd-executors")}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pod settings (-want +got):\n%s", diff)
	}
}

// TestRunObjects: the executors' minCount is what the reservation planned; a reservation of
// another run gives none.
func TestRunObjects(t *testing.T) {
	r := gang.Reservation{SubmissionID: run, Queue: "q", Driver: "n1", Executors: map[string]int32{"n3": 1, "n2": 2}}
	app := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pi"}}
	w := workload("pi", "")
	w.Object = app
	if _, err := (Placement{}).RunObjects(context.Background(), w, gang.Reservation{SubmissionID: "another"}); err == nil {
		t.Error("objects for a run the reservation is not for")
	}
	objs, err := Placement{}.RunObjects(context.Background(), w, r)
	if err != nil {
		t.Fatal(err)
	}
	if pg, ok := objs[2].(*schedulingv1beta1.PodGroup); !ok || pg.Spec.SchedulingPolicy.Gang == nil || pg.Spec.SchedulingPolicy.Gang.MinCount != 3 {
		t.Errorf("executors' group %+v, want a gang of 3", objs[2])
	}
}

func TestCheck(t *testing.T) {
	served := func(names ...string) *metav1.APIResourceList {
		l := &metav1.APIResourceList{GroupVersion: "scheduling.k8s.io/v1beta1"}
		for _, n := range names {
			l.APIResources = append(l.APIResources, metav1.APIResource{Name: n})
		}
		return l
	}
	tests := []struct {
		name      string
		resources []*metav1.APIResourceList
		unserved  bool
	}{
		{"served", []*metav1.APIResourceList{served("workloads", "podgroups", "podgroups/status")}, false},
		{"not served", nil, true},
		{"without podgroups", []*metav1.APIResourceList{served("workloads", "priorityclasses")}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: tt.resources}}
			err := Check(d)
			if got := errors.Is(err, ErrUnserved); got != tt.unserved {
				t.Fatalf("Check: %v; unserved %v, want %v", err, got, tt.unserved)
			}
			if tt.unserved && !strings.Contains(err.Error(), "GenericWorkload") {
				t.Errorf("%v does not name the feature gate", err)
			}
		})
	}
}

// TestPlacePod: the webhook puts a pod of the admitted run that lacks a group in its role's.
func TestPlacePod(t *testing.T) {
	r := gang.Reservation{SubmissionID: run, Queue: "q", Driver: "n1", Executors: map[string]int32{"n2": 2}}
	driverOnly := gang.Reservation{SubmissionID: run, Driver: "n1"}
	owner := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pi"}}
	pod := func(role, submission string, group *string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{
			v1beta2.SparkRoleLabel: role, v1beta2.LabelSubmissionID: submission}}}
		if group != nil {
			p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: group}
		}
		return p
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		res  gang.Reservation
		want *string // the group the pod is in after
	}{
		{"a driver without a group", pod("driver", run, nil), r, ptr.To("pi-0123abcd-driver")},
		{"an executor without a group", pod("executor", run, nil), r, ptr.To("pi-0123abcd-executors")},
		{"a pod in a group already", pod("executor", run, ptr.To("mine")), r, ptr.To("mine")},
		{"another run's pod", pod("executor", "other", nil), r, nil},
		{"a run with no executors' group", pod("executor", run, nil), driverOnly, nil},
		{"a reservation of another run", pod("driver", run, nil), gang.Reservation{SubmissionID: "another"}, nil},
		{"no role", pod("", run, nil), r, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.pod.DeepCopy()
			changed := Placement{}.PlacePod(p, owner, tt.res)
			var got *string
			if p.Spec.SchedulingGroup != nil {
				got = p.Spec.SchedulingGroup.PodGroupName
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("group (-want +got):\n%s", diff)
			}
			if want := tt.pod.Spec.SchedulingGroup == nil && tt.want != nil; changed != want {
				t.Errorf("changed = %v, want %v", changed, want)
			}
		})
	}
}

// TestNaive: the naive mapping admits at once, with the same groups and objects as kubernetes.
func TestNaive(t *testing.T) {
	w := workload("pi", "")
	w.Demand = sparkpod.Demand{Driver: sparkpod.PodDemand{Count: 1}, Executor: sparkpod.PodDemand{Count: 4}}
	d, err := Naive{}.Admit(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	want := scheduler.Decision{Admit: true, Pods: sparkpod.RoleScheduling{
		Driver:   sparkpod.Scheduling{SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: ptr.To("pi-0123abcd-driver")}},
		Executor: sparkpod.Scheduling{SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: ptr.To("pi-0123abcd-executors")}},
	}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("decision (-want +got):\n%s", diff)
	}
	objs, err := Naive{}.RunObjects(context.Background(), w, d)
	if err != nil {
		t.Fatal(err)
	}
	same, _ := Objects(w, 4)
	if diff := cmp.Diff(same, objs); diff != "" {
		t.Errorf("objects (-kubernetes +naive):\n%s", diff)
	}
}
