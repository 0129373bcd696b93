/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/test/cluster"
)

// runOf is what a test saw of one run of an application: its submission and pods.
type runOf struct {
	submission string
	pods       []corev1.Pod
}

func (f *fixture) running(name string) runOf {
	f.t.Helper()
	app, pods := f.waitRunning(name)
	r := runOf{submission: app.Status.SubmissionID}
	for _, p := range pods {
		if p.Labels[v1beta2.LabelSubmissionID] == r.submission {
			r.pods = append(r.pods, p)
		}
	}
	return r
}

// requireUntouched fails unless name still runs the same submission with the same pods, all
// running.
func (f *fixture) requireUntouched(name string, was runOf) {
	f.t.Helper()
	app := f.get(name)
	if app.Status.SubmissionID != was.submission || app.Annotations[scheduler.AnnotationPreempted] != "" {
		f.t.Errorf("%s: submission %s (preempted mark %q), want %s untouched", name, app.Status.SubmissionID,
			app.Annotations[scheduler.AnnotationPreempted], was.submission)
	}
	for _, p := range was.pods {
		got := &corev1.Pod{}
		if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(&p), got); err != nil || got.UID != p.UID || got.Status.Phase != corev1.PodRunning {
			f.t.Errorf("%s: pod %s of the run is no longer running (%v, %s)", name, p.Name, err, got.Status.Phase)
		}
	}
}

// requirePreempted waits until the whole run was of name is gone (every pod of it), the
// application is back in its queue with a new submission, and a Preempted event says why
// (with every part of want).
func (f *fixture) requirePreempted(name string, was runOf, want ...string) {
	f.t.Helper()
	f.waitFor(name+" to be preempted: every pod gone, queued again", func() (bool, error) {
		app := f.get(name)
		if app.Status.SubmissionID == was.submission {
			return false, nil
		}
		for _, p := range f.pods(name) {
			if p.Labels[v1beta2.LabelSubmissionID] == was.submission {
				return false, nil
			}
		}
		return true, nil
	})
	var events eventsv1.EventList
	if err := f.c.List(f.ctx, &events, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	var seen []string
	for _, e := range events.Items {
		if e.Regarding.Name != name || e.Reason != "Preempted" {
			continue
		}
		seen = append(seen, e.Note)
		all := true
		for _, w := range want {
			all = all && strings.Contains(e.Note, w)
		}
		if all {
			return
		}
	}
	f.t.Errorf("no Preempted event of %s saying %q; Preempted events: %q", name, want, seen)
}

// TestPreemption: a queue full of low-priority applications and a high-priority one waiting.
// Without --gang-preemption nothing is evicted. With it, the lowest-priority application is
// evicted whole (driver and every executor), with an event saying why, the other is left
// alone, the high-priority one runs, and the evicted one reruns once there is room again.
// (Distinct priorities make the victim certain: creation times, the tie-break among equals,
// have a resolution of a second.)
func TestPreemption(t *testing.T) {
	f := newFixture(t)
	f.node("n", "4", nil)
	queue := f.queue("q", schedv1alpha1.QueueSpec{Quota: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}})
	lower, lowest, high := f.priorityClass("lower", 2), f.priorityClass("lowest", 1), f.priorityClass("high", 100)
	f.startOperator()

	// Two low-priority applications of 2 CPU fill the queue's quota and the node.
	f.create(withPriority(f.app("low-1", queue, 1), lower))
	low1 := f.running("low-1")
	f.create(withPriority(f.app("low-2", queue, 1), lowest))
	low2 := f.running("low-2")
	f.create(withPriority(runFor(f.app("high", queue, 1), 3), high))
	f.waitWaiting("high", "over quota in queue "+queue)
	f.requireUntouched("low-1", low1)
	f.requireUntouched("low-2", low2)

	peak := f.watchQueue(queue)
	f.startOperator("--gang-preemption")
	f.requirePreempted("low-2", low2, fmt.Sprintf("preempted by %s/high (priority 100) in queue %s: its priority 1 is lower", f.ns, queue))
	f.requireUntouched("low-1", low1)
	f.waitState("high", v1beta2.ApplicationStateCompleted)
	f.requireUntouched("low-1", low1)
	// Room again: the evicted application runs a new submission.
	if again := f.running("low-2"); again.submission == low2.submission {
		t.Errorf("low-2 reran submission %s", again.submission)
	}
	if cpu, apps := peak(); cpu.Cmp(resource.MustParse("4")) > 0 || apps > 2 {
		t.Errorf("queue status showed %s cpu in %d applications admitted at once; its quota is 4 cpu, room for 2", cpu.String(), apps)
	}
}

