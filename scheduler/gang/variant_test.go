/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	gt "github.com/sparkop/spark-operator/scheduler/gang/gangtest"
	"github.com/sparkop/spark-operator/sparkpod"
)

// labelling is a Placement that labels the executors with the run and wants one object.
type labelling struct{}

func (labelling) Name() string { return "labelling" }

func (labelling) Pods(w scheduler.Workload, r Reservation) (sparkpod.RoleScheduling, error) {
	return sparkpod.RoleScheduling{Driver: sparkpod.Scheduling{NodeNames: []string{r.Driver}},
		Executor: sparkpod.Scheduling{Labels: map[string]string{"run": w.Run}, NodeNames: r.Planned()}}, nil
}

func (labelling) RunObjects(context.Context, scheduler.Workload, Reservation) ([]client.Object, error) {
	return []client.Object{&corev1.ConfigMap{}}, nil
}

// TestServe: a variant is served under its own name by the one core, which then decides for
// the applications naming it; its admissions carry its pod settings, and its objects.
func TestServe(t *testing.T) {
	named := func(name string) *v1beta2.SparkApplication {
		a := app("a", "s1", v1beta2.ApplicationStateNew, 2, nil)
		a.Spec.BatchScheduler = ptr.To(name)
		return &a
	}
	for _, tt := range []struct {
		name         string
		variantsOnly bool
		want         map[string]bool // spec.batchScheduler → the core decides for it
	}{
		{"gang and a variant", false, map[string]bool{Name: true, "labelling": true, "other": false}},
		{"the variant alone", true, map[string]bool{Name: false, "labelling": true, "other": false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Config{VariantsOnly: tt.variantsOnly})
			v := s.Serve(labelling{})
			if v.Name() != "labelling" {
				t.Errorf("the variant is named %q", v.Name())
			}
			if _, ok := v.(scheduler.ObjectsForRun); !ok {
				t.Error("a variant whose Placement wants run objects does not offer them")
			}
			if _, ok := v.(scheduler.WithManager); !ok {
				t.Error("a variant registered alone would never set the core up")
			}
			got := map[string]bool{}
			for name := range tt.want {
				got[name] = s.isGang(named(name))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("applications the core decides for (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("an admission carries the variant's pod settings", func(t *testing.T) {
		s := New(Config{})
		v := s.Serve(labelling{})
		s.held = map[core.Key]string{}
		res := &Reservation{SubmissionID: "s1", Queue: "q", Driver: "n1", Executors: map[string]int32{"n2": 1, "n1": 1}}
		a := app("a", "s1", v1beta2.ApplicationStateNew, 2, res)
		got, err := v.Admit(context.Background(), scheduler.ApplicationWorkload(&a))
		if err != nil {
			t.Fatal(err)
		}
		want := scheduler.Decision{Admit: true, Pods: sparkpod.RoleScheduling{Driver: sparkpod.Scheduling{NodeNames: []string{"n1"}},
			Executor: sparkpod.Scheduling{Labels: map[string]string{"run": "s1"}, NodeNames: []string{"n1", "n2"}}}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("decision (-want +got):\n%s", diff)
		}
		// The core's own admission is unchanged: gang's gated executors.
		if got, _ := s.Admit(context.Background(), scheduler.ApplicationWorkload(&a)); !cmp.Equal(got.Pods, res.Pods(EnforcementAdvisory)) {
			t.Errorf("the core's admission changed: %+v", got.Pods)
		}
	})

	t.Run("a held application is held alike", func(t *testing.T) {
		s := New(Config{})
		v := s.Serve(labelling{})
		a := app("a", "s1", v1beta2.ApplicationStateNew, 2, nil)
		got, err := v.Admit(context.Background(), scheduler.ApplicationWorkload(&a))
		if err != nil {
			t.Fatal(err)
		}
		if got.Admit || got.Reason == "" {
			t.Errorf("decision %+v, want held with a reason", got)
		}
	})
}

// TestVariantPlacePod: the webhook confines each ungated executor of an application naming
// the variant to its planned slot, by id, as the core does a gated one; anything else is left.
func TestVariantPlacePod(t *testing.T) {
	admitted := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := Reservation{SubmissionID: "s1", Queue: "q", Driver: "n1", Executors: map[string]int32{"n2": 1, "n1": 2}, Admitted: admitted}
	owner := func(name string) *v1beta2.SparkApplication {
		a := app("app", "s1", v1beta2.ApplicationStateRunning, 3, &res)
		a.Spec.BatchScheduler = ptr.To(name)
		return &a
	}
	executor := func(id string, gated bool) *corev1.Pod {
		var gates []string
		if gated {
			gates = append(gates, GateExecutor)
		}
		p := gt.GatedExecutor(nil, gates...)
		p.Name = "app-exec-" + id
		p.Labels = map[string]string{v1beta2.LabelAppName: "app", v1beta2.LabelSubmissionID: "s1",
			v1beta2.SparkRoleLabel: v1beta2.SparkRoleExecutor, v1beta2.SparkExecutorIDLabel: id}
		return p
	}
	placed := func(p *corev1.Pod, node string) *corev1.Pod {
		p = p.DeepCopy()
		sparkpod.RequireNodes(&p.Spec, node)
		p.Annotations = map[string]string{AnnotationNode: node}
		return p
	}
	cases := []struct {
		name  string
		pod   *corev1.Pod
		owner client.Object
		want  string // the node placed on; "" when left alone
	}{
		{name: "executor 1 takes the first slot", pod: executor("1", false), owner: owner("labelling"), want: "n1"},
		{name: "executor 3 the third", pod: executor("3", false), owner: owner("labelling"), want: "n2"},
		{name: "an id beyond the plan keeps the template's nodes", pod: executor("4", false), owner: owner("labelling")},
		{name: "an application naming gang is the core's", pod: executor("1", false), owner: owner(Name)},
		{name: "a gated executor is the core's", pod: executor("1", true), owner: owner("labelling")},
		{name: "an executor placed already", pod: placed(executor("1", false), "n1"), owner: owner("labelling")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{ReservationTimeout: time.Minute, Clock: clocktesting.NewFakeClock(admitted.Add(time.Second))})
			v := s.Serve(labelling{}).(scheduler.PodPlacer)
			pod := tc.pod.DeepCopy()
			got := v.PlacePod(pod, tc.owner)
			if got != (tc.want != "") {
				t.Fatalf("placed = %v, want %v", got, tc.want != "")
			}
			want := tc.pod
			if got {
				want = placed(tc.pod, tc.want)
			}
			if diff := cmp.Diff(want, pod); diff != "" {
				t.Errorf("pod (-want +got):\n%s", diff)
			}
		})
	}
}

