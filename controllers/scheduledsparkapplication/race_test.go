/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package scheduledsparkapplication

// The status of a ScheduledSparkApplication must never go backwards: lastRun and lastRunName
// name the newest run, whatever the reconciler read. These tests feed the reconciler a cache
// that has not seen its own last status write (as an informer can be), then race the real
// controller against suspend flips, finishing runs and conflicting writes.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// staleCache serves one ScheduledSparkApplication as an older copy of it the first time it is
// read, and the current object after that, as an informer cache catching up does.
type staleCache struct {
	client.Client
	stale  *v1beta2.ScheduledSparkApplication
	served *bool
}

func (c staleCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if ssa, ok := obj.(*v1beta2.ScheduledSparkApplication); ok && key == client.ObjectKeyFromObject(c.stale) && !*c.served {
		*c.served = true
		c.stale.DeepCopyInto(ssa)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// staleReconcile reconciles name once through a cache that still shows stale.
func (h *harness) staleReconcile(stale *v1beta2.ScheduledSparkApplication) ctrl.Result {
	h.t.Helper()
	r := &Reconciler{Client: staleCache{Client: h.c, stale: stale, served: new(bool)}, APIReader: h.c, Scheme: cluster.Scheme,
		Clock: h.clock, Recorder: h.recorder}
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(stale)})
	if err != nil {
		h.t.Fatalf("Reconcile: %v", err)
	}
	return res
}

// TestStaleReadAfterSuspend is the reported case: a run is started and recorded, spec.suspend
// is set, and the reconcile that sees the suspension still sees the status from before the
// run. It used to write that old lastRun back over the new one.
func TestStaleReadAfterSuspend(t *testing.T) {
	h := newHarness(t)
	ssa := h.create("flip", nil)
	created := ssa.CreationTimestamp.Time
	h.clock.SetTime(created.Add(time.Hour))
	h.reconcile("flip")
	h.setState(RunName("flip", created.Add(time.Hour)), v1beta2.ApplicationStateCompleted)
	stale := h.get("flip") // lastRun: the first run

	h.clock.SetTime(created.Add(2 * time.Hour))
	h.reconcile("flip")
	ssa = h.get("flip")
	ssa.Spec.Suspend = ptr(true)
	if err := h.c.Update(context.Background(), ssa); err != nil {
		t.Fatal(err)
	}
	stale.Spec.Suspend = ptr(true)
	stale.Generation = ssa.Generation

	h.clock.SetTime(created.Add(2*time.Hour + time.Minute))
	h.staleReconcile(stale)
	st := h.get("flip").Status
	second := created.Add(2 * time.Hour)
	got := []any{st.LastRun.Time.Equal(second), st.LastRunName}
	if diff := cmp.Diff([]any{true, RunName("flip", second)}, got); diff != "" {
		t.Errorf("[lastRun is the second run, lastRunName] after a stale reconcile (-want +got):\n%s\nstatus: %+v", diff, st)
	}
}

