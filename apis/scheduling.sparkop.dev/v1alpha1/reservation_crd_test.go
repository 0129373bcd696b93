/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package v1alpha1_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestReservationCRD: the API server takes a Reservation as the gang scheduler writes it,
// refuses malformed ones with a message naming the field, keeps its status apart (the status
// subresource), and shows it in columns that read well.
func TestReservationCRD(t *testing.T) {
	c := cluster.Client(t)
	if err := apiextensionsv1.AddToScheme(c.Scheme()); err != nil {
		t.Fatal(err)
	}
	applyCRD(t, c, "scheduling.sparkop.dev_reservations.yaml")
	ns := cluster.Namespace(t, c, "reservation-crd")
	valid := func() *v1alpha1.Reservation {
		cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		return &v1alpha1.Reservation{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "spark-pi"},
			Spec: v1alpha1.ReservationSpec{
				Workload: v1alpha1.WorkloadReference{Kind: "SparkApplication", Name: "spark-pi"},
				Queue:    "default", Run: "s1", PriorityClassName: "high", Admitted: metav1.NewTime(time.Now().Truncate(time.Second)),
				Members: []v1alpha1.ReservationMember{
					{Name: "driver", Role: v1alpha1.MemberRoleDriver, Node: "n1", Requests: cpu},
					{Name: "executor-1", Role: v1alpha1.MemberRoleExecutor, Node: "n2", Requests: cpu},
				},
			},
		}
	}
	bad := []struct {
		name   string
		change func(*v1alpha1.Reservation)
		want   string
	}{
		{"no members", func(r *v1alpha1.Reservation) { r.Spec.Members = nil }, "spec.members"},
		{"an unknown role", func(r *v1alpha1.Reservation) { r.Spec.Members[1].Role = "worker" }, "spec.members[1].role"},
		{"a member without a node", func(r *v1alpha1.Reservation) { r.Spec.Members[0].Node = "" }, "spec.members[0].node"},
		{"two members of one name", func(r *v1alpha1.Reservation) { r.Spec.Members[1].Name = "driver" }, "spec.members[1]"},
		{"a workload of another kind", func(r *v1alpha1.Reservation) { r.Spec.Workload.Kind = "Job" }, "spec.workload.kind"},
		{"no run", func(r *v1alpha1.Reservation) { r.Spec.Run = "" }, "spec.run"},
		{"no queue", func(r *v1alpha1.Reservation) { r.Spec.Queue = "" }, "spec.queue"},
	}
	for _, tt := range bad {
		r := valid()
		tt.change(r)
		if err := c.Create(context.Background(), r, client.DryRunAll); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want refused naming %s", tt.name, err, tt.want)
		}
	}

	r := valid()
	r.Status.Bound = "ignored on create"
	if err := c.Create(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if r.Status.Bound != "" {
		t.Errorf("the status was stored on create: %+v", r.Status)
	}
	r.Status = v1alpha1.ReservationStatus{Nodes: "n1,n2", Bound: "1/2", BoundMembers: []string{"driver"}, Placeholders: 1}
	if err := c.Status().Update(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	got := &v1alpha1.Reservation{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(r), got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r.Status, got.Status); diff != "" {
		t.Errorf("status (-written +read):\n%s", diff)
	}

	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: "reservations.scheduling.sparkop.dev"}, crd); err != nil {
		t.Fatal(err)
	}
	var columns []string
	for _, col := range crd.Spec.Versions[0].AdditionalPrinterColumns {
		if col.Priority == 0 {
			columns = append(columns, col.Name)
		}
	}
	if diff := cmp.Diff([]string{"Queue", "Nodes", "Bound", "Age"}, columns); diff != "" {
		t.Errorf("kubectl get columns (-want +got):\n%s", diff)
	}
	if crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
		t.Errorf("scope %s; want Namespaced", crd.Spec.Scope)
	}
}
