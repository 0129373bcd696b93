/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/test/cluster"
)

// pluginScheduler is a batch scheduler for the plug-in point's tests: it holds each run (with
// retryAfter, if set) until the test opens it, and admits every run after that; it counts the
// asks, and records the runs it releases.
type pluginScheduler struct {
	name       string
	retryAfter time.Duration
	open       atomic.Bool
	asks       atomic.Int32

	mu       sync.Mutex
	released []string // runs
}

func newPluginScheduler(name string) *pluginScheduler {
	return &pluginScheduler{name: name}
}

func (p *pluginScheduler) Name() string { return p.name }

func (p *pluginScheduler) Admit(context.Context, scheduler.Workload) (scheduler.Decision, error) {
	p.asks.Add(1)
	if !p.open.Load() {
		return scheduler.Decision{Reason: "held until opened", RetryAfter: p.retryAfter}, nil
	}
	return scheduler.Decision{Admit: true}, nil
}

func (p *pluginScheduler) Release(_ context.Context, w scheduler.Workload) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.Run != "" && (len(p.released) == 0 || p.released[len(p.released)-1] != w.Run) {
		p.released = append(p.released, w.Run)
	}
	return nil
}

func (p *pluginScheduler) releasedRuns() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.released...)
}

// managedScheduler is a pluginScheduler with a manager: before scheduler.Waking, having one
// was taken to mean it wakes what it holds.
type managedScheduler struct{ *pluginScheduler }

func (managedScheduler) SetupWithManager(manager.Manager, scheduler.Waker) error { return nil }

// wakingScheduler says it wakes what it holds, but never does: only its RetryAfter brings a
// held run back.
type wakingScheduler struct{ *pluginScheduler }

func (wakingScheduler) WakesHeldWorkloads() bool { return true }

// objectsScheduler wants a ConfigMap per run.
type objectsScheduler struct{ *pluginScheduler }

func (objectsScheduler) RunObjects(_ context.Context, w scheduler.Workload, _ scheduler.Decision) ([]client.Object, error) {
	return []client.Object{&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: w.Key.Name + "-group", Labels: map[string]string{"run": w.Run}},
		Data:       map[string]string{"queue": w.Queue},
	}}, nil
}

// seeingSubmitter records, for each application, whether its run's ConfigMap existed when its
// driver was created, then submits as fakeSubmitter does.
type seeingSubmitter struct {
	*fakeSubmitter
	mu   sync.Mutex
	seen map[string]bool
}

func (s *seeingSubmitter) Submit(ctx context.Context, app *v1beta2.SparkApplication, a submission.Attempt) (submission.Result, error) {
	err := s.c.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: app.Name + "-group"}, &corev1.ConfigMap{})
	s.mu.Lock()
	s.seen[app.Name] = err == nil
	s.mu.Unlock()
	return s.fakeSubmitter.Submit(ctx, app, a)
}

