/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/scheduler/key"
)

// limited is a ForeignPlacement that tells its queues' limits: "capped" holds 10 CPU, its
// parent "org" 12; "open" limits nothing; the limits of "unreadable" cannot be read.
type limited struct {
	foreign
	asked *int
}

func (limited) Name() string { return "limited" }

func (l limited) QueueLimits(_ context.Context, queue string) ([]ForeignQueue, error) {
	*l.asked++
	cpu := func(s string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(s)}
	}
	switch queue {
	case "capped":
		return []ForeignQueue{{Name: "capped", Max: cpu("10")}, {Name: "org", Max: cpu("12")}}, nil
	case "sibling":
		return []ForeignQueue{{Name: "sibling"}, {Name: "org", Max: cpu("12")}}, nil
	case "unreadable":
		return nil, errors.New("the configuration does not parse")
	}
	return nil, nil
}

// TestForeignQueueLimits: applications of another scheduler's queue that has limits are
// admitted by the core in a queue standing for it, with its limits (and its ancestors') as
// quota: whole gangs, only while they fit what is left of the queue, however much the nodes
// have; the queue's limits are asked once a cycle; a queue without limits stays the default;
// the applications of one whose limits cannot be read wait, and the others go on.
func TestForeignQueueLimits(t *testing.T) {
	asked := 0
	s := New(Config{VariantsOnly: true})
	s.Serve(limited{asked: &asked})
	var apps []v1beta2.SparkApplication
	for i, queue := range []string{"capped", "capped", "capped", "sibling", "open", "open", "unreadable"} {
		a := app(fmt.Sprintf("a%d", i), "", v1beta2.ApplicationStateNew, 2, nil) // 5 CPU each
		a.CreationTimestamp = metav1.NewTime(time.Unix(int64(i), 0))
		a.Spec.BatchScheduler = ptr.To("limited")
		a.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To(queue)}
		apps = append(apps, a)
	}
	w := world{Workloads: gangApps(apps), Queues: []schedv1alpha1.Queue{{ObjectMeta: metav1.ObjectMeta{Name: schedv1alpha1.DefaultQueueName}}}}
	var f foreignQueues
	for i := range w.Workloads {
		s.foreignQueue(context.Background(), &f, "limited", &w.Workloads[i])
	}
	w.ForeignQueues = f.queues
	if asked != 4 {
		t.Errorf("the limits were asked %d times for 4 queues", asked)
	}
	for i := range 7 { // room for all by the nodes
		w.Nodes = append(w.Nodes, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i)},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"),
				corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")}}})
	}
	snap, err := snapshot(w, snapshotOptions{Now: time.Unix(100, 0)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range snap.Workloads {
		snap.Workloads[i].Unrecorded = false
	}
	out := core.Schedule(snap, core.Options{})
	got := map[string]string{}
	for _, a := range out.Admitted {
		got[a.Key.Name] = a.Admission.Queue
	}
	// capped holds two of 5 CPU, and org (12) then only 2 more CPU: sibling, under it, waits.
	want := map[string]string{"a0": "limited_capped", "a1": "limited_capped", "a4": "default", "a5": "default"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("admitted → queue (-want +got):\n%s", diff)
	}
	for name, part := range map[string]string{"a2": "queue limited_capped", "a3": "queue limited_org", "a6": "queue limited_unreadable does not exist"} {
		k := core.Key{Kind: key.KindApplication, NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
		if why := out.Waiting[k].Message; !strings.Contains(why, part) {
			t.Errorf("%s waits saying %q, want it to name %s", name, why, part)
		}
	}
}

// TestForeignQueueName: the core's name for another scheduler's queue is a label value no Queue
// object can have; a queue name that would not make one is hashed.
func TestForeignQueueName(t *testing.T) {
	for queue, want := range map[string]string{
		"spark":                 "volcano_spark",
		"root.spark":            "volcano_root.spark",
		strings.Repeat("q", 70): "volcano_",
		"root.a/b":              "volcano_",
	} {
		got := ForeignQueueName("volcano", queue)
		if !strings.HasPrefix(got, want) || (want == "volcano_" && strings.Contains(got, queue)) {
			t.Errorf("ForeignQueueName(volcano, %q) = %q, want %q…", queue, got, want)
		}
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
			t.Errorf("%q is not a label value: %v", got, errs)
		}
	}
}

// TestRemembered: a read is kept for LimitsTTL, an error is not.
func TestRemembered(t *testing.T) {
	var r Remembered[int]
	reads := 0
	read := func() (int, error) { reads++; return reads, nil }
	if v, _ := r.Get("a", read); v != 1 {
		t.Fatalf("first read %d, want 1", v)
	}
	if v, _ := r.Get("a", read); v != 1 || reads != 1 {
		t.Errorf("second get %d after %d reads, want the first read kept", v, reads)
	}
	if v, _ := r.Get("b", read); v != 2 {
		t.Errorf("another key got %d, want a read of its own", v)
	}
	failed := 0
	fail := func() (int, error) { failed++; return 0, errors.New("no") }
	for range 2 {
		if _, err := r.Get("c", fail); err == nil {
			t.Error("an error was not returned")
		}
	}
	if failed != 2 {
		t.Errorf("a failed read was kept: %d reads for 2 gets", failed)
	}
}
