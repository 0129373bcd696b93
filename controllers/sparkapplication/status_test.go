/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// updateStatus writes on the object the caller read when it is current, and reads afresh only
// when it is not given or not current.
func TestUpdateStatusWritesOnWhatWasRead(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1beta2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		// read returns what the caller passes, given the application as stored
		read      func(stored *v1beta2.SparkApplication) *v1beta2.SparkApplication
		wantReads int
	}{
		{name: "current", read: func(s *v1beta2.SparkApplication) *v1beta2.SparkApplication { return s }, wantReads: 0},
		{name: "none given", read: func(*v1beta2.SparkApplication) *v1beta2.SparkApplication { return nil }, wantReads: 1},
		{name: "stale", read: func(s *v1beta2.SparkApplication) *v1beta2.SparkApplication {
			old := s.DeepCopy()
			old.ResourceVersion = "1"
			return old
		}, wantReads: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
			reads := 0
			cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(app).WithStatusSubresource(app).
				WithInterceptorFuncs(interceptor.Funcs{
					Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
						reads++
						return c.Get(ctx, key, obj, opts...)
					},
				}).Build()
			stored := &v1beta2.SparkApplication{}
			if err := cl.Get(context.Background(), client.ObjectKeyFromObject(app), stored); err != nil {
				t.Fatal(err)
			}
			// Moved on since the stale copy was read.
			stored.Annotations = map[string]string{"moved": "on"}
			if err := cl.Update(context.Background(), stored); err != nil {
				t.Fatal(err)
			}
			reads = 0
			r := &Reconciler{Client: cl, APIReader: cl}
			given := tt.read(stored)
			_, err := r.updateStatus(context.Background(), client.ObjectKeyFromObject(app), given, func(latest *v1beta2.SparkApplication) error {
				latest.Status.AppState.State = v1beta2.ApplicationStateSubmitted
				return nil
			})
			if err != nil {
				t.Fatalf("updateStatus: %v", err)
			}
			if reads != tt.wantReads {
				t.Errorf("reads = %d, want %d", reads, tt.wantReads)
			}
			if given != nil && given.Status.AppState.State != "" {
				t.Errorf("the caller's object was changed: state %q", given.Status.AppState.State)
			}
			got := &v1beta2.SparkApplication{}
			if err := cl.Get(context.Background(), client.ObjectKeyFromObject(app), got); err != nil {
				t.Fatal(err)
			}
			if got.Status.AppState.State != v1beta2.ApplicationStateSubmitted {
				t.Errorf("stored state %q, want %q", got.Status.AppState.State, v1beta2.ApplicationStateSubmitted)
			}
		})
	}
}
