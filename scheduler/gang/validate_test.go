/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// queueReader answers Gets of Queues: those in queues exist, err (if set) is every other
// answer, else NotFound.
type queueReader struct {
	client.Reader
	queues []string
	err    error
}

func (r queueReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	for _, q := range r.queues {
		if q == key.Name {
			obj.SetName(q)
			return nil
		}
	}
	if r.err != nil {
		return r.err
	}
	return apierrors.NewNotFound(schema.GroupResource{Group: schedv1alpha1.GroupVersion.Group, Resource: "queues"}, key.Name)
}

// TestValidateApplication: a queue that does not exist is refused as not found; one that
// cannot be read is refused with an internal error (retried by the client), never admitted.
func TestValidateApplication(t *testing.T) {
	busy := apierrors.NewTooManyRequests("the API server is busy", 1)
	tests := []struct {
		name   string
		queue  string
		reader queueReader
		want   []field.ErrorType
	}{
		{name: "a queue that exists", queue: "team-a", reader: queueReader{queues: []string{"team-a"}}},
		{name: "a queue that does not exist", queue: "team-b", want: []field.ErrorType{field.ErrorTypeNotFound}},
		{name: "the default queue, not created yet", reader: queueReader{}},
		{name: "a queue that cannot be read", queue: "team-a", reader: queueReader{err: busy},
			want: []field.ErrorType{field.ErrorTypeInternal}},
		{name: "the default queue, when it cannot be read", reader: queueReader{err: errors.New("connection refused")},
			want: []field.ErrorType{field.ErrorTypeInternal}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Config{Reader: tt.reader})
			app := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app"}}
			app.Spec.BatchScheduler = ptr.To(Name)
			if tt.queue != "" {
				app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To(tt.queue)}
			}
			var got []field.ErrorType
			for _, e := range s.ValidateApplication(context.Background(), app) {
				got = append(got, e.Type)
				if e.Field != "spec.batchSchedulerOptions.queue" {
					t.Errorf("error on %s, want spec.batchSchedulerOptions.queue", e.Field)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("error types (-want +got):\n%s", diff)
			}
		})
	}
}