// TestStaleReadNeverRestartsAPrunedRun: with no history kept, a finished run is deleted at
// once. A reconcile whose cache still shows the lastRun before it must not take it for due
// and start it a second time.
func TestStaleReadNeverRestartsAPrunedRun(t *testing.T) {
	h := newHarness(t)
	ssa := h.create("pruned", func(s *v1beta2.ScheduledSparkApplicationSpec) {
		s.SuccessfulRunHistoryLimit = ptr(int32(0))
	})
	created := ssa.CreationTimestamp.Time
	stale := h.get("pruned") // no lastRun yet
	h.clock.SetTime(created.Add(time.Hour))
	h.reconcile("pruned")
	first := RunName("pruned", created.Add(time.Hour))
	h.setState(first, v1beta2.ApplicationStateCompleted)
	h.reconcile("pruned") // prunes it
	if diff := cmp.Diff([]string(nil), h.runs("pruned")); diff != "" {
		t.Fatalf("runs after pruning (-want +got):\n%s", diff)
	}
	h.events()

	res := h.staleReconcile(stale)
	if diff := cmp.Diff([]string(nil), h.runs("pruned")); diff != "" {
		t.Errorf("runs after a stale reconcile (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string(nil), h.events()); diff != "" {
		t.Errorf("events of a stale reconcile (-want +got):\n%s", diff)
	}
	if res.RequeueAfter <= 0 {
		t.Errorf("a stale reconcile should come back soon; got %+v", res)
	}
}

// TestStatusNeverGoesBackwards runs the real controller on schedules that fire every second
// while other writers flip spec.suspend, finish runs (as the SparkApplication controller
// would) and relabel the objects (each relabel makes the controller's next status write
// conflict). Every status the API server stores must have a lastRun no older than the one
// before it, and a lastRunName that is the run of that lastRun: once everything has stopped,
// the watch must have seen each object as it is stored, so none of its statuses goes unchecked.
func TestStatusNeverGoesBackwards(t *testing.T) {
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "scheduled-race")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	mgr, err := ctrl.NewManager(cluster.Config(t), ctrl.Options{
		Scheme:                 cluster.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr(true)},
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		// However long a loaded machine takes to stop it, not the default 30 s, up to
		// cluster.StopTimeout.
		GracefulShutdownTimeout: ptr(time.Duration(-1)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Reconciler{}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}

	const schedules = 4
	names := make([]string, schedules)
	for i := range names {
		names[i] = fmt.Sprintf("race-%d", i)
		ssa := &v1beta2.ScheduledSparkApplication{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names[i]},
			Spec: v1beta2.ScheduledSparkApplicationSpec{
				Schedule: "@every 1s", Template: template(),
				ConcurrencyPolicy:         v1beta2.ConcurrencyAllow,
				SuccessfulRunHistoryLimit: ptr(int32(1)),
				FailedRunHistoryLimit:     ptr(int32(1)),
			},
		}
		if err := c.Create(ctx, ssa); err != nil {
			t.Fatal(err)
		}
	}

	// The watch outlives ctx, which stops the manager: it must see the last writes.
	statuses := watchStatuses(t, context.Background(), ns)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopWriters := startWriters(t, ctx, c, ns, names)

	cluster.Eventually(t, 60*time.Second, "five seconds of runs of every schedule", func() (bool, error) {
		for _, name := range names {
			s := &v1beta2.ScheduledSparkApplication{}
			if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, s); err != nil {
				return false, err
			}
			if s.Status.LastRun.IsZero() || s.Status.LastRun.Sub(s.CreationTimestamp.Time) < 5*time.Second {
				return false, nil
			}
		}
		return true, nil
	})
	stopWriters()
	cancel()
	cluster.Stopped(t, done, "manager")
	cluster.Eventually(t, 30*time.Second, "the watch to see every object as stored", func() (bool, error) {
		return statuses.caughtUp(context.Background(), c, ns, names)
	})
	problems, runs := statuses.stop()
	for _, p := range problems {
		t.Error(p)
	}
	if runs != schedules {
		t.Errorf("runs recorded for %d of %d schedules", runs, schedules)
	}
}

// statusWatch checks every status of a namespace's ScheduledSparkApplications that a watch
// delivers: a lastRun no older than the one before it, and a lastRunName that is its run.
type statusWatch struct {
	w    watch.Interface
	done chan struct{}

	mu       sync.Mutex
	seen     map[string]v1beta2.ScheduledSparkApplicationStatus
	versions map[string]string // the last resourceVersion seen, by name
	runs     map[string]bool   // names seen with a lastRunName
	problems []string
}

