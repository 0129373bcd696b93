/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package v1alpha1_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/test/cluster"
)

// applyCRD installs this worktree's CRD of file (under the chart's crds), so the test checks
// the file in the chart even on a cluster started before it changed.
func applyCRD(t *testing.T, c client.Client, file string) {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "charts/spark-operator/crds", file))
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &crd.Object); err != nil {
		t.Fatal(err)
	}
	if err := c.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(crd), client.FieldOwner("queue-crd-test"), client.ForceOwnership); err != nil {
		t.Fatalf("applying the CRD %s: %v", file, err)
	}
	cluster.Eventually(t, 30*time.Second, "the CRD "+file+" to be established", func() (bool, error) {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: crd.GetName()}, got); err != nil {
			return false, err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

func TestQueueCRD(t *testing.T) {
	c := cluster.Client(t)
	if err := apiextensionsv1.AddToScheme(c.Scheme()); err != nil {
		t.Fatal(err)
	}
	applyCRD(t, c, "scheduling.sparkop.dev_queues.yaml")
	// Queues are cluster-scoped: a per-run suffix keeps runs apart.
	suffix := fmt.Sprintf("-%d", time.Now().UnixNano()%1_000_000_000)
	create := func(q *v1alpha1.Queue) error {
		q.Name += suffix
		err := c.Create(context.Background(), q)
		if err == nil {
			t.Cleanup(func() { _ = c.Delete(context.Background(), q) })
		}
		return err
	}
	res := func(kv ...string) corev1.ResourceList {
		l := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return l
	}

	t.Run("defaults", func(t *testing.T) {
		q := &v1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "bare"}}
		if err := create(q); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(v1alpha1.QueueSpec{}, q.Spec); diff != "" {
			t.Errorf("a bare queue's spec (-want +got):\n%s", diff)
		}
		b := &v1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "borrow"}, Spec: v1alpha1.QueueSpec{Borrowing: &v1alpha1.Borrowing{}}}
		if err := create(b); err != nil {
			t.Fatal(err)
		}
		if b.Spec.Borrowing.Policy != v1alpha1.BorrowingAllowed {
			t.Errorf("an empty borrowing got policy %q, want %q", b.Spec.Borrowing.Policy, v1alpha1.BorrowingAllowed)
		}
	})

	t.Run("accepted", func(t *testing.T) {
		for _, q := range []*v1alpha1.Queue{
			{ObjectMeta: metav1.ObjectMeta{Name: "full"}, Spec: v1alpha1.QueueSpec{
				Parent: "org", Priority: -5,
				Quota:     res("cpu", "64", "memory", "256Gi", "nvidia.com/gpu", "4", "pods", "100"),
				Borrowing: &v1alpha1.Borrowing{Policy: v1alpha1.BorrowingAllowed, Limit: res("cpu", "8", "memory", "0")},
			}},
			{ObjectMeta: metav1.ObjectMeta{Name: "never"}, Spec: v1alpha1.QueueSpec{
				Parent: "org", Quota: res("cpu", "500m"), Borrowing: &v1alpha1.Borrowing{Policy: v1alpha1.BorrowingNever},
			}},
			{ObjectMeta: metav1.ObjectMeta{Name: "zero"}, Spec: v1alpha1.QueueSpec{Quota: res("cpu", "0")}},
		} {
			if err := create(q); err != nil {
				t.Errorf("queue %s: %v", q.Name, err)
			}
		}
	})

	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct {
			q    *v1alpha1.Queue
			want string
		}{{
			&v1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "negative"}, Spec: v1alpha1.QueueSpec{Quota: res("cpu", "4", "memory", "-1Gi")}},
			"spec.quota: every quantity must be zero or more",
		}, {
			&v1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "neglimit"}, Spec: v1alpha1.QueueSpec{Parent: "org", Borrowing: &v1alpha1.Borrowing{Limit: res("cpu", "-2")}}},
			"spec.borrowing.limit: every quantity must be zero or more",
		}, {
			&v1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "neverlimit"}, Spec: v1alpha1.QueueSpec{Parent: "org", Borrowing: &v1alpha1.Borrowing{Policy: v1alpha1.BorrowingNever, Limit: res("cpu", "2")}}},
			"spec.borrowing.limit cannot be set when spec.borrowing.policy is Never",
		}, {
			&v1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "policy"}, Spec: v1alpha1.QueueSpec{Borrowing: &v1alpha1.Borrowing{Policy: "Sometimes"}}},
			`spec.borrowing.policy: Unsupported value: "Sometimes": supported values: "Allowed", "Never"`,
		}, {
			&v1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "badparent"}, Spec: v1alpha1.QueueSpec{Parent: "Team_A"}},
			"spec.parent: Invalid value",
		}} {
			err := create(tc.q)
			if err == nil {
				t.Errorf("queue %s was accepted, want refused with %q", tc.q.Name, tc.want)
				continue
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("queue %s refused with %q, want it to say %q", tc.q.Name, err, tc.want)
			}
		}
		// A queue that names itself as its parent: the name is only known here.
		self := &v1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "self"}, Spec: v1alpha1.QueueSpec{Parent: "self" + suffix}}
		if err := create(self); err == nil || !strings.Contains(err.Error(), "spec.parent: a queue cannot be its own parent") {
			t.Errorf("a queue that is its own parent: got %v, want refused", err)
		}
	})
}