// TestBatchSchedulerPlugIn drives applications through the plug-in point's capabilities.
func TestBatchSchedulerPlugIn(t *testing.T) {
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "plugin")
	e := &env{c: c, ns: ns}
	managed := managedScheduler{newPluginScheduler("managed")}
	waking := wakingScheduler{newPluginScheduler("waking-retry")}
	waking.retryAfter = 500 * time.Millisecond
	first, second := newPluginScheduler("first"), newPluginScheduler("second")
	wakingHold := wakingScheduler{newPluginScheduler("waking-hold")}
	objects := objectsScheduler{newPluginScheduler("objects")}
	objects.open.Store(true)
	sub := &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}, gate: &gate{}}
	e.sub = sub
	seeing := &seeingSubmitter{fakeSubmitter: sub, seen: map[string]bool{}}
	pool := newPoolRecorder()
	const queuedRetryInterval = time.Second
	var rec *Reconciler
	startManagerWith(t, []string{ns}, sub, Options{DriverPodGracePeriod: 2 * time.Second, QueuedRetryInterval: queuedRetryInterval},
		func(r *Reconciler) {
			r.Submitters[submission.ModeNative] = seeing
			for _, s := range []scheduler.Interface{managed, waking, wakingHold, alwaysAdmits{first}, alwaysAdmits{second}, objects} {
				r.Schedulers.Register(s)
			}
			pool.use(r)
			rec = r
		})
	// Item: a held application is asked again unless its scheduler says it wakes it, whatever
	// else it implements; a decision's RetryAfter brings it back even then.
	t.Run("held applications are asked again", func(t *testing.T) {
		testHeldAskedAgain(t, e, pool, []askedAgain{
			{s: managed.pluginScheduler, retry: queuedRetryInterval},
			{s: waking.pluginScheduler, retry: waking.retryAfter},
		})
	})

	// Item: release goes to the scheduler that admitted the run, though the spec names another
	// since; the new run is admitted by the one it names, and recorded.
	t.Run("release reaches the scheduler that admitted the run", func(t *testing.T) {
		key := e.create(t, newApp(ns, "switch", batchScheduler("first")))
		app := e.waitState(t, key, v1beta2.ApplicationStateRunning, 20*time.Second)
		run1 := app.Status.SubmissionID
		if app.Status.BatchScheduler != "first" {
			t.Errorf("status.batchScheduler %q, want first", app.Status.BatchScheduler)
		}
		e.update(t, key, batchScheduler("second"))
		app = e.waitFor(t, key, 30*time.Second, "a new run admitted by second", func(a *v1beta2.SparkApplication) bool {
			return a.Status.SubmissionID != run1 && a.Status.AppState.State == v1beta2.ApplicationStateRunning
		})
		if app.Status.BatchScheduler != "second" {
			t.Errorf("status.batchScheduler %q, want second", app.Status.BatchScheduler)
		}
		if diff := cmp.Diff([]string{run1}, first.releasedRuns()); diff != "" {
			t.Errorf("runs released by first (-want +got):\n%s", diff)
		}
		if got := second.releasedRuns(); len(got) != 0 {
			t.Errorf("second released runs %v it never admitted", got)
		}
	})

	// Item: a scheduler's objects for the run exist before the driver, owned by the
	// application, and go with it.
	t.Run("objects for the run", func(t *testing.T) { testRunObjects(t, e, seeing) })

	t.Run("a wake spent while an old driver terminates", func(t *testing.T) {
		testWakeSpentOnOldDriver(t, e, wakingHold.pluginScheduler, func(key types.NamespacedName) { rec.Pool.Enqueue(key) })
	})
}

// testWakeSpentOnOldDriver: an application held queued by a scheduler that wakes what it holds
// is woken once and admitted while an older driver of it still terminates: its submission waits,
// and once that driver is gone the application runs, with no second wake.
func testWakeSpentOnOldDriver(t *testing.T, e *env, s *pluginScheduler, wake func(types.NamespacedName)) {
	ctx := context.Background()
	key := e.create(t, newApp(e.ns, "held", batchScheduler(s.name)))
	e.waitFor(t, key, 20*time.Second, "held queued", func(a *v1beta2.SparkApplication) bool {
		return meta.IsStatusConditionTrue(a.Status.Conditions, ConditionQueued)
	})
	// An older driver, terminating: bound to a node that does not exist, so that no simulated
	// kubelet ends it, and kept by its finalizer until the test lets it go (deleted with no
	// grace, it is gone then, without a kubelet's word).
	old := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "held-old-driver", Finalizers: []string{"test.sparkop.dev/hold"},
			Labels: map[string]string{v1beta2.LabelAppName: "held", v1beta2.LabelLaunchedByOperator: "true",
				v1beta2.SparkRoleLabel: v1beta2.SparkRoleDriver, v1beta2.LabelSubmissionID: "an-older-run"}},
		Spec: corev1.PodSpec{NodeName: "no-such-node", Containers: []corev1.Container{{Name: "spark-kubernetes-driver", Image: "spark"}}},
	}
	if err := e.c.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Delete(ctx, old, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	asked := s.asks.Load()
	s.open.Store(true)
	wake(key)
	cluster.Eventually(t, 20*time.Second, "the woken application asked again", func() (bool, error) {
		return s.asks.Load() > asked, nil
	})
	if err := e.c.Patch(ctx, old, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))); err != nil {
		t.Fatal(err)
	}
	e.waitState(t, key, v1beta2.ApplicationStateRunning, 20*time.Second)
}

