/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"fmt"
	"slices"
	"strings"
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
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/test/cluster"
)

func TestController(t *testing.T) {
	c := cluster.Client(t)
	tests := []struct {
		name string
		run  func(t *testing.T, e *env)
	}{
		{"happy path", testHappyPath},
		{"driver fails", testDriverFails},
		{"on failure retries", testOnFailureRetries},
		{"always reruns", testAlwaysReruns},
		{"submission failure retries", testSubmissionFailure},
		{"spec change reruns", testSpecChange},
		{"ttl neither reruns and deletes", testTTL},
		{"suspend and resume", testSuspendResume},
		{"kueue's count told without a suspension", testKueueCountUnsuspended},
		{"driver deleted", testDriverDeleted},
		{"executors", testExecutors},
		{"batch schedulers", testBatchSchedulers},
		{"waking batch scheduler", testWakingScheduler},
	}
	sub := &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}, gate: &gate{}, waking: &wakingGate{}}
	envs := make([]*env, len(tests))
	var namespaces []string
	for i := range tests {
		envs[i] = &env{c: c, ns: cluster.Namespace(t, c, "sparkapp"), sub: sub}
		namespaces = append(namespaces, envs[i].ns)
	}
	pool := newPoolRecorder()
	startManagerWith(t, namespaces, sub, Options{DriverPodGracePeriod: 2 * time.Second, MaxTrackedExecutors: 3,
		QueuedRetryInterval: time.Second}, func(r *Reconciler) {
		pool.use(r)
		for _, e := range envs {
			e.r, e.pool = r, pool
		}
	})
	t.Run("group", func(t *testing.T) {
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				tt.run(t, envs[i])
			})
		}
	})
}

func testHappyPath(t *testing.T, e *env) {
	key := e.create(t, newApp(e.ns, "pi", driverAnnotations(annRunSeconds, "2")))
	e.waitState(t, key, v1beta2.ApplicationStateRunning, 20*time.Second)
	app := e.waitState(t, key, v1beta2.ApplicationStateCompleted, 20*time.Second)
	e.waitEvents(t, "pi", ReasonSubmitted, ReasonDriverRunning, ReasonDriverCompleted)

	got := struct {
		Submissions, Executions  int32
		PodName, SubmissionLabel string
		Calls                    int
		Completed                bool
	}{
		app.Status.SubmissionAttempts, app.Status.ExecutionAttempts,
		app.Status.DriverInfo.PodName, e.driver(t, app).Labels[v1beta2.LabelSubmissionID],
		e.sub.count(key), meta.IsStatusConditionTrue(app.Status.Conditions, ConditionCompleted),
	}
	want := got
	want.Submissions, want.Executions, want.PodName, want.SubmissionLabel, want.Calls, want.Completed =
		1, 1, "pi-driver", app.Status.SubmissionID, 1, true
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if app.Status.SparkApplicationID == "" || app.Status.TerminationTime.IsZero() || app.Status.LastSubmittedSpecHash == "" {
		t.Errorf("status misses sparkApplicationId, terminationTime or lastSubmittedSpecHash: %+v", app.Status)
	}
}

func testDriverFails(t *testing.T, e *env) {
	key := e.create(t, newApp(e.ns, "fails", driverAnnotations(annRunSeconds, "1", annExitCode, "3")))
	app := e.waitState(t, key, v1beta2.ApplicationStateFailed, 20*time.Second)
	if msg := app.Status.AppState.ErrorMessage; !strings.Contains(msg, "exit code 3") {
		t.Errorf("errorMessage %q does not give the exit code", msg)
	}
	e.waitEvents(t, "fails", ReasonDriverFailed)
	if !meta.IsStatusConditionTrue(app.Status.Conditions, ConditionFailed) {
		t.Errorf("conditions %+v: want Failed true", app.Status.Conditions)
	}
}

