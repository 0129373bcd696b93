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
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

func TestSettled(t *testing.T) {
	finished := func(mutate ...func(*v1beta2.SparkApplication)) *v1beta2.SparkApplication {
		app := newApp("ns", "a", mutate...)
		app.Status.AppState.State = v1beta2.ApplicationStateCompleted
		app.Status.LastSubmittedSpecHash = specHash(&app.Spec)
		return app
	}
	now := metav1.Now()
	for _, tc := range []struct {
		name       string
		app        *v1beta2.SparkApplication
		defaultTTL bool
		want       bool
	}{
		{"completed, spec as run", finished(), false, true},
		{"completed, a default time to live to enforce", finished(), true, false},
		{"failed, no hash recorded", func() *v1beta2.SparkApplication {
			a := finished()
			a.Status.AppState.State, a.Status.LastSubmittedSpecHash = v1beta2.ApplicationStateFailed, ""
			return a
		}(), false, true},
		{"running", func() *v1beta2.SparkApplication {
			a := finished()
			a.Status.AppState.State = v1beta2.ApplicationStateRunning
			return a
		}(), false, false},
		{"new", newApp("ns", "a"), false, false},
		{"time to live to enforce", finished(func(a *v1beta2.SparkApplication) {
			a.Spec.TimeToLiveSeconds = ptr.To[int64](60)
		}), false, false},
		{"spec edited since it ran", func() *v1beta2.SparkApplication {
			a := finished()
			a.Spec.Image = ptr.To("spark:4.0.4")
			return a
		}(), false, false},
		{"being deleted", func() *v1beta2.SparkApplication {
			a := finished()
			a.DeletionTimestamp = &now
			return a
		}(), false, false},
	} {
		if got := settled(tc.app, tc.defaultTTL); got != tc.want {
			t.Errorf("%s: settled = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestExpiration: a finished application is deleted its own time to live after it ended, or
// else the default time to live after (Kubeflow's --default-time-to-live-seconds); without
// either, or before it ended, never.
func TestExpiration(t *testing.T) {
	ended := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	app := func(state v1beta2.ApplicationStateType, ttl *int64) *v1beta2.SparkApplication {
		a := newApp("ns", "a", func(a *v1beta2.SparkApplication) { a.Spec.TimeToLiveSeconds = ttl })
		a.Status.AppState.State = state
		if state == v1beta2.ApplicationStateCompleted {
			a.Status.TerminationTime = metav1.NewTime(ended)
		}
		return a
	}
	for _, tc := range []struct {
		name       string
		app        *v1beta2.SparkApplication
		defaultTTL time.Duration
		want       time.Time
		ok         bool
	}{
		{"no time to live", app(v1beta2.ApplicationStateCompleted, nil), 0, time.Time{}, false},
		{"the default", app(v1beta2.ApplicationStateCompleted, nil), time.Hour, ended.Add(time.Hour), true},
		{"its own wins, longer", app(v1beta2.ApplicationStateCompleted, ptr.To[int64](7200)), time.Hour, ended.Add(2 * time.Hour), true},
		{"its own wins, zero", app(v1beta2.ApplicationStateCompleted, ptr.To[int64](0)), time.Hour, ended, true},
		{"running", app(v1beta2.ApplicationStateRunning, nil), time.Hour, time.Time{}, false},
	} {
		o := Options{DefaultTimeToLive: tc.defaultTTL}
		if got, ok := o.expiration(tc.app); !got.Equal(tc.want) || ok != tc.ok {
			t.Errorf("%s: expiration = %s, %v; want %s, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// countingReader counts the API server reads of each SparkApplication.
type countingReader struct {
	client.Reader
	mu   sync.Mutex
	gets map[string]int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*v1beta2.SparkApplication); ok {
		c.mu.Lock()
		c.gets[key.Name]++
		c.mu.Unlock()
	}
	return c.Reader.Get(ctx, key, obj, opts...)
}

func (c *countingReader) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gets[name]
}

// TestFinishedApplicationsCostNothingOnStart starts the controller on a namespace holding
// finished applications and one new one. The finished ones must not be read from the API
// server at all, the new one must run, and the finished ones that do have something to do (a
// time to live, a spec edited while the operator was down) must still get it done.
func TestFinishedApplicationsCostNothingOnStart(t *testing.T) {
	c := cluster.Client(t)
	ctx := context.Background()
	e := &env{c: c, ns: cluster.Namespace(t, c, "sparkapp-restart"),
		sub: &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}, gate: &gate{}}}

	finish := func(name string, mutate func(*v1beta2.SparkApplication)) types.NamespacedName {
		app := newApp(e.ns, name)
		key := e.create(t, app)
		end := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
		app.Status = v1beta2.SparkApplicationStatus{
			AppState:                  v1beta2.ApplicationState{State: v1beta2.ApplicationStateCompleted},
			SubmissionID:              "done-" + name,
			LastSubmittedSpecHash:     specHash(&app.Spec),
			LastSubmissionAttemptTime: end,
			TerminationTime:           end,
			ExecutionAttempts:         1,
			SubmissionAttempts:        1,
		}
		syncConditions(&app.Status, end.Time)
		if err := c.Status().Update(ctx, app); err != nil {
			t.Fatal(err)
		}
		if mutate != nil {
			e.update(t, key, mutate)
		}
		return key
	}
	const finished = 30
	for i := range finished {
		finish(fmt.Sprintf("done-%d", i), nil)
	}
	expired := finish("expired", func(a *v1beta2.SparkApplication) { a.Spec.TimeToLiveSeconds = ptr.To[int64](1) })
	edited := finish("edited", func(a *v1beta2.SparkApplication) { a.Spec.Image = ptr.To("spark:4.0.4") })
	fresh := e.create(t, newApp(e.ns, "fresh"))

	reads := &countingReader{Reader: c, gets: map[string]int{}}
	startManagerWith(t, []string{e.ns}, e.sub, Options{DriverPodGracePeriod: 2 * time.Second}, func(r *Reconciler) {
		r.APIReader = reads
	})

	e.waitState(t, fresh, v1beta2.ApplicationStateRunning, 20*time.Second)
	e.waitFor(t, edited, 20*time.Second, "a rerun of the edited application", func(a *v1beta2.SparkApplication) bool {
		return a.Status.SubmissionID != "done-edited" && a.Status.SubmissionID != ""
	})
	cluster.Eventually(t, 20*time.Second, "deletion of the expired application", func() (bool, error) {
		err := c.Get(ctx, expired, &v1beta2.SparkApplication{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	var read []string
	for i := range finished {
		if name := fmt.Sprintf("done-%d", i); reads.count(name) > 0 {
			read = append(read, name)
		}
	}
	if len(read) > 0 {
		t.Errorf("finished applications read from the API server on start: %v", read)
	}
	for i := range finished {
		key := types.NamespacedName{Namespace: e.ns, Name: fmt.Sprintf("done-%d", i)}
		if diff := cmp.Diff(v1beta2.ApplicationStateCompleted, e.get(t, key).Status.AppState.State); diff != "" {
			t.Errorf("%s (-want +got):\n%s", key.Name, diff)
		}
	}
}
