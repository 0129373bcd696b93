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
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

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