// TestPreemptionOfBorrowers: two queues share a parent's quota; one borrows the other's
// share while that is idle. When the other queue's application comes, with --gang-preemption,
// a whole application of the borrowing queue (its lowest-priority one) is evicted to give the
// quota back, though both have a higher priority than the preemptor, with an event saying why.
func TestPreemptionOfBorrowers(t *testing.T) {
	f := newFixture(t)
	f.node("n", "6", nil)
	cpu := func(n string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(n)}
	}
	f.queue("org", schedv1alpha1.QueueSpec{Quota: cpu("4")})
	a := f.queue("a", schedv1alpha1.QueueSpec{Parent: "org", Quota: cpu("2")})
	b := f.queue("b", schedv1alpha1.QueueSpec{Parent: "org", Quota: cpu("2")})
	lower, lowest := f.priorityClass("lower", 2), f.priorityClass("lowest", 1)
	f.startOperator("--gang-preemption")

	// b runs 4 CPU: its own 2 and the 2 of a's share that a does not use.
	f.create(withPriority(f.app("b-1", b, 1), lower))
	b1 := f.running("b-1")
	f.create(withPriority(f.app("b-2", b, 1), lowest))
	b2 := f.running("b-2")
	f.create(runFor(f.app("a-1", a, 1), 3))
	f.requirePreempted("b-2", b2, fmt.Sprintf("preempted by %s/a-1: queue %s takes back its own quota that queue %s borrowed", f.ns, a, b))
	f.requireUntouched("b-1", b1)
	f.waitState("a-1", v1beta2.ApplicationStateCompleted)
	f.running("b-2")
}

// withPriority gives the application's pods, and so the application, the PriorityClass class.
func withPriority(app *v1beta2.SparkApplication, class string) *v1beta2.SparkApplication {
	app.Spec.Driver.PriorityClassName = ptr.To(class)
	app.Spec.Executor.PriorityClassName = ptr.To(class)
	return app
}

// TestPreemptionWaitsForVictimsToEnd: the victim's pods take a grace period to end, as a
// kubelet's do (kwok has none). The preemptor's driver is created only once they are gone: else
// kube-scheduler, finding no room on its planned node, would preempt pods there itself, by pod
// priority, here those of an application of another queue that the gang scheduler never
// chose. That application is left whole.
func TestPreemptionWaitsForVictimsToEnd(t *testing.T) {
	f := newFixture(t)
	f.node("n", "6", nil)
	queue := f.queue("q", schedv1alpha1.QueueSpec{Quota: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}})
	other := f.queue("other", schedv1alpha1.QueueSpec{})
	lower, lowest, high := f.priorityClass("lower", 2), f.priorityClass("lowest", 1), f.priorityClass("high", 100)
	cluster.TerminationGrace(t, f.c, f.ns, 5*time.Second)
	f.startOperator("--gang-preemption")

	// The node is full: bystander (priority 0, its own queue) and two of queue q.
	f.create(f.app("bystander", other, 1))
	bystander := f.running("bystander")
	f.create(withPriority(f.app("low-1", queue, 1), lower))
	f.running("low-1")
	f.create(withPriority(f.app("low-2", queue, 1), lowest))
	low2 := f.running("low-2")
	for _, p := range low2.pods {
		patch := client.MergeFrom(p.DeepCopy())
		p.Finalizers = append(p.Finalizers, cluster.GraceFinalizer)
		if err := f.c.Patch(f.ctx, &p, patch); err != nil {
			t.Fatal(err)
		}
	}
	f.create(withPriority(runFor(f.app("high", queue, 1), 3), high))
	// Admitted, it waits for the victim's pods to end, and says so.
	f.waitFor("high to wait for its victim's pods", func() (bool, error) {
		return strings.Contains(waiting(f.get("high")), "waiting for room for the driver"), nil
	})
	f.requirePreempted("low-2", low2, "preempted by "+f.ns+"/high")
	f.waitState("high", v1beta2.ApplicationStateCompleted)
	f.requireUntouched("bystander", bystander)
}
