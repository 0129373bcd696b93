/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
)

// readerCache is a cluster cache that answers reads from a client of its own, which lags the
// API server as much as a test says.
type readerCache struct {
	cache.Cache
	reader client.Reader
}

func (c readerCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.reader.Get(ctx, key, obj, opts...)
}

// TestReleaseDeletesOnce: an ended application is released by every reconcile that follows;
// its Reservation is deleted by the first, and not again while the cluster cache still shows
// it (releasedKept); a new run's Reservation under the same name is deleted in turn.
func TestReleaseDeletesOnce(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := schedv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	a := app("a", "s1", v1beta2.ApplicationStateCompleted, 1, nil)
	a.UID = "uid-app"
	w := scheduler.ApplicationWorkload(&a)
	reservation := func(uid types.UID) *schedv1alpha1.Reservation {
		return &schedv1alpha1.Reservation{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: ReservationName(w.Key), UID: uid,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication", Name: "a", UID: a.UID}}}}
	}
	deletes := 0
	api := fake.NewClientBuilder().WithScheme(scheme).WithObjects(reservation("uid-res")).
		WithInterceptorFuncs(interceptor.Funcs{Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			deletes++
			return c.Delete(ctx, obj, opts...)
		}}).Build()
	// The cluster cache has not seen any deletion.
	cached := fake.NewClientBuilder().WithScheme(scheme).WithObjects(reservation("uid-res")).Build()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := clocktesting.NewFakeClock(start)
	s := New(Config{Clock: clock})
	s.client, s.cluster = api, readerCache{reader: cached}

	steps := []struct {
		name        string
		after       time.Duration
		cache       *schedv1alpha1.Reservation // replaces what the cache shows
		wantDeletes int
	}{
		{name: "the run ended: deleted", wantDeletes: 1},
		{name: "released again, the cache still showing it: not deleted again", after: time.Second, wantDeletes: 1},
		{name: "and again", after: 2 * time.Second, wantDeletes: 1},
		{name: "a new run's reservation under the same name: deleted", after: 3 * time.Second, cache: reservation("uid-res-2"), wantDeletes: 2},
		{name: "released again: not deleted again", after: 4 * time.Second, wantDeletes: 2},
		{name: "releasedKept later, the cache lagging still: deleted again (a 404)", after: 4*time.Second + releasedKept, wantDeletes: 3},
	}
	for _, step := range steps {
		clock.SetTime(start.Add(step.after))
		s.forgetReleased(clock.Now())
		if step.cache != nil {
			if err := cached.Delete(context.Background(), reservation("")); err != nil {
				t.Fatal(err)
			}
			if err := cached.Create(context.Background(), step.cache); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Release(context.Background(), w); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if deletes != step.wantDeletes {
			t.Errorf("%s: %d deletes in all, want %d", step.name, deletes, step.wantDeletes)
		}
	}
}