func testOnFailureRetries(t *testing.T, e *env) {
	key := e.create(t, newApp(e.ns, "retry", driverAnnotations(annExitCode, "1"), func(a *v1beta2.SparkApplication) {
		a.Spec.RestartPolicy = v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyOnFailure,
			OnFailureRetries: ptr.To[int32](1), OnFailureRetryInterval: ptr.To[int64](1)}
	}))
	app := e.waitState(t, key, v1beta2.ApplicationStateFailed, 30*time.Second)
	if diff := cmp.Diff([]int{2, 2}, []int{int(app.Status.ExecutionAttempts), e.sub.count(key)}); diff != "" {
		t.Errorf("[executionAttempts, submissions] (-want +got):\n%s", diff)
	}
}

func testAlwaysReruns(t *testing.T, e *env) {
	key := e.create(t, newApp(e.ns, "always", driverAnnotations(annRunSeconds, "1"), func(a *v1beta2.SparkApplication) {
		a.Spec.RestartPolicy = v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyAlways, OnFailureRetryInterval: ptr.To[int64](1)}
	}))
	first := e.waitState(t, key, v1beta2.ApplicationStateRunning, 20*time.Second).Status.SubmissionID
	e.waitFor(t, key, 30*time.Second, "a second run", func(a *v1beta2.SparkApplication) bool {
		return a.Status.AppState.State == v1beta2.ApplicationStateRunning && a.Status.SubmissionID != first
	})
	if err := e.c.Delete(context.Background(), e.get(t, key)); err != nil {
		t.Fatal(err)
	}
}

func testSubmissionFailure(t *testing.T, e *env) {
	key := e.create(t, newApp(e.ns, "badsubmit", func(a *v1beta2.SparkApplication) {
		a.Annotations = map[string]string{annSubmitError: "main class not found"}
		a.Spec.RestartPolicy = v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyOnFailure,
			OnSubmissionFailureRetries: ptr.To[int32](1), OnSubmissionFailureRetryInterval: ptr.To[int64](1)}
	}))
	app := e.waitState(t, key, v1beta2.ApplicationStateFailed, 30*time.Second)
	got := []any{app.Status.AppState.ErrorMessage, int(app.Status.SubmissionAttempts), e.sub.count(key)}
	if diff := cmp.Diff([]any{"main class not found", 2, 2}, got); diff != "" {
		t.Errorf("[message, submissionAttempts, submissions] (-want +got):\n%s", diff)
	}
	e.waitEvents(t, "badsubmit", ReasonSubmissionFailed)

	// A bad submitter annotation fails the submission with a message that says so.
	key = e.create(t, newApp(e.ns, "badmode", func(a *v1beta2.SparkApplication) {
		a.Annotations = map[string]string{v1beta2.AnnotationSubmitter: "carrier-pigeon"}
	}))
	app = e.waitState(t, key, v1beta2.ApplicationStateFailed, 20*time.Second)
	if msg := app.Status.AppState.ErrorMessage; !strings.Contains(msg, "carrier-pigeon") {
		t.Errorf("errorMessage %q does not name the bad submitter", msg)
	}
}

func testSpecChange(t *testing.T, e *env) {
	key := e.create(t, newApp(e.ns, "change"))
	before := e.waitState(t, key, v1beta2.ApplicationStateRunning, 20*time.Second)
	oldPod := e.driver(t, before)
	e.update(t, key, func(a *v1beta2.SparkApplication) { a.Spec.Arguments = []string{"1000"} })
	after := e.waitFor(t, key, 30*time.Second, "a new run", func(a *v1beta2.SparkApplication) bool {
		return a.Status.AppState.State == v1beta2.ApplicationStateRunning && a.Status.SubmissionID != before.Status.SubmissionID
	})
	newPod := e.driver(t, after)
	if newPod.UID == oldPod.UID || newPod.Labels[v1beta2.LabelSubmissionID] != after.Status.SubmissionID {
		t.Errorf("driver pod was not replaced by one of submission %s", after.Status.SubmissionID)
	}
	if after.Status.ExecutionAttempts != 1 {
		t.Errorf("executionAttempts = %d after invalidation, want 1", after.Status.ExecutionAttempts)
	}
	e.waitEvents(t, "change", "Invalidated")
}

