/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang"
)

func cpuNode(name, cpu string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}
}

func TestBeyondFit(t *testing.T) {
	// Two nodes of 8 CPU; executors of 2 CPU (2000 millicores).
	nodes := []corev1.Node{cpuNode("n1", "8"), cpuNode("n2", "8")}
	started := func(name string, at int, missing int) startedApp {
		return startedApp{name: name, since: t0.Add(time.Duration(at) * time.Second), missing: missing, executorCPU: 2000}
	}
	placeholder := stepPod("x", "", "ph", "n2", corev1.PodRunning, "8", t0)
	placeholder.Labels[gang.LabelPlaceholder] = "x"
	deleting := stepPod("y", v1beta2.SparkRoleExecutor, "gone", "n2", corev1.PodRunning, "8", t0)
	deleting.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
	cases := []struct {
		name    string
		pods    []corev1.Pod
		started []startedApp
		want    []string
	}{{
		name:    "whole gangs that fit together",
		started: []startedApp{started("a", 1, 4), started("b", 2, 4)},
	}, {
		name:    "the later of two that do not fit together",
		started: []startedApp{started("b", 2, 6), started("a", 1, 6)},
		want:    []string{"b"},
	}, {
		name:    "fragmentation: room in total but not on a node",
		pods:    []corev1.Pod{stepPod("c", v1beta2.SparkRoleDriver, "c-driver", "n1", corev1.PodRunning, "7", t0), stepPod("d", v1beta2.SparkRoleDriver, "d-driver", "n2", corev1.PodRunning, "7", t0)},
		started: []startedApp{started("a", 1, 1)},
		want:    []string{"a"},
	}, {
		name:    "one that does not fit takes no room from one started later",
		started: []startedApp{started("a", 1, 5), started("b", 2, 9), started("c", 3, 3)},
		want:    []string{"b"},
	}, {
		name:    "bound executors need no room",
		pods:    []corev1.Pod{stepPod("a", v1beta2.SparkRoleExecutor, "a-1", "n1", corev1.PodRunning, "8", t0)},
		started: []startedApp{started("a", 1, 0), started("b", 2, 4)},
	}, {
		name:    "placeholders and pods on their way out hold no room",
		pods:    []corev1.Pod{placeholder, deleting},
		started: []startedApp{started("a", 1, 8)},
	}, {
		name: "finished pods hold no room; pods of unknown nodes are not counted",
		pods: []corev1.Pod{stepPod("e", v1beta2.SparkRoleDriver, "e-driver", "n1", corev1.PodSucceeded, "8", t0),
			stepPod("f", v1beta2.SparkRoleDriver, "f-driver", "elsewhere", corev1.PodRunning, "8", t0)},
		started: []startedApp{started("a", 1, 8)},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// What the pods take of each node, as the stand-in's tally counts it.
			got := beyondFit(nodes, newJobs().tally(t0, tc.pods).nodeUsed, tc.started)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("beyondFit (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStepCountsBeyondFit: the stand-in's step counts an application whose driver runs while its
// executors cannot be placed, and forgets it once they are bound.
func TestStepCountsBeyondFit(t *testing.T) {
	nodes := []corev1.Node{cpuNode("n1", "4")}
	app := stepApp("a", 2, "100")
	app.Spec.Executor.Cores = ptr.To[int32](2)
	other := stepPod("o", v1beta2.SparkRoleDriver, "o-driver", "n1", corev1.PodRunning, "2", t0)
	j := newJobs()
	_, obs := j.step(t0, time.Second, []v1beta2.SparkApplication{app}, []corev1.Pod{driverOf("a", corev1.PodRunning), other}, nodes)
	if obs.beyondFit != 1 || j.beyondFitPeak != 1 || len(j.everBeyondFit) != 1 {
		t.Fatalf("driver running with 4 CPU of executors missing on 1 CPU free: beyondFit %d, peak %d, ever %v; want 1, 1, [a]", obs.beyondFit, j.beyondFitPeak, j.everBeyondFit)
	}
	if want := "2 executors of 2000m not bound, driver running 0.0s; free 1000m in all, at most 1000m on a node"; !strings.Contains(j.everBeyondFit["a"], want) {
		t.Errorf("what the step saw of a: %q; want it to say %q", j.everBeyondFit["a"], want)
	}
	// The other driver gone: its executors are bound, nothing is missing.
	pods := []corev1.Pod{driverOf("a", corev1.PodRunning),
		executorOf("a", "1", "n1", corev1.PodRunning, t0), executorOf("a", "2", "n1", corev1.PodPending, t0)}
	if _, obs = j.step(t0.Add(time.Second), time.Second, []v1beta2.SparkApplication{app}, pods, nodes); obs.beyondFit != 0 || j.beyondFitPeak != 1 {
		t.Errorf("executors bound: beyondFit %d, peak %d; want 0, 1", obs.beyondFit, j.beyondFitPeak)
	}
}

// TestEndingJobNeedsNoRoom: an application whose end is under way (its executors being deleted,
// its driver not told yet) does not need its executors' room again: its executors going are
// not missing ones. Only if the end fails, and is asked for again, does it count as before.
func TestEndingJobNeedsNoRoom(t *testing.T) {
	nodes := []corev1.Node{cpuNode("n1", "6")}
	app := stepApp("a", 2, "1")
	app.Spec.Executor.Cores = ptr.To[int32](2)
	j := newJobs()
	acts, _ := j.step(t0, time.Second, []v1beta2.SparkApplication{app}, []corev1.Pod{driverOf("a", corev1.PodRunning)}, nodes)
	if len(acts) != 1 || acts[0].kind != startExecutors {
		t.Fatalf("actions %+v; want its executors started", acts)
	}
	j.done(acts[0], true)
	running := []corev1.Pod{driverOf("a", corev1.PodRunning), executorOf("a", "1", "n1", corev1.PodRunning, t0)}
	acts, _ = j.step(t0.Add(time.Second), time.Second, []v1beta2.SparkApplication{app}, running, nodes)
	if len(acts) != 1 || acts[0].kind != endJob {
		t.Fatalf("actions %+v; want its job ended", acts)
	}
	// Its executors deleted, the room they free taken by another driver: a run starting again
	// would not fit, but this one is ending.
	gone := executorOf("a", "1", "n1", corev1.PodRunning, t0)
	gone.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
	ending := []corev1.Pod{driverOf("a", corev1.PodRunning), gone, stepPod("o", v1beta2.SparkRoleDriver, "o-driver", "n1", corev1.PodRunning, "2", t0)}
	if _, obs := j.step(t0.Add(2*time.Second), time.Second, []v1beta2.SparkApplication{app}, ending, nodes); obs.beyondFit != 0 || len(j.everBeyondFit) != 0 {
		t.Errorf("ending: beyondFit %d, ever %v; want none", obs.beyondFit, j.everBeyondFit)
	}
	j.done(acts[0], false)
	if _, obs := j.step(t0.Add(3*time.Second), time.Second, []v1beta2.SparkApplication{app}, ending, nodes); obs.beyondFit != 1 {
		t.Errorf("its end failed, its executors gone: beyondFit %d; want 1", obs.beyondFit)
	}
}