// askedAgain is an application held by s, which asks to offer it again after retry.
type askedAgain struct {
	s     *pluginScheduler
	retry time.Duration
}

// testHeldAskedAgain: the pool's handlings that held each application ask to be offered it
// again, after the controller's interval or the decision's RetryAfter; opened, its scheduler
// admits it when it comes back, with nothing else about it changed.
func testHeldAskedAgain(t *testing.T, e *env, pool *poolRecorder, cases []askedAgain) {
	for _, tt := range cases {
		key := e.create(t, newApp(e.ns, tt.s.name, batchScheduler(tt.s.name)))
		returned := pool.waitDone(t, key, tt.s.name+" asked", func() bool { return tt.s.asks.Load() > 0 })
		if err := retriedAfter(returned, tt.retry); err != nil {
			t.Errorf("%s: %v", tt.s.name, err)
		}
		tt.s.open.Store(true)
		e.waitState(t, key, v1beta2.ApplicationStateRunning, 20*time.Second)
	}
}

// testRunObjects: a scheduler's objects for the run exist before the driver, owned by the
// application, and go with it.
func testRunObjects(t *testing.T, e *env, seeing *seeingSubmitter) {
	c, ns := e.c, e.ns
	key := e.create(t, newApp(ns, "grouped", batchScheduler("objects"),
		func(a *v1beta2.SparkApplication) {
			a.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To("q1")}
		}))
	app := e.waitState(t, key, v1beta2.ApplicationStateRunning, 20*time.Second)
	seeing.mu.Lock()
	seen := seeing.seen["grouped"]
	seeing.mu.Unlock()
	if !seen {
		t.Error("the driver was created before the scheduler's ConfigMap existed")
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "grouped-group"}, cm); err != nil {
		t.Fatal(err)
	}
	want := []metav1.OwnerReference{{APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication", Name: "grouped", UID: app.UID}}
	if diff := cmp.Diff(want, cm.OwnerReferences); diff != "" {
		t.Errorf("owners (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"queue": "q1"}, cm.Data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	if err := c.Delete(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 60*time.Second, "the ConfigMap to go with the application", func() (bool, error) {
		err := c.Get(context.Background(), client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// batchScheduler names the application's batch scheduler.
func batchScheduler(name string) func(*v1beta2.SparkApplication) {
	return func(a *v1beta2.SparkApplication) { a.Spec.BatchScheduler = ptr.To(name) }
}

// alwaysAdmits admits every run at once, releasing as its pluginScheduler records.
type alwaysAdmits struct{ *pluginScheduler }

func (alwaysAdmits) Admit(context.Context, scheduler.Workload) (scheduler.Decision, error) {
	return scheduler.Decision{Admit: true}, nil
}

// TestReleaseBySchedulerNoLongerEnabled: an operator restarted without the scheduler that
// admitted a run releases nothing when the run ends, and says so in a warning event; the
// application goes on through its states.
func TestReleaseBySchedulerNoLongerEnabled(t *testing.T) {
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "plugin")
	sub := &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}, gate: &gate{}}
	e := &env{c: c, ns: ns, sub: sub}
	opts := Options{DriverPodGracePeriod: 2 * time.Second, QueuedRetryInterval: time.Second}
	names := func(a *v1beta2.SparkApplication) { a.Spec.BatchScheduler = ptr.To("first") }
	var key types.NamespacedName
	t.Run("an operator with first admits the run", func(t *testing.T) {
		startManagerWith(t, []string{ns}, sub, opts, func(r *Reconciler) {
			r.Schedulers.Register(alwaysAdmits{newPluginScheduler("first")})
		})
		key = e.create(t, newApp(ns, "orphan", names))
		app := e.waitState(t, key, v1beta2.ApplicationStateRunning, 20*time.Second)
		if app.Status.BatchScheduler != "first" {
			t.Fatalf("status.batchScheduler %q, want first", app.Status.BatchScheduler)
		}
	}) // its manager stops here
	startManager(t, []string{ns}, sub, opts) // without first
	e.update(t, key, func(a *v1beta2.SparkApplication) { a.Spec.Suspend = ptr.To(true) })
	e.waitState(t, key, v1beta2.ApplicationStateSuspended, 30*time.Second)
	e.waitEvents(t, "orphan", "BatchSchedulerNotEnabled")
}
