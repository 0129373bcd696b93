/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
)

// cpuQuota is a queue spec limiting cpu.
func cpuQuota(cpu string) schedv1alpha1.QueueSpec {
	return schedv1alpha1.QueueSpec{Quota: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
}

// admission waits until app holds a reservation for its current submission and returns it.
func (f *fixture) admission(name string) gang.Reservation {
	f.t.Helper()
	var res gang.Reservation
	f.waitFor(name+" to be admitted", func() (bool, error) {
		app := f.get(name)
		if app.Status.AppState.State == v1beta2.ApplicationStateFailed {
			return false, fmt.Errorf("%s failed: %s", name, app.Status.AppState.ErrorMessage)
		}
		r, ok := reservationOf(f.c, app)
		res = r
		return ok && r.SubmissionID == app.Status.SubmissionID, nil
	})
	return res
}

// TestFullNodeNotChosen: a node whose pod slots are all taken is not planned for any member,
// though its cpu would fit the gang most tightly; the gang is planned, and runs, on the node
// with slots free.
func TestFullNodeNotChosen(t *testing.T) {
	f := newFixture(t)
	full := f.nodeWith("full", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourcePods: resource.MustParse("2")}, nil)
	roomy := f.node("roomy", "16", nil)
	for i := range 2 { // two pods of no application fill full's slots, leaving 2 cpu free
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: fmt.Sprintf("filler-%d", i)},
			Spec: corev1.PodSpec{NodeName: full, Containers: []corev1.Container{{Name: "c", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("7")}}}}},
		}
		if err := f.c.Create(f.ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	f.startOperator()
	f.create(f.app("pods", "default", 1))
	res := f.admission("pods")
	if res.Driver != roomy || fmt.Sprint(res.Executors) != fmt.Sprint(map[string]int32{roomy: 1}) {
		t.Fatalf("planned driver on %s, executors %v; want all on %s (%s has no pod slot left)", res.Driver, res.Executors, roomy, full)
	}
	f.waitRunning("pods")
}

// TestRejectedThenEdited: an application rejected because its gang exceeds its queue's quota
// fails with the reason; edited to fit, it is judged again as it now is, admitted and run.
func TestRejectedThenEdited(t *testing.T) {
	f := newFixture(t)
	f.node("n", "16", nil)
	q := f.queue("q", cpuQuota("3"))
	f.startOperator()
	f.create(f.app("big", q, 3)) // 1 + 3 = 4 cpu > 3
	app := f.waitState("big", v1beta2.ApplicationStateFailed)
	if want := fmt.Sprintf("needs 4 cpu, more than queue %s ever allows", q); !strings.Contains(app.Status.AppState.ErrorMessage, want) {
		t.Fatalf("rejected with %q; want %q", app.Status.AppState.ErrorMessage, want)
	}
	rejected := app.Status.SubmissionID
	f.update("big", func(a *v1beta2.SparkApplication) { a.Spec.Executor.Instances = ptr.To[int32](2) }) // 3 cpu: fits
	f.waitFor("the edit to start a new submission", func() (bool, error) {
		id := f.get("big").Status.SubmissionID
		return id != "" && id != rejected, nil
	})
	f.admission("big")
	f.waitRunning("big")
}

// TestDynamicAllocationWithinQuota: executors Spark adds beyond the gang start only within
// the queue's quota, onto free capacity of any node they may use (here a node the plan did
// not name, as the planned one is full); once running they count in the queue's admitted
// usage, so the next gang waits over quota; when one ends, the next waiting executor starts.
func TestDynamicAllocationWithinQuota(t *testing.T) {
	f := newFixture(t)
	small := f.node("a-small", "3", nil) // the gang (3 cpu) fills it: planned there, tightest
	big := f.node("b-big", "16", nil)
	q := f.queue("q", cpuQuota("4")) // the gang and one extra executor of 1 cpu
	f.startOperator()
	app := f.app("dyn", q, 2)
	app.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, InitialExecutors: ptr.To[int32](2), MaxExecutors: ptr.To[int32](6)}
	f.create(app)
	if res := f.admission("dyn"); res.Driver != small || res.Executors[small] != 2 {
		t.Fatalf("planned driver on %s, executors %v; want the whole gang on %s", res.Driver, res.Executors, small)
	}
	_, pods := f.waitRunning("dyn")
	driver := &pods[slices.IndexFunc(pods, func(p corev1.Pod) bool { return p.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleDriver })]

	// Spark asks for two more executors.
	template, err := executors.TemplateOf(f.ctx, f.c, driver)
	if err != nil {
		t.Fatal(err)
	}
	extra, err := executors.Create(f.ctx, f.c, driver, 2, executors.Options{FirstID: 3, Cores: 1, MemoryMiB: 512, Template: template})
	if err != nil {
		t.Fatal(err)
	}
	runsOn := func(pod *corev1.Pod, node string) func() (bool, error) {
		return func() (bool, error) {
			if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
				return false, err
			}
			if n := pod.Annotations[gang.AnnotationNode]; n != "" && n != node {
				return false, fmt.Errorf("%s released to %s, want %s", pod.Name, n, node)
			}
			return pod.Spec.NodeName == node && pod.Status.Phase == corev1.PodRunning, nil
		}
	}
	f.waitFor(extra[0].Name+" to run on the free node", runsOn(extra[0], big))
	f.waitFor("the queue to count the extra executor", func() (bool, error) {
		cpu := f.queueStatus(q).Admitted[corev1.ResourceCPU]
		return cpu.Cmp(resource.MustParse("4")) == 0, nil
	})
	f.create(f.app("next", q, 1))
	f.waitWaiting("next", "over quota in queue "+q)
	if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(extra[1]), extra[1]); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(extra[1].Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == gang.GateExecutor }) {
		t.Fatalf("%s released beyond the queue's quota (to %q)", extra[1].Name, extra[1].Annotations[gang.AnnotationNode])
	}

	// Spark removes the extra executor: the waiting one may start in its place.
	if err := executors.Delete(f.ctx, f.c, extra[0]); err != nil {
		t.Fatal(err)
	}
	f.waitFor(extra[1].Name+" to run once the first extra ended", runsOn(extra[1], big))
	f.requireNotAdmitted("next")
}