func testTTL(t *testing.T, e *env) {
	key := e.create(t, newApp(e.ns, "ttl", driverAnnotations(annRunSeconds, "3")))
	running := e.waitState(t, key, v1beta2.ApplicationStateRunning, 20*time.Second)
	// With a time to live of one second COMPLETED may last less than a poll, or be cut short
	// under load: a watch from the running application on sees every state it passes through.
	history := watchApp(t, key, running.ResourceVersion)
	// Changing only the time to live must not rerun: the same run completes, then the
	// application goes away.
	e.update(t, key, func(a *v1beta2.SparkApplication) { a.Spec.TimeToLiveSeconds = ptr.To[int64](1) })
	cluster.Eventually(t, 40*time.Second, "deletion after the TTL", func() (bool, error) {
		err := e.c.Get(context.Background(), key, &v1beta2.SparkApplication{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	seen, deleted := history.untilDeleted()
	var last *v1beta2.SparkApplication
	for _, a := range seen {
		if a.Status.SubmissionID != "" && a.Status.SubmissionID != running.Status.SubmissionID ||
			a.Status.ExecutionAttempts > 1 {
			t.Errorf("changing timeToLiveSeconds reran the application: submission %s → %s, executionAttempts %d",
				running.Status.SubmissionID, a.Status.SubmissionID, a.Status.ExecutionAttempts)
		}
		if a.Status.AppState.State != "" {
			last = a
		}
	}
	if last == nil || last.Status.AppState.State != v1beta2.ApplicationStateCompleted {
		t.Fatalf("the application was deleted in state %+v, want COMPLETED", last)
	}
	// Deleted once its time to live had passed since it ended, not before (terminationTime is
	// stored in whole seconds, rounded down).
	if ended := last.Status.TerminationTime.Time; ended.IsZero() || deleted.Before(ended.Add(time.Second)) {
		t.Errorf("deleted at %v, want no sooner than a second after it ended at %v", deleted, ended)
	}
}

// appWatch is a watch of one application from a resourceVersion on: every version it sees, in
// order, until the application is deleted (the last then being the deleted object) or the
// watch is stopped.
type appWatch struct {
	w       watch.Interface
	stopped atomic.Bool // by stop, which may end the stream in an error
	done    chan struct{}
	mu      sync.Mutex // guards seen until done
	seen    []*v1beta2.SparkApplication
	deleted time.Time // when the watch saw the deletion
}

func watchApp(t *testing.T, key types.NamespacedName, resourceVersion string) *appWatch {
	t.Helper()
	c, err := client.NewWithWatch(cluster.Config(t), client.Options{Scheme: cluster.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(context.Background(), &v1beta2.SparkApplicationList{}, client.InNamespace(key.Namespace),
		client.MatchingFields{"metadata.name": key.Name}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: resourceVersion}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	a := &appWatch{w: w, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for ev := range w.ResultChan() {
			if app, ok := ev.Object.(*v1beta2.SparkApplication); ok {
				a.mu.Lock()
				a.seen = append(a.seen, app)
				a.mu.Unlock()
			}
			switch ev.Type {
			case watch.Deleted:
				a.deleted = time.Now()
				return
			case watch.Error:
				if !a.stopped.Load() {
					t.Errorf("watching %s: %v", key, ev.Object)
				}
				return
			}
		}
	}()
	return a
}

// untilDeleted waits for the watch to see the application deleted (or to end).
func (a *appWatch) untilDeleted() ([]*v1beta2.SparkApplication, time.Time) {
	<-a.done
	return a.seen, a.deleted
}

// stopAt ends the watch once it has seen the application at resourceVersion (read after what
// the test waited for): every write up to then is in what it returns.
func (a *appWatch) stopAt(t *testing.T, resourceVersion string) []*v1beta2.SparkApplication {
	t.Helper()
	cluster.Eventually(t, 20*time.Second, "the watch to see resourceVersion "+resourceVersion, func() (bool, error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		return slices.ContainsFunc(a.seen, func(app *v1beta2.SparkApplication) bool { return app.ResourceVersion == resourceVersion }), nil
	})
	return a.stop()
}

// stop ends the watch now.
func (a *appWatch) stop() []*v1beta2.SparkApplication {
	a.stopped.Store(true)
	a.w.Stop()
	<-a.done
	return a.seen
}

func testSuspendResume(t *testing.T, e *env) {
	key := e.create(t, newApp(e.ns, "sus"))
	running := e.waitState(t, key, v1beta2.ApplicationStateRunning, 20*time.Second)
	e.update(t, key, func(a *v1beta2.SparkApplication) { a.Spec.Suspend = ptr.To(true) })
	suspended := e.waitState(t, key, v1beta2.ApplicationStateSuspended, 20*time.Second)
	err := e.c.Get(context.Background(), types.NamespacedName{Namespace: e.ns, Name: suspended.DriverPodName()}, &corev1.Pod{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("driver pod of a suspended application: %v, want not found", err)
	}
	e.update(t, key, func(a *v1beta2.SparkApplication) { a.Spec.Suspend = ptr.To(false) })
	e.waitFor(t, key, 20*time.Second, "running again", func(a *v1beta2.SparkApplication) bool {
		return a.Status.AppState.State == v1beta2.ApplicationStateRunning && a.Status.SubmissionID != running.Status.SubmissionID
	})
	e.waitEvents(t, "sus", ReasonSuspended, ReasonResuming)
}

// testKueueCountUnsuspended: an application labelled for Kueue that the operator never sees
// suspended (Kueue admitted it first) is told of Kueue's short count once, at its first
// submission; one not labelled for Kueue is not.
func testKueueCountUnsuspended(t *testing.T, e *env) {
	queued := e.create(t, newApp(e.ns, "admitted", func(a *v1beta2.SparkApplication) {
		a.Labels = map[string]string{scheduler.LabelKueueQueueName: "spark"}
	}))
	plain := e.create(t, newApp(e.ns, "plain"))
	e.waitState(t, queued, v1beta2.ApplicationStateRunning, 20*time.Second)
	e.waitState(t, plain, v1beta2.ApplicationStateRunning, 20*time.Second)
	e.waitEvents(t, "admitted", ReasonSubmitted, "KueueCountShort")
	e.waitEvents(t, "plain", ReasonSubmitted)
	if got := e.events(t, "plain"); slices.Contains(got, "KueueCountShort") {
		t.Errorf("an application not labelled for Kueue was told of Kueue's count: %v", got)
	}
}

func testDriverDeleted(t *testing.T, e *env) {
	key := e.create(t, newApp(e.ns, "lost"))
	app := e.waitState(t, key, v1beta2.ApplicationStateRunning, 20*time.Second)
	if err := e.c.Delete(context.Background(), e.driver(t, app)); err != nil {
		t.Fatal(err)
	}
	app = e.waitState(t, key, v1beta2.ApplicationStateFailed, 20*time.Second)
	if diff := cmp.Diff("driver pod lost-driver not found", app.Status.AppState.ErrorMessage); diff != "" {
		t.Errorf("errorMessage (-want +got):\n%s", diff)
	}
}

func testExecutors(t *testing.T, e *env) {
	key := e.create(t, newApp(e.ns, "execs"))
	app := e.waitState(t, key, v1beta2.ApplicationStateRunning, 20*time.Second)
	driver := e.driver(t, app)
	failing := map[string]string{annExitCode: "1"}
	pods := []*corev1.Pod{
		executorPod(driver, 1, app.Status.SubmissionID, nil),
		executorPod(driver, 2, app.Status.SubmissionID, nil),
		executorPod(driver, 3, app.Status.SubmissionID, nil),
		executorPod(driver, 4, app.Status.SubmissionID, nil),
		executorPod(driver, 5, app.Status.SubmissionID, failing),
		// A failed executor of an earlier submission must neither show nor raise an event.
		executorPod(driver, 9, "an-earlier-submission", failing),
	}
	for _, p := range pods {
		if err := e.c.Create(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]v1beta2.ExecutorState{
		"execs-exec-3": v1beta2.ExecutorStateRunning,
		"execs-exec-4": v1beta2.ExecutorStateRunning,
		"execs-exec-5": v1beta2.ExecutorStateFailed,
	}
	e.waitFor(t, key, 20*time.Second, "executor states", func(a *v1beta2.SparkApplication) bool {
		return cmp.Equal(want, a.Status.ExecutorState)
	})
	e.waitEvents(t, "execs", ReasonExecutorFailed)
	n := 0
	for _, r := range e.events(t, "execs") {
		if r == ReasonExecutorFailed {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d ExecutorFailed events, want 1", n)
	}
}

func testBatchSchedulers(t *testing.T, e *env) {
	key := e.create(t, newApp(e.ns, "queued", func(a *v1beta2.SparkApplication) { a.Spec.BatchScheduler = ptr.To("gate") }))
	e.waitFor(t, key, 20*time.Second, "Queued condition", func(a *v1beta2.SparkApplication) bool {
		c := meta.FindStatusCondition(a.Status.Conditions, ConditionQueued)
		return c != nil && c.Status == metav1.ConditionTrue && c.Message == "waiting for 2 free cores" &&
			a.Status.AppState.State == v1beta2.ApplicationStateNew
	})
	if n := e.sub.count(key); n != 0 {
		t.Errorf("a held application was submitted %d times", n)
	}
	e.sub.gate.open.Store(true)
	app := e.waitState(t, key, v1beta2.ApplicationStateRunning, 20*time.Second)
	if c := meta.FindStatusCondition(app.Status.Conditions, ConditionQueued); c != nil {
		t.Errorf("Queued condition %+v left on a running application", c)
	}

	// A scheduler this operator lacks is never taken for none: the application fails, naming
	// the enabled ones.
	key = e.create(t, newApp(e.ns, "volcano", func(a *v1beta2.SparkApplication) { a.Spec.BatchScheduler = ptr.To("volcano") }))
	app = e.waitState(t, key, v1beta2.ApplicationStateFailed, 20*time.Second)
	if want := `batch scheduler "volcano" is not enabled in this operator (enabled: [gate waking])`; app.Status.AppState.ErrorMessage != want {
		t.Errorf("error message %q, want %q", app.Status.AppState.ErrorMessage, want)
	}
	if n := e.sub.count(key); n != 0 {
		t.Errorf("an application naming a missing scheduler was submitted %d times", n)
	}
	e.waitEvents(t, "volcano", "SparkApplicationRejected")
}

// A scheduler that wakes the applications it holds is asked, and not polled: the pool's
// handlings that held the application ask for no retry, and a reconcile of the held
// application (once the controller's cache has it as stored) asks for no requeue and writes
// nothing. Woken, the application runs; finished, it is released. One that holds every new run
// with the same reason (scheduler.Pending) has it shown by the write that records the run, and
// its hold writes nothing more.
func testWakingScheduler(t *testing.T, e *env) {
	g := e.sub.waking
	app := newApp(e.ns, "woken", driverAnnotations(annRunSeconds, "1"),
		func(a *v1beta2.SparkApplication) { a.Spec.BatchScheduler = ptr.To("waking") })
	key := e.create(t, app)
	history := watchApp(t, key, app.ResourceVersion)
	returned := e.pool.waitDone(t, key, "the scheduler asked", func() bool { return g.admits.Load() > 0 })
	for _, err := range returned {
		if err != nil {
			t.Errorf("the pool's handling of a held application returned %v: a waking scheduler's application is offered again", err)
		}
	}
	if res := e.reconcileAsStored(t, e.r, key); res != (ctrl.Result{}) {
		t.Errorf("a reconcile of a held application returned %+v: a waking scheduler's application is reconciled again", res)
	}
	held := history.stopAt(t, e.get(t, key).ResourceVersion)
	if len(held) != 1 || held[0].Status.SubmissionID == "" || !meta.IsStatusConditionTrue(held[0].Status.Conditions, ConditionQueued) {
		var seen []string
		for _, a := range held {
			seen = append(seen, fmt.Sprintf("submission %q, conditions %+v", a.Status.SubmissionID, a.Status.Conditions))
		}
		t.Errorf("held, the application was written %d times, want once (recorded and shown held): %v", len(held), seen)
	}
	g.open.Store(true)
	g.waker.Wake(scheduler.ApplicationKey(key))
	e.waitState(t, key, v1beta2.ApplicationStateCompleted, 30*time.Second)
	e.waitFor(t, key, 20*time.Second, "release", func(*v1beta2.SparkApplication) bool { return g.releases.Load() > 0 })
}
