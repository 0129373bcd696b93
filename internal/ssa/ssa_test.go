/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package ssa_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/internal/ssa"
	"github.com/sparkop/spark-operator/test/cluster"
)

// blindClient is a cache that holds nothing.
type blindClient struct{ *cluster.WriteCounter }

func (b *blindClient) Get(_ context.Context, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	return apierrors.NewNotFound(corev1.Resource("configmaps"), key.Name)
}

// TestApply: the first apply creates the object; the same fields again cost no write; changed
// fields are written, and what another writer added survives; an object of the name that is
// someone else's is left alone; a stale one is replaced.
func TestApply(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "ssa")
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := c.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	ownedBy := func(o *corev1.ConfigMap) ssa.Owner { return ssa.ControlledBy(o, "ConfigMap") }
	want := func(data string) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "derived", Namespace: ns, Labels: map[string]string{"app": "x"},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}},
			Data: map[string]string{"k": data},
		}
	}
	cc := cluster.CountWrites(c)
	apply := func(cm *corev1.ConfigMap, o ssa.Owner) (bool, error) {
		t.Helper()
		return ssa.Apply(ctx, cc, nil, ssa.ConfigMap(cm), &corev1.ConfigMap{}, o)
	}
	get := func() *corev1.ConfigMap {
		t.Helper()
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "derived"}, cm); err != nil {
			t.Fatal(err)
		}
		return cm
	}

	if wrote, err := apply(want("1"), ownedBy(owner)); err != nil || !wrote {
		t.Fatalf("first apply: wrote %v, %v", wrote, err)
	}
	first := get()
	if first.Data["k"] != "1" || first.Labels["app"] != "x" || !metav1.IsControlledBy(first, owner) || first.Annotations[ssa.AppliedAnnotation] == "" {
		t.Errorf("created %+v", first.ObjectMeta)
	}

	cc.Reset()
	if wrote, err := apply(want("1"), ownedBy(owner)); err != nil || wrote || cc.Writes() != 0 {
		t.Errorf("unchanged apply: wrote %v (%d requests), %v; want no write", wrote, cc.Writes(), err)
	}
	if rv := get().ResourceVersion; rv != first.ResourceVersion {
		t.Errorf("unchanged apply changed resourceVersion %s -> %s", first.ResourceVersion, rv)
	}

	// Another controller annotates the object; a changed spec is applied over it.
	other := get()
	other.Annotations["example.com/note"] = "kept"
	other.Labels["example.com/team"] = "data"
	if err := c.Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	if wrote, err := apply(want("2"), ownedBy(owner)); err != nil || !wrote {
		t.Fatalf("changed apply: wrote %v, %v", wrote, err)
	}
	got := get()
	if got.Data["k"] != "2" || got.Annotations["example.com/note"] != "kept" || got.Labels["example.com/team"] != "data" || got.Labels["app"] != "x" {
		t.Errorf("after a change: data %v, labels %v, annotations %v", got.Data, got.Labels, got.Annotations)
	}

	// Someone else's object of the name is not touched.
	stranger := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stranger", Namespace: ns}}
	if err := c.Create(ctx, stranger); err != nil {
		t.Fatal(err)
	}
	cc.Reset()
	_, err := apply(want("3"), ownedBy(stranger))
	var notOwned *ssa.NotOwnedError
	if !errors.As(err, &notOwned) || notOwned.Kind != "ConfigMap" || notOwned.Name != "derived" || cc.Writes() != 0 {
		t.Errorf("apply over a foreign object: %v after %d writes; want a NotOwnedError and none", err, cc.Writes())
	}
	if got := get(); got.Data["k"] != "2" {
		t.Errorf("a foreign object was changed: %v", got.Data)
	}

	// An object the cache does not hold (it holds only what has the operator's label) is
	// looked up in the API server before anything is applied.
	blind := &blindClient{WriteCounter: cc}
	cc.Reset()
	_, err = ssa.Apply(ctx, blind, c, ssa.ConfigMap(want("3")), &corev1.ConfigMap{}, ownedBy(stranger))
	if !errors.As(err, &notOwned) || cc.Writes() != 0 {
		t.Errorf("apply over a foreign object missing from the cache: %v after %d writes; want a NotOwnedError and none", err, cc.Writes())
	}

	// A stale object (an earlier owner's) is deleted and made anew.
	stale := ssa.Owner{Name: "new owner", Of: func(client.Object) ssa.Ownership { return ssa.Stale }}
	if wrote, err := apply(want("4"), stale); err != nil || !wrote {
		t.Fatalf("apply over a stale object: wrote %v, %v", wrote, err)
	}
	if got := get(); got.UID == first.UID || got.Data["k"] != "4" || got.Annotations["example.com/note"] != "" {
		t.Errorf("the stale object was not replaced: uid %s (was %s), data %v, annotations %v", got.UID, first.UID, got.Data, got.Annotations)
	}
}

// TestServiceConversion: a typed Service becomes the apply configuration of its metadata and
// spec only, with unset target ports left to the API server.
func TestServiceConversion(t *testing.T) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", Labels: map[string]string{"a": "b"}, ResourceVersion: "7"},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeNodePort,
			Selector: map[string]string{"x": "y"},
			Ports: []corev1.ServicePort{
				{Name: "grpc", Port: 15002},
				{Name: "ui", Port: 80, TargetPort: intstr.FromInt32(4040), Protocol: corev1.ProtocolUDP, AppProtocol: ptr.To("http")},
			},
		},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "1.2.3.4"}}}},
	}
	cfg, err := ssa.Service(svc)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Status != nil || cfg.ResourceVersion != nil || *cfg.Kind != "Service" || *cfg.APIVersion != "v1" {
		t.Errorf("apply configuration carries more than metadata and spec: %+v", cfg)
	}
	type port struct {
		Name     string
		Port     int32
		Target   *intstr.IntOrString
		Protocol corev1.Protocol
		App      *string
	}
	var got []port
	for _, p := range cfg.Spec.Ports {
		got = append(got, port{*p.Name, *p.Port, p.TargetPort, *p.Protocol, p.AppProtocol})
	}
	target := intstr.FromInt32(4040)
	want := []port{
		{Name: "grpc", Port: 15002, Protocol: corev1.ProtocolTCP},
		{Name: "ui", Port: 80, Target: &target, Protocol: corev1.ProtocolUDP, App: ptr.To("http")},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ports (-want +got):\n%s", d)
	}
	if *cfg.Spec.Type != corev1.ServiceTypeNodePort || cfg.Spec.Selector["x"] != "y" || cfg.Labels["a"] != "b" || cfg.Spec.ClusterIP != nil {
		t.Errorf("spec %+v, labels %v", cfg.Spec, cfg.Labels)
	}
}