// foreign is a ForeignPlacement whose Check holds runs of the application named "held", and
// whose validation refuses every application.
type foreign struct{}

func (foreign) Name() string { return "foreign" }

func (foreign) Pods(_ scheduler.Workload, r Reservation) (sparkpod.RoleScheduling, error) {
	own := sparkpod.Scheduling{SchedulerName: "other", Labels: map[string]string{"group": "g"}}
	return r.PodsPlacedElsewhere(sparkpod.RoleScheduling{Driver: own, Executor: own}), nil
}

func (foreign) Check(_ context.Context, w scheduler.Workload) (scheduler.Decision, bool, error) {
	if w.Key.Name == "held" {
		return scheduler.Decision{Reason: "its own reason"}, false, nil
	}
	return scheduler.Decision{}, true, nil
}

func (foreign) ValidateApplication(context.Context, *v1beta2.SparkApplication) field.ErrorList {
	return field.ErrorList{field.Forbidden(field.NewPath("spec"), "the other scheduler's verdict")}
}

// TestForeignPlacement: another scheduler's integration behind the core. Its check comes
// first; an admission places the pods on the planned nodes with the other scheduler's
// settings, the executors not gated; its applications' queue is the other scheduler's, so the
// core reads them in its default queue, the integration validates them, and Kueue may queue
// them; with it as the operator's default, applications naming none and sessions are the core's.
func TestForeignPlacement(t *testing.T) {
	s := New(Config{VariantsOnly: true, DefaultVariant: "foreign", SessionDemand: func(*v1alpha1.SparkConnect) (sparkpod.Demand, error) { return sparkpod.Demand{}, nil }})
	v := s.Serve(foreign{})
	s.held = map[core.Key]string{}
	res := &Reservation{SubmissionID: "s1", Queue: "default", Driver: "n1", Executors: map[string]int32{"n2": 1, "n1": 1}}

	held := app("held", "s1", v1beta2.ApplicationStateNew, 2, res)
	if d, err := v.Admit(context.Background(), scheduler.ApplicationWorkload(&held)); err != nil || d.Admit || d.Reason != "its own reason" {
		t.Errorf("a run its check holds: %+v, %v", d, err)
	}
	a := app("a", "s1", v1beta2.ApplicationStateNew, 2, res)
	got, err := v.Admit(context.Background(), scheduler.ApplicationWorkload(&a))
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]string{"group": "g", LabelQueue: "default"}
	want := scheduler.Decision{Admit: true, Pods: sparkpod.RoleScheduling{
		Driver:   sparkpod.Scheduling{SchedulerName: "other", Labels: own, NodeNames: []string{"n1"}},
		Executor: sparkpod.Scheduling{SchedulerName: "other", Labels: own, NodeNames: []string{"n1", "n2"}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decision (-want +got):\n%s", diff)
	}
	if errs := v.(scheduler.ApplicationValidator).ValidateApplication(context.Background(), &a); len(errs) != 1 || errs[0].Detail != "the other scheduler's verdict" {
		t.Errorf("validation %v, want the integration's", errs)
	}
	if v.(scheduler.Queueing).QueuesWorkloads() {
		t.Error("its applications would be refused with a Kueue label, though the core does not queue them by their queue")
	}

	unnamed := app("b", "s2", v1beta2.ApplicationStateNew, 1, nil)
	unnamed.Spec.BatchScheduler = nil
	unnamed.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To("root.spark")}
	if !s.isGang(&unnamed) || !s.sessions() {
		t.Error("with the variant as the default, applications naming none and sessions are not the core's")
	}
	if got := s.schedulerOf(&unnamed); got != "foreign" || !s.ownPlacement[got] || !s.foreignQueues[got] {
		t.Errorf("an application naming none is scheduled as %q (own placement %v, foreign queue %v), want the default variant's", got, s.ownPlacement[got], s.foreignQueues[got])
	}
}