func watchStatuses(t *testing.T, ctx context.Context, ns string) *statusWatch {
	t.Helper()
	wc, err := client.NewWithWatch(cluster.Config(t), client.Options{Scheme: cluster.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &v1beta2.ScheduledSparkApplicationList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	s := &statusWatch{w: w, done: make(chan struct{}), seen: map[string]v1beta2.ScheduledSparkApplicationStatus{},
		versions: map[string]string{}, runs: map[string]bool{}}
	go func() {
		defer close(s.done)
		for ev := range w.ResultChan() {
			if ssa, ok := ev.Object.(*v1beta2.ScheduledSparkApplication); ok && (ev.Type == watch.Modified || ev.Type == watch.Added) {
				s.observe(ssa)
			}
		}
	}()
	return s
}

func (s *statusWatch) observe(ssa *v1beta2.ScheduledSparkApplication) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, prev := ssa.Status, s.seen[ssa.Name]
	if st.LastRun.Before(&prev.LastRun) {
		s.problems = append(s.problems, fmt.Sprintf("%s: lastRun went back from %s (%s) to %s (%s)",
			ssa.Name, prev.LastRun.UTC().Format(time.RFC3339), prev.LastRunName, st.LastRun.UTC().Format(time.RFC3339), st.LastRunName))
	}
	if !st.LastRun.IsZero() && st.LastRunName != RunName(ssa.Name, st.LastRun.Time) {
		s.problems = append(s.problems, fmt.Sprintf("%s: lastRunName %s is not the run of lastRun %s", ssa.Name, st.LastRunName, st.LastRun.UTC()))
	}
	if st.LastRunName != "" {
		s.runs[ssa.Name] = true
	}
	s.seen[ssa.Name] = st
	s.versions[ssa.Name] = ssa.ResourceVersion
}

// caughtUp reports whether the watch has seen each of names as c reads it now.
func (s *statusWatch) caughtUp(ctx context.Context, c client.Client, ns string, names []string) (bool, error) {
	for _, name := range names {
		ssa := &v1beta2.ScheduledSparkApplication{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, ssa); err != nil {
			return false, err
		}
		s.mu.Lock()
		seen := s.versions[name]
		s.mu.Unlock()
		if seen != ssa.ResourceVersion {
			return false, nil
		}
	}
	return true, nil
}

// stop ends the watch and returns what it found wrong, and how many objects it saw with a run.
func (s *statusWatch) stop() ([]string, int) {
	s.w.Stop()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.problems, len(s.runs)
}

// startWriters starts the other writers of the race: suspend flips, relabels and runs
// finished, each at a pace of its own, until the returned function is called.
func startWriters(t *testing.T, ctx context.Context, c client.Client, ns string, names []string) (stop func()) {
	var wg sync.WaitGroup
	stopped := make(chan struct{})
	// writer calls f every pace until stopped: the pace of a load generator, not a wait for
	// anything to have happened.
	writer := func(pace time.Duration, f func(i int) error) {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stopped:
					return
				case <-time.After(pace):
				}
				if err := f(n); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
					t.Errorf("writer: %v", err)
					return
				}
			}
		})
	}
	update := func(name string, mutate func(*v1beta2.ScheduledSparkApplication)) error {
		ssa := &v1beta2.ScheduledSparkApplication{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, ssa); err != nil {
			return err
		}
		mutate(ssa)
		return c.Update(ctx, ssa)
	}
	writer(300*time.Millisecond, func(n int) error { // suspend flips
		return update(names[n%len(names)], func(s *v1beta2.ScheduledSparkApplication) { s.Spec.Suspend = ptr(n%3 == 0) })
	})
	writer(100*time.Millisecond, func(n int) error { // relabels
		return update(names[n%len(names)], func(s *v1beta2.ScheduledSparkApplication) {
			s.Labels = map[string]string{"touch": fmt.Sprint(n)}
		})
	})
	writer(100*time.Millisecond, func(n int) error { // finishing runs
		return finishRuns(ctx, c, ns, n%4 == 0)
	})
	return func() {
		close(stopped)
		wg.Wait()
	}
}

// finishRuns ends every run of ns that has no state yet, as the SparkApplication controller
// would: COMPLETED, or FAILED if failed.
func finishRuns(ctx context.Context, c client.Client, ns string, failed bool) error {
	list := &v1beta2.SparkApplicationList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return err
	}
	for i := range list.Items {
		app := &list.Items[i]
		if app.Status.AppState.State != "" {
			continue
		}
		app.Status.AppState.State = v1beta2.ApplicationStateCompleted
		if failed {
			app.Status.AppState.State = v1beta2.ApplicationStateFailed
		}
		if err := c.Status().Update(ctx, app); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
