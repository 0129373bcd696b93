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
	"time"

	"github.com/google/go-cmp/cmp"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestDriverPodDisruptionBudget runs applications with the operator's driver PDB on: one that
// asks for a budget gets one over its running driver, which then cannot be evicted (the
// cluster's disruption controller and eviction API decide, as a node drain would meet them);
// the budget goes when the driver finishes. One that does not ask gets none.
func TestDriverPodDisruptionBudget(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	cs := kubernetes.NewForConfigOrDie(cluster.Config(t))
	ns := cluster.Namespace(t, c, "driver-pdb")
	sub := &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}, gate: &gate{}}
	startManagerWith(t, []string{ns}, sub, Options{DriverPodGracePeriod: 2 * time.Second},
		func(r *Reconciler) { r.DriverPDB = true })
	e := &env{c: c, ns: ns, sub: sub}

	key := e.create(t, newApp(ns, "protected", driverAnnotations(annRunSeconds, "15"),
		func(a *v1beta2.SparkApplication) { a.Spec.DriverPodDisruptionBudget = ptr.To(true) }))
	app := e.waitState(t, key, v1beta2.ApplicationStateRunning, 20*time.Second)
	pdb := &policyv1.PodDisruptionBudget{}
	cluster.Eventually(t, 20*time.Second, "the disruption controller to count the protected driver", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "protected-driver"}, pdb)
		if err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.CurrentHealthy == 1, nil
	})
	yes := true
	type view struct {
		Labels       map[string]string
		Owners       []metav1.OwnerReference
		MinAvailable *intstr.IntOrString
		Selector     map[string]string
	}
	one := intstr.FromInt32(1)
	want := view{
		Labels: map[string]string{v1beta2.LabelAppName: "protected", v1beta2.LabelLaunchedByOperator: "true"},
		Owners: []metav1.OwnerReference{{APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication",
			Name: "protected", UID: app.UID, Controller: &yes, BlockOwnerDeletion: &yes}},
		MinAvailable: &one,
		Selector: map[string]string{v1beta2.LabelAppName: "protected", v1beta2.LabelSubmissionID: app.Status.SubmissionID,
			v1beta2.SparkRoleLabel: v1beta2.SparkRoleDriver},
	}
	got := view{pdb.Labels, pdb.OwnerReferences, pdb.Spec.MinAvailable, pdb.Spec.Selector.MatchLabels}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("driver PodDisruptionBudget (-want +got):\n%s", d)
	}

	err := cs.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "protected-driver"}})
	if !apierrors.IsTooManyRequests(err) {
		t.Errorf("evicting the protected driver: %v, want the budget to refuse it (429)", err)
	}

	// The same without asking: no budget, and the driver can be evicted.
	plain := e.create(t, newApp(ns, "plain"))
	e.waitState(t, plain, v1beta2.ApplicationStateRunning, 20*time.Second)
	var list policyv1.PodDisruptionBudgetList
	if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{v1beta2.LabelAppName: "plain"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("an application that did not ask got %d budgets", len(list.Items))
	}
	if err := cs.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain-driver"}}); err != nil {
		t.Errorf("evicting an unprotected driver: %v", err)
	}

	// The protected driver completes: its budget goes with the run.
	e.waitState(t, key, v1beta2.ApplicationStateCompleted, 30*time.Second)
	cluster.Eventually(t, 10*time.Second, "the finished driver's budget to go", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(pdb), &policyv1.PodDisruptionBudget{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}
