/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestAdoptsDriverOfInterruptedSubmission plays an operator killed between creating a driver
// and recording it: the restarted controller must complete that same attempt (the submitter
// finds the driver and creates no other), and must replace a driver left over from an older
// submission.
func TestAdoptsDriverOfInterruptedSubmission(t *testing.T) {
	c := cluster.Client(t)
	ctx := context.Background()
	e := &env{c: c, ns: cluster.Namespace(t, c, "sparkapp-adopt"),
		sub: &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}, gate: &gate{}}}

	recorded := func(name, submissionID, podSubmissionID string) (types.NamespacedName, types.UID) {
		app := newApp(e.ns, name)
		key := e.create(t, app)
		app.Status.SubmissionID = submissionID
		app.Status.LastSubmissionAttemptTime = metav1.Now()
		if err := c.Status().Update(ctx, app); err != nil {
			t.Fatal(err)
		}
		pod := driverPod(app, app.DriverPodName(), podSubmissionID, "spark-"+podSubmissionID)
		if err := c.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		return key, pod.UID
	}
	adopted, adoptedUID := recorded("adopted", "sub-1", "sub-1")
	replaced, staleUID := recorded("replaced", "sub-2", "sub-old")

	startManager(t, []string{e.ns}, e.sub, Options{DriverPodGracePeriod: 2 * time.Second})

	app := e.waitState(t, adopted, v1beta2.ApplicationStateRunning, 20*time.Second)
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(e.ns), client.MatchingLabels{v1beta2.LabelAppName: "adopted"}); err != nil {
		t.Fatal(err)
	}
	got := []any{e.sub.count(adopted), len(pods.Items), app.Status.SubmissionID, int(app.Status.SubmissionAttempts),
		app.Status.SparkApplicationID}
	if diff := cmp.Diff([]any{1, 1, "sub-1", 1, "spark-sub-1"}, got); diff != "" {
		t.Errorf("[submissions, driver pods, submissionID, submissionAttempts, sparkApplicationId] (-want +got):\n%s", diff)
	}
	if pods.Items[0].UID != adoptedUID {
		t.Error("the adopted driver pod was replaced")
	}

	app = e.waitState(t, replaced, v1beta2.ApplicationStateRunning, 20*time.Second)
	pod := e.driver(t, app)
	got = []any{e.sub.count(replaced), app.Status.SubmissionID, pod.Labels[v1beta2.LabelSubmissionID], pod.UID != staleUID}
	if diff := cmp.Diff([]any{1, "sub-2", "sub-2", true}, got); diff != "" {
		t.Errorf("[submissions, submissionID, driver's submission, driver replaced] (-want +got):\n%s", diff)
	}
}

// TestInterruptedSubmissionRenamedNeverRunsTwoDrivers: the operator stopped between creating
// a driver and recording it, and spec.driver.podName was changed meanwhile. The driver of the
// recorded submission is found by its label, stopped, and only then is the application
// submitted again under the new name; a watch sees at most one driver at any moment.
func TestInterruptedSubmissionRenamedNeverRunsTwoDrivers(t *testing.T) {
	c := cluster.Client(t)
	ctx := context.Background()
	e := &env{c: c, ns: cluster.Namespace(t, c, "sparkapp-renamed"),
		sub: &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}, gate: &gate{}}}
	app := newApp(e.ns, "renamed")
	key := e.create(t, app)
	app.Status.SubmissionID = "sub-1"
	app.Status.LastSubmissionAttemptTime = metav1.Now()
	if err := c.Status().Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	old := driverPod(app, app.DriverPodName(), "sub-1", "spark-sub-1")
	old.Finalizers = []string{cluster.GraceFinalizer}
	cluster.TerminationGrace(t, c, e.ns, 3*time.Second)
	if err := c.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	e.update(t, key, func(a *v1beta2.SparkApplication) { a.Spec.Driver.PodName = ptr.To("renamed-new-driver") })

	mostDrivers := watchDrivers(t, e.ns)

	startManager(t, []string{e.ns}, e.sub, Options{DriverPodGracePeriod: 2 * time.Second})
	running := e.waitFor(t, key, 20*time.Second, "running under the new name", func(a *v1beta2.SparkApplication) bool {
		return a.Status.AppState.State == v1beta2.ApplicationStateRunning && a.Status.DriverInfo.PodName == "renamed-new-driver"
	})
	if most := mostDrivers(); most != 1 || running.Status.SubmissionID == "sub-1" {
		t.Errorf("at most %d drivers at once (want 1); submission %s (want a new one)", most, running.Status.SubmissionID)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(old), &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("the interrupted submission's driver %s: %v, want it deleted", old.Name, err)
	}
}

// staleCache serves one SparkApplication as an older version of it, as an informer cache that
// has not yet seen the latest write does.
type staleCache struct {
	client.Client
	stale *v1beta2.SparkApplication
}

