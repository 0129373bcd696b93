/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package uiresources_test

import (
	"context"
	"testing"
	"time"

	"github.com/sparkop/spark-operator/internal/uinames"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/controllers/uiresources"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestDriverIngressOptions checks, on the API server, the Service and Ingress of each
// spec.driverIngressOptions entry (made whether or not UI Services are on), and that Delete
// finds them by label after the spec has moved on to other ports.
func TestDriverIngressOptions(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "driveringress")
	nodePort := corev1.ServiceTypeNodePort
	app := createApp(t, c, ns, "connect", func(a *v1beta2.SparkApplication) {
		a.Spec.DriverIngressOptions = []v1beta2.DriverIngressConfiguration{{
			ServicePort:        15002,
			ServicePortName:    "spark-connect",
			ServiceLabels:      map[string]string{"team": "data"},
			ServiceAnnotations: map[string]string{"note": "grpc"},
			IngressURLFormat:   "{{$appName}}.{{$appNamespace}}.example.com/grpc",
			IngressAnnotations: map[string]string{uinames.RewriteTargetAnnotation: "/$2"},
			IngressTLS:         []networkingv1.IngressTLS{{Hosts: []string{"connect.example.com"}, SecretName: "connect-tls"}},
		}, {
			ServicePort: 4041,
			ServiceType: &nodePort,
		}}
	})
	app.Status.SubmissionID = "sub-1"

	info, err := uiresources.Ensure(ctx, c, app, uiresources.Options{IngressClassName: "nginx"})
	if err != nil {
		t.Fatal(err)
	}
	if info != (uiresources.Info{}) {
		t.Errorf("Info = %+v with UI Services off, want empty", info)
	}

	yes := true
	owner := []metav1.OwnerReference{{APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication",
		Name: "connect", UID: app.UID, Controller: &yes, BlockOwnerDeletion: &yes}}
	selector := map[string]string{v1beta2.LabelAppName: "connect", v1beta2.LabelSubmissionID: "sub-1", v1beta2.SparkRoleLabel: "driver"}
	type svcView struct {
		Labels, Annotations, Selector map[string]string
		Type                          corev1.ServiceType
		Name, PortName                string
		Port                          int32
		Target                        intstr.IntOrString
		Owners                        []metav1.OwnerReference
	}
	view := func(name string) svcView {
		t.Helper()
		s := &corev1.Service{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
			t.Fatal(err)
		}
		p := s.Spec.Ports[0]
		return svcView{s.Labels, withoutApplied(s.Annotations), s.Spec.Selector, s.Spec.Type, s.Name, p.Name, p.Port, p.TargetPort, s.OwnerReferences}
	}
	ours := map[string]string{v1beta2.LabelAppName: "connect", v1beta2.LabelLaunchedByOperator: "true"}
	want := []svcView{{
		Labels:      map[string]string{v1beta2.LabelAppName: "connect", v1beta2.LabelLaunchedByOperator: "true", "team": "data"},
		Annotations: map[string]string{"note": "grpc"}, Selector: selector, Type: corev1.ServiceTypeClusterIP,
		Name: "connect-driver-15002", PortName: "spark-connect", Port: 15002, Target: intstr.FromInt32(15002), Owners: owner,
	}, {
		Labels: ours, Selector: selector, Type: corev1.ServiceTypeNodePort,
		Name: "connect-driver-4041", PortName: "driver-ing-4041", Port: 4041, Target: intstr.FromInt32(4041), Owners: owner,
	}}
	if d := cmp.Diff(want, []svcView{view("connect-driver-15002"), view("connect-driver-4041")}); d != "" {
		t.Errorf("driver ingress Services (-want +got):\n%s", d)
	}

	ing := &networkingv1.Ingress{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "connect-ing-15002"}, ing); err != nil {
		t.Fatal(err)
	}
	specific := networkingv1.PathTypeImplementationSpecific
	class := "nginx"
	wantSpec := networkingv1.IngressSpec{
		IngressClassName: &class,
		TLS:              []networkingv1.IngressTLS{{Hosts: []string{"connect.example.com"}, SecretName: "connect-tls"}},
		Rules: []networkingv1.IngressRule{{
			Host: "connect." + ns + ".example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{
					Path: "/grpc(/|$)(.*)", PathType: &specific,
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
						Name: "connect-driver-15002", Port: networkingv1.ServiceBackendPort{Number: 15002}}},
				}},
			}},
		}},
	}
	if d := cmp.Diff(wantSpec, ing.Spec); d != "" {
		t.Errorf("driver Ingress spec (-want +got):\n%s", d)
	}
	if d := cmp.Diff(owner, ing.OwnerReferences); d != "" {
		t.Errorf("driver Ingress owners (-want +got):\n%s", d)
	}
	if ing.Annotations[uinames.RewriteTargetAnnotation] != "/$2" || ing.Labels[v1beta2.LabelLaunchedByOperator] != "true" {
		t.Errorf("driver Ingress annotations %v, labels %v", ing.Annotations, ing.Labels)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "connect-ing-4041"}, &networkingv1.Ingress{}); !apierrors.IsNotFound(err) {
		t.Errorf("an entry without ingressURLFormat got an Ingress: %v", err)
	}

	// The spec moves to other ports; Delete still finds what the old ones made.
	app.Spec.DriverIngressOptions = []v1beta2.DriverIngressConfiguration{{ServicePort: 9999}}
	if err := uiresources.Delete(ctx, c, app); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "connect-driver-15002"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "connect-driver-4041"}},
		&networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "connect-ing-15002"}},
	} {
		cluster.Eventually(t, 10*time.Second, "deletion of "+obj.GetName(), func() (bool, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	}
}

// TestDeleteLeavesWhatItDoesNotControl: a Service labelled as the application's but not
// controlled by it (as the native submitter's driver Service, controlled by the driver pod)
// is not Delete's.
func TestDeleteLeavesWhatItDoesNotControl(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "uiresources-keep")
	app := createApp(t, c, ns, "keep", nil)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keep-driver-svc",
			Labels: map[string]string{v1beta2.LabelAppName: "keep", v1beta2.LabelLaunchedByOperator: "true"}},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 7078}}},
	}
	if err := c.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	if err := uiresources.Delete(ctx, c, app); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil || !svc.DeletionTimestamp.IsZero() {
		t.Errorf("the driver's own Service was deleted: %v", err)
	}
}