// TestEveryWaitingReasonCurrent: with many more applications waiting than one cycle refreshes
// (maxReasonWakes), every one shows its own current reason (the head over quota, each other
// behind exactly the applications before it); when the running application ends and everyone
// moves up, every shown reason follows, each written with its new place alone, not once per
// cycle. (How many writes a long queue costs over time is the scale benchmark's
// reason_refreshes; the pace of refreshes, the unit tests' on a clock of their own.)
func TestEveryWaitingReasonCurrent(t *testing.T) {
	const n = 130
	f := newFixture(t)
	f.node("n", "16", nil)
	q := f.queue("q", cpuQuota("2")) // one application of 2 cpu at a time
	f.startOperator("--submission-workers", "8")
	f.create(f.app("first", q, 1))
	f.waitRunning("first")
	for i := range n {
		f.create(f.app(fmt.Sprintf("w-%03d", i), q, 1))
	}
	var order []string // the waiting applications in queue order
	var list v1beta2.SparkApplicationList
	if err := f.c.List(f.ctx, &list, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b v1beta2.SparkApplication) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, a := range list.Items {
		if a.Name != "first" {
			order = append(order, a.Name)
		}
	}
	f.waitFor(fmt.Sprintf("all %d waiting applications to show their reason", n), f.showPlaces(q, order, 0))

	// Count the reason writes while everyone moves up one place: watch from now until a
	// sentinel change made once all show their new place (a watch delivers in order).
	if err := f.c.List(f.ctx, &list, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	last := map[string]string{}
	for _, a := range list.Items {
		last[a.Name] = waiting(&a)
	}
	wc, err := client.NewWithWatch(cluster.Config(t), client.Options{Scheme: f.c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(f.ctx, &v1beta2.SparkApplicationList{}, client.InNamespace(f.ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := f.c.Delete(f.ctx, f.get("first")); err != nil {
		t.Fatal(err)
	}
	f.waitFor("every waiting application to show its new place", f.showPlaces(q, order, 1))
	const sentinel = "test.sparkop.dev/sentinel"
	f.update(order[n-1], func(a *v1beta2.SparkApplication) { metav1.SetMetaDataAnnotation(&a.ObjectMeta, sentinel, "1") })
	written := reasonsWritten(t, w, last, sentinel)
	// The queue moved once (one admission): each reason written in between is the one the
	// application shows at the end, its new place; none of a place it no longer has, and
	// none written twice, however many cycles ran.
	total := 0
	for _, name := range order[1:] {
		total += len(written[name])
		for _, why := range written[name] {
			if why != last[name] {
				t.Errorf("%s's reason written %d times for one move: %q; want only its new place, %q", name, len(written[name]), written[name], last[name])
				break
			}
		}
	}
	t.Logf("%d reason writes for %d applications moving up once", total, n-1)
}

// showPlaces reports whether the applications of order (queue q's waiting ones, in queue
// order), from skip on, each show the reason they have: the first over quota, each other behind
// those before it.
func (f *fixture) showPlaces(q string, order []string, skip int) func() (bool, error) {
	return func() (bool, error) {
		var list v1beta2.SparkApplicationList
		if err := f.c.List(f.ctx, &list, client.InNamespace(f.ns)); err != nil {
			return false, err
		}
		shown := map[string]string{}
		for _, a := range list.Items {
			shown[a.Name] = waiting(&a)
		}
		for i, name := range order[skip:] {
			want := "over quota in queue " + q + ":"
			if i == 1 {
				want = fmt.Sprintf("behind 1 application in queue %s;", q)
			} else if i > 1 {
				want = fmt.Sprintf("behind %d applications in queue %s;", i, q)
			}
			if !strings.HasPrefix(shown[name], want) {
				return false, nil
			}
		}
		return true, nil
	}
}

// reasonsWritten reads w until an application carries the sentinel annotation and returns the
// reasons written for each application, in order: each shown reason that differs from the one
// before (last, which it updates).
func reasonsWritten(t *testing.T, w watch.Interface, last map[string]string, sentinel string) map[string][]string {
	t.Helper()
	written := map[string][]string{}
	timeout := time.After(time.Minute)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch ended")
			}
			a, isApp := ev.Object.(*v1beta2.SparkApplication)
			if !isApp {
				continue
			}
			if why := waiting(a); why != last[a.Name] {
				last[a.Name] = why
				written[a.Name] = append(written[a.Name], why)
			}
			if a.Annotations[sentinel] != "" {
				return written
			}
		case <-timeout:
			t.Fatal("timed out watching for the sentinel change")
		}
	}
}
