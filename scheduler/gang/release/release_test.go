/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package release

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	gt "github.com/sparkop/spark-operator/scheduler/gang/gangtest"
)

// released is what ungating p onto node must leave.
func released(p *corev1.Pod, node string) *corev1.Pod {
	p = p.DeepCopy()
	if !Ungate(p, node) {
		panic("not gated")
	}
	return p
}

func TestPod(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		cached *corev1.Pod // what the cluster cache shows
		live   *corev1.Pod // what the API server holds
		node   string
		want   *corev1.Pod
		reads  int // API reads Pod needs
	}{{
		name:   "the cache is current: one patch, no read",
		cached: gt.GatedExecutor(nil, Gate),
		live:   gt.GatedExecutor(nil, Gate),
		node:   "n2",
		want:   released(gt.GatedExecutor(nil, Gate), "n2"),
	}, {
		name:   "other gates and annotations stay",
		cached: gt.GatedExecutor(map[string]string{"a": "b"}, "other", Gate),
		live:   gt.GatedExecutor(map[string]string{"a": "b"}, "other", Gate),
		node:   "n1",
		want:   released(gt.GatedExecutor(map[string]string{"a": "b"}, "other", Gate), "n1"),
	}, {
		name:   "no reservation: let go unnarrowed",
		cached: gt.GatedExecutor(nil, Gate),
		live:   gt.GatedExecutor(nil, Gate),
		want:   released(gt.GatedExecutor(nil, Gate), ""),
	}, {
		name:   "an annotation the cache has not seen is kept: read and updated",
		cached: gt.GatedExecutor(nil, Gate),
		live:   gt.GatedExecutor(map[string]string{"late": "1"}, Gate),
		node:   "n2",
		want:   released(gt.GatedExecutor(map[string]string{"late": "1"}, Gate), "n2"),
		reads:  1,
	}, {
		name:   "released already: left alone",
		cached: gt.GatedExecutor(nil, Gate),
		live:   released(gt.GatedExecutor(nil, Gate), "n1"),
		node:   "n2",
		want:   released(gt.GatedExecutor(nil, Gate), "n1"),
		reads:  1,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			api := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.live).Build()
			reads := &countingReader{Reader: api}
			if err := Pod(context.Background(), api, reads, tc.cached, tc.node); err != nil {
				t.Fatalf("ungate: %v", err)
			}
			got := &corev1.Pod{}
			if err := api.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "app-exec-1"}, got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want.Spec, got.Spec, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want.Annotations, got.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if reads.n != tc.reads {
				t.Errorf("API reads = %d, want %d", reads.n, tc.reads)
			}
		})
	}
}

type countingReader struct {
	client.Reader
	n int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.n++
	return c.Reader.Get(ctx, key, obj, opts...)
}
