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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/internal/eventnote"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/test/cluster"
)

const (
	annRunSeconds  = "kwok.sparkop.dev/run-seconds"
	annExitCode    = "kwok.sparkop.dev/exit-code"
	annSubmitError = "test.sparkop.dev/submit-error"
)

// fakeSubmitter creates the driver pod the way a real submitter would (labels, owner, the
// driver's annotations), counting its calls per application. An application annotated with
// annSubmitError fails to submit with that message.
type fakeSubmitter struct {
	gate   *gate       // the batch scheduler of the test's manager
	waking *wakingGate // one that wakes the applications it holds
	c      client.Client
	mu     sync.Mutex
	calls  map[types.NamespacedName]int
	// finalizers are put on every driver it creates (see cluster.TerminationGrace).
	finalizers []string
}

func (f *fakeSubmitter) count(key types.NamespacedName) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[key]
}

func (f *fakeSubmitter) Submit(ctx context.Context, app *v1beta2.SparkApplication, a submission.Attempt) (submission.Result, error) {
	f.mu.Lock()
	f.calls[client.ObjectKeyFromObject(app)]++
	f.mu.Unlock()
	if msg := app.Annotations[annSubmitError]; msg != "" {
		return submission.Result{}, &submission.Error{Message: msg}
	}
	appID := "spark-" + a.SubmissionID
	pod := driverPod(app, a.DriverPodName, a.SubmissionID, appID)
	pod.Finalizers = f.finalizers
	if err := f.c.Create(ctx, pod); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return submission.Result{}, err
		}
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return submission.Result{}, err
		}
		if pod.Labels[v1beta2.LabelSubmissionID] != a.SubmissionID {
			return submission.Result{}, fmt.Errorf("pod %s belongs to another submission", pod.Name)
		}
	}
	return submission.Result{SparkApplicationID: appID, DriverPodName: pod.Name}, nil
}

func driverPod(app *v1beta2.SparkApplication, name, submissionID, appID string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: app.Namespace,
			Labels: map[string]string{
				v1beta2.LabelAppName:            app.Name,
				v1beta2.LabelLaunchedByOperator: "true",
				v1beta2.LabelSubmissionID:       submissionID,
				v1beta2.SparkRoleLabel:          v1beta2.SparkRoleDriver,
				v1beta2.SparkAppSelectorLabel:   appID,
			},
			Annotations: app.Spec.Driver.Annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1beta2.GroupVersion.String(), Kind: "SparkApplication",
				Name: app.Name, UID: app.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{NodeSelector: app.Spec.Driver.NodeSelector, SchedulerName: ptr.Deref(app.Spec.Driver.SchedulerName, ""),
			Containers: []corev1.Container{{Name: v1beta2.SparkDriverContainerName, Image: "spark:test"}}},
	}
	if cores := app.Spec.Driver.Cores; cores != nil {
		pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(int64(*cores), resource.DecimalSI)}
	}
	return pod
}

func executorPod(driver *corev1.Pod, id int, submissionID string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-exec-%d", driver.Labels[v1beta2.LabelAppName], id), Namespace: driver.Namespace,
			Labels: map[string]string{
				v1beta2.LabelAppName:            driver.Labels[v1beta2.LabelAppName],
				v1beta2.LabelLaunchedByOperator: "true",
				v1beta2.LabelSubmissionID:       submissionID,
				v1beta2.SparkRoleLabel:          v1beta2.SparkRoleExecutor,
				v1beta2.SparkExecutorIDLabel:    strconv.Itoa(id),
				v1beta2.SparkAppSelectorLabel:   driver.Labels[v1beta2.SparkAppSelectorLabel],
			},
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: driver.Name, UID: driver.UID,
				Controller: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: v1beta2.SparkExecutorContainerName, Image: "spark:test"}}},
	}
}

// startManager runs the controller for the given namespaces until the test ends, with the
// pod cache restricted to what the operator launched, as the operator's is.
func startManager(t *testing.T, namespaces []string, sub *fakeSubmitter, opts Options) {
	t.Helper()
	startManagerWith(t, namespaces, sub, opts, nil)
}

