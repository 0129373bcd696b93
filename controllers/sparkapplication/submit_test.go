/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/test/cluster"
)

// podReadCounter counts the pod reads made through it: driver lists, and pods read by name.
type podReadCounter struct {
	client.Reader
	mu          sync.Mutex
	lists, gets int
}

func (c *podReadCounter) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Pod); ok {
		c.mu.Lock()
		c.gets++
		c.mu.Unlock()
	}
	return c.Reader.Get(ctx, key, obj, opts...)
}

func (c *podReadCounter) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*corev1.PodList); ok {
		c.mu.Lock()
		c.lists++
		c.mu.Unlock()
	}
	return c.Reader.List(ctx, list, opts...)
}

func (c *podReadCounter) counts() (lists, gets int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lists, c.gets
}

// TestSubmitChecksTheDriverItCreates: the checks of a run's driver pod (another driver of the
// application, a pod holding its name) are read beside the application once the cache admits
// it, and count only for the run and driver name the API server's application gives.
func TestSubmitChecksTheDriverItCreates(t *testing.T) {
	c := cluster.Client(t)
	ctx := context.Background()
	ns := cluster.Namespace(t, c, "sparkapp-submit-checks")

	cases := []struct {
		name string
		// cachedPod is the driver pod name the cache's copy gives; the API server's is
		// "<name>-fresh".
		cachedPod string
		// taken: another application's driver holds the API server's driver name.
		taken     bool
		wantState v1beta2.ApplicationStateType
		wantError string
		// wantReads: driver lists and pod reads by name.
		wantReads int
	}{{
		name: "cache current", cachedPod: "current-fresh", wantState: v1beta2.ApplicationStateSubmitted, wantReads: 1,
	}, {
		name: "cache current, name taken", cachedPod: "taken-fresh", taken: true,
		wantState: v1beta2.ApplicationStateFailedSubmission, wantError: "driver pod name taken-fresh is taken", wantReads: 1,
	}, {
		name: "renamed since the cache", cachedPod: "renamed-old", taken: true,
		wantState: v1beta2.ApplicationStateFailedSubmission, wantError: "driver pod name renamed-fresh is taken", wantReads: 2,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			appName, _, _ := strings.Cut(tc.cachedPod, "-")
			app := newApp(ns, appName, func(a *v1beta2.SparkApplication) { a.Spec.Driver.PodName = ptr.To(appName + "-fresh") })
			if err := c.Create(ctx, app); err != nil {
				t.Fatal(err)
			}
			app.Status.SubmissionID = "s1"
			app.Status.AppState.State = v1beta2.ApplicationStateNew
			if err := c.Status().Update(ctx, app); err != nil {
				t.Fatal(err)
			}
			if tc.taken {
				pod := driverPod(newApp(ns, appName+"-other"), appName+"-fresh", "o1", "spark-o1")
				pod.OwnerReferences = nil // its application is not there: the garbage collector would take the pod
				if err := c.Create(ctx, pod); err != nil {
					t.Fatal(err)
				}
			}
			cached := app.DeepCopy()
			cached.Spec.Driver.PodName = ptr.To(tc.cachedPod)
			reads := &podReadCounter{Reader: c}
			sub := &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}}
			r := &Reconciler{
				Client:      staleCache{Client: c, stale: cached},
				APIReader:   reads,
				Scheme:      cluster.Scheme,
				Recorder:    &events.FakeRecorder{},
				Submitters:  map[submission.Mode]submission.Submitter{submission.ModeNative: sub},
				DefaultMode: submission.ModeNative,
			}
			key := client.ObjectKeyFromObject(app)
			if err := r.Submit(ctx, key); err != nil {
				t.Fatalf("Submit: %v", err)
			}
			got := &v1beta2.SparkApplication{}
			if err := c.Get(ctx, key, got); err != nil {
				t.Fatal(err)
			}
			if got.Status.AppState.State != tc.wantState || !strings.Contains(got.Status.AppState.ErrorMessage, tc.wantError) {
				t.Errorf("state %s (%q), want %s (%q)", got.Status.AppState.State, got.Status.AppState.ErrorMessage, tc.wantState, tc.wantError)
			}
			if calls, want := sub.count(key), map[bool]int{true: 1, false: 0}[tc.wantError == ""]; calls != want {
				t.Errorf("submitted %d times, want %d", calls, want)
			}
			if lists, gets := reads.counts(); lists != tc.wantReads || gets != tc.wantReads {
				t.Errorf("read the application's drivers %d times and its driver's name %d times, want %d each", lists, gets, tc.wantReads)
			}
		})
	}
}