func (c staleCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if app, ok := obj.(*v1beta2.SparkApplication); ok && key == client.ObjectKeyFromObject(c.stale) {
		c.stale.DeepCopyInto(app)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// List reads the API server as the cache would; the cache's index of pods by application is
// the cache's own, and the labels select the same pods without it.
func (c staleCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	var api []client.ListOption
	for _, o := range opts {
		if _, ok := o.(client.MatchingFields); !ok {
			api = append(api, o)
		}
	}
	return c.Client.List(ctx, list, api...)
}

// TestStaleCacheNeverDeletesTheNewDriver: the submission pool has recorded submission "new"
// and created its driver, but the reconcile's cache still shows the previous submission. The
// driver must not be mistaken for a leftover and deleted.
func TestStaleCacheNeverDeletesTheNewDriver(t *testing.T) {
	c := cluster.Client(t)
	ctx := context.Background()
	ns := cluster.Namespace(t, c, "sparkapp-stale")
	app := newApp(ns, "stale")
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	stale := app.DeepCopy()
	stale.Status.SubmissionID = "old"
	app.Status.SubmissionID = "new"
	app.Status.LastSubmissionAttemptTime = metav1.Now()
	if err := c.Status().Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	pod := driverPod(app, app.DriverPodName(), "new", "spark-new")
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}

	r := &Reconciler{
		Client:    staleCache{Client: c, stale: stale},
		APIReader: c,
		Scheme:    cluster.Scheme,
		Recorder:  &events.FakeRecorder{},
		Pool:      submission.NewPool(1, func(context.Context, types.NamespacedName) error { return nil }),
	}
	res, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(app)})
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if res.RequeueAfter <= 0 {
		t.Errorf("a reconcile on a stale cache should come back soon; got %+v", res)
	}
	got := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
		t.Fatalf("the new driver is gone: %v", err)
	}
	if !got.DeletionTimestamp.IsZero() {
		t.Fatal("the new driver was deleted")
	}
}

// TestUnrecordedSubmissionRenamedNeverRunsTwoDrivers: the pool creates a driver, writing the
// outcome fails, and spec.driver.podName changes before the pool retries. The retry must not
// complete the attempt under the new name beside the first driver, and the new submission
// must not start while the first driver is still terminating: there is never more than one.
func TestUnrecordedSubmissionRenamedNeverRunsTwoDrivers(t *testing.T) {
	c := cluster.Client(t)
	ctx := context.Background()
	e := &env{c: c, ns: cluster.Namespace(t, c, "sparkapp-unrecorded"),
		sub: &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}, gate: &gate{}, finalizers: []string{cluster.GraceFinalizer}}}

	// A deleted driver stays terminating for a while, as under a kubelet's grace period.
	cluster.TerminationGrace(t, c, e.ns, 3*time.Second)
	mostDrivers := watchDrivers(t, e.ns)

	var injected atomic.Bool
	failFirstSubmitted := func(obj client.Object) error {
		app, ok := obj.(*v1beta2.SparkApplication)
		if !ok || app.Namespace != e.ns || app.Status.AppState.State != v1beta2.ApplicationStateSubmitted ||
			!injected.CompareAndSwap(false, true) {
			return nil
		}
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			latest := &v1beta2.SparkApplication{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(app), latest); err != nil {
				return err
			}
			latest.Spec.Driver.PodName = ptr.To("unrecorded-new-driver")
			return c.Update(ctx, latest)
		}); err != nil {
			return err
		}
		return apierrors.NewServiceUnavailable("injected: the outcome of the submission is not written")
	}
	startManagerWith(t, []string{e.ns}, e.sub, Options{DriverPodGracePeriod: 2 * time.Second}, func(r *Reconciler) {
		r.Client = &failingStatusClient{Client: r.Client, fail: failFirstSubmitted}
	})
	key := e.create(t, newApp(e.ns, "unrecorded"))
	e.waitFor(t, key, 30*time.Second, "running under the new name", func(a *v1beta2.SparkApplication) bool {
		return a.Status.AppState.State == v1beta2.ApplicationStateRunning && a.Status.DriverInfo.PodName == "unrecorded-new-driver"
	})
	most := mostDrivers()
	if !injected.Load() {
		t.Fatal("the status write was never failed: the test did not exercise the retry")
	}
	if most != 1 {
		t.Errorf("at most %d drivers at once, terminating ones included, want 1", most)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "unrecorded-driver"}, &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("the unrecorded submission's driver: %v, want it deleted", err)
	}
}

// watchDrivers watches the driver pods of namespace ns; the function it returns stops the
// watch and reports the most drivers that existed at once. A driver counts until it is gone,
// terminating included: until then its process may still run.
func watchDrivers(t *testing.T, ns string) func() int {
	t.Helper()
	w, err := kubernetes.NewForConfigOrDie(cluster.Config(t)).CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{
		LabelSelector: v1beta2.SparkRoleLabel + "=" + v1beta2.SparkRoleDriver})
	if err != nil {
		t.Fatal(err)
	}
	live, most := map[string]bool{}, 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			switch ev.Type {
			case watch.Added:
				live[pod.Name] = true
			case watch.Deleted:
				delete(live, pod.Name)
			}
			most = max(most, len(live))
		}
	}()
	return func() int {
		w.Stop()
		<-done
		return most
	}
}

// failingStatusClient lets a test fail chosen status writes.
type failingStatusClient struct {
	client.Client
	fail func(client.Object) error
}

func (f *failingStatusClient) Status() client.SubResourceWriter {
	return &failingStatusWriter{SubResourceWriter: f.Client.Status(), fail: f.fail}
}

type failingStatusWriter struct {
	client.SubResourceWriter
	fail func(client.Object) error
}

func (w *failingStatusWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if err := w.fail(obj); err != nil {
		return err
	}
	return w.SubResourceWriter.Update(ctx, obj, opts...)
}