// startManagerWith is startManager with a chance to change the reconciler before it starts.
func startManagerWith(t *testing.T, namespaces []string, sub *fakeSubmitter, opts Options, change func(*Reconciler)) {
	t.Helper()
	nsConfig := map[string]cache.Config{}
	for _, ns := range namespaces {
		nsConfig[ns] = cache.Config{}
	}
	mgr, err := ctrl.NewManager(cluster.Config(t), ctrl.Options{
		Scheme:                 cluster.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Cache: cache.Options{
			DefaultNamespaces: nsConfig,
			ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {
				Label: labels.SelectorFromSet(labels.Set{v1beta2.LabelLaunchedByOperator: "true"}),
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mgr = eventnote.Manager(mgr) // as the operator's (cmd/spark-operator)
	r := &Reconciler{
		Client:      mgr.GetClient(),
		APIReader:   mgr.GetAPIReader(),
		Scheme:      mgr.GetScheme(),
		Recorder:    mgr.GetEventRecorder(ControllerName),
		Submitters:  map[submission.Mode]submission.Submitter{submission.ModeNative: sub},
		DefaultMode: submission.ModeNative,
		Schedulers:  scheduler.NewRegistry(sub.gate),
		Options:     opts,
	}
	if sub.waking != nil {
		r.Schedulers.Register(sub.waking)
	}
	if change != nil {
		change(r)
	}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	cluster.StartManager(t, mgr)
}

// gate is a batch scheduler that holds every application back until the test opens it.
type gate struct{ open atomic.Bool }

func (g *gate) Name() string { return "gate" }

func (g *gate) Admit(context.Context, scheduler.Workload) (scheduler.Decision, error) {
	if g.open.Load() {
		return scheduler.Decision{Admit: true}, nil
	}
	return scheduler.Decision{Reason: "waiting for 2 free cores"}, nil
}

func (g *gate) Release(context.Context, scheduler.Workload) error { return nil }

// wakingGate holds applications back until opened, then wakes them: it gets its Waker from
// scheduler.WithManager and says it wakes what it holds (scheduler.Waking); it counts how
// often it is asked and asked to release.
type wakingGate struct {
	open             atomic.Bool
	admits, releases atomic.Int32
	waker            scheduler.Waker
}

func (g *wakingGate) Name() string { return "waking" }

func (g *wakingGate) Admit(context.Context, scheduler.Workload) (scheduler.Decision, error) {
	g.admits.Add(1)
	if g.open.Load() {
		return scheduler.Decision{Admit: true}, nil
	}
	return scheduler.Decision{Reason: "waiting to be woken"}, nil
}

func (g *wakingGate) Release(context.Context, scheduler.Workload) error {
	g.releases.Add(1)
	return nil
}

func (g *wakingGate) WakesHeldWorkloads() bool { return true }

// PendingReason: a new run shows it is held from the write that records it (scheduler.Pending).
func (g *wakingGate) PendingReason() string { return "waiting to be woken" }

func (g *wakingGate) SetupWithManager(_ manager.Manager, w scheduler.Waker) error {
	g.waker = w
	return nil
}

func newApp(ns, name string, mutate ...func(*v1beta2.SparkApplication)) *v1beta2.SparkApplication {
	app := &v1beta2.SparkApplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1beta2.SparkApplicationSpec{
			Type:                v1beta2.SparkApplicationTypeScala,
			SparkVersion:        "3.5.3",
			MainClass:           ptr.To("org.apache.spark.examples.SparkPi"),
			MainApplicationFile: "local:///opt/spark/examples/jars/spark-examples.jar",
			Image:               ptr.To("spark:3.5.3"),
		},
	}
	for _, m := range mutate {
		m(app)
	}
	return app
}

func driverAnnotations(kv ...string) func(*v1beta2.SparkApplication) {
	return func(app *v1beta2.SparkApplication) {
		app.Spec.Driver.Annotations = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			app.Spec.Driver.Annotations[kv[i]] = kv[i+1]
		}
	}
}

type env struct {
	c   client.Client
	ns  string
	sub *fakeSubmitter
	// r and pool are the test's reconciler and what its submission pool did, where the test
	// set them (TestController).
	r    *Reconciler
	pool *poolRecorder
}

func (e *env) create(t *testing.T, app *v1beta2.SparkApplication) types.NamespacedName {
	t.Helper()
	if err := e.c.Create(context.Background(), app); err != nil {
		t.Fatalf("creating application: %v", err)
	}
	return client.ObjectKeyFromObject(app)
}

func (e *env) get(t *testing.T, key types.NamespacedName) *v1beta2.SparkApplication {
	t.Helper()
	app := &v1beta2.SparkApplication{}
	if err := e.c.Get(context.Background(), key, app); err != nil {
		t.Fatalf("getting %s: %v", key, err)
	}
	return app
}

// waitFor polls the application until cond holds and returns it.
func (e *env) waitFor(t *testing.T, key types.NamespacedName, timeout time.Duration, what string,
	cond func(*v1beta2.SparkApplication) bool) *v1beta2.SparkApplication {
	t.Helper()
	app := &v1beta2.SparkApplication{}
	defer func() {
		if t.Failed() {
			t.Logf("%s: last status seen: %+v", key, app.Status)
		}
	}()
	cluster.Eventually(t, timeout, what, func() (bool, error) {
		if err := e.c.Get(context.Background(), key, app); err != nil {
			return false, err
		}
		return cond(app), nil
	})
	return app
}

func (e *env) waitState(t *testing.T, key types.NamespacedName, state v1beta2.ApplicationStateType, timeout time.Duration) *v1beta2.SparkApplication {
	t.Helper()
	return e.waitFor(t, key, timeout, "state "+string(state), func(a *v1beta2.SparkApplication) bool {
		return a.Status.AppState.State == state
	})
}

func (e *env) update(t *testing.T, key types.NamespacedName, mutate func(*v1beta2.SparkApplication)) {
	t.Helper()
	cluster.Eventually(t, 10*time.Second, "spec update", func() (bool, error) {
		app := e.get(t, key)
		mutate(app)
		err := e.c.Update(context.Background(), app)
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// events returns the reasons of the events recorded for the application, in order.
func (e *env) events(t *testing.T, name string) []string {
	t.Helper()
	list := &eventsv1.EventList{}
	if err := e.c.List(context.Background(), list, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		if ev.Regarding.Kind == "SparkApplication" && ev.Regarding.Name == name {
			out = append(out, ev.Reason)
		}
	}
	return out
}

func (e *env) waitEvents(t *testing.T, name string, reasons ...string) {
	t.Helper()
	cluster.Eventually(t, 15*time.Second, fmt.Sprintf("events %v", reasons), func() (bool, error) {
		have := map[string]bool{}
		for _, r := range e.events(t, name) {
			have[r] = true
		}
		for _, r := range reasons {
			if !have[r] {
				return false, nil
			}
		}
		return true, nil
	})
}

func (e *env) driver(t *testing.T, app *v1beta2.SparkApplication) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	if err := e.c.Get(context.Background(), types.NamespacedName{Namespace: app.Namespace, Name: app.DriverPodName()}, pod); err != nil {
		t.Fatalf("driver pod: %v", err)
	}
	return pod
}

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
