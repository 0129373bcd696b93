/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package uiresources_test

import (
	"context"
	"strings"
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

func createApp(t *testing.T, c client.Client, ns, name string, mutate func(*v1beta2.SparkApplication)) *v1beta2.SparkApplication {
	t.Helper()
	file := "local:///opt/spark/examples/jars/spark-examples.jar"
	app := &v1beta2.SparkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1beta2.SparkApplicationSpec{
			Type:                v1beta2.SparkApplicationTypeScala,
			SparkVersion:        "3.5.5",
			MainApplicationFile: file,
		},
	}
	if mutate != nil {
		mutate(app)
	}
	if err := c.Create(context.Background(), app); err != nil {
		t.Fatalf("creating SparkApplication: %v", err)
	}
	return app
}

func TestEnsureAgainstCluster(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "uiresources")

	// A 63-character name exercises the shortened Service and Ingress names for real.
	name := "ui-" + strings.Repeat("x", 60)
	uiPort := int32(8080)
	app := createApp(t, c, ns, name, func(a *v1beta2.SparkApplication) {
		a.Spec.SparkConf = map[string]string{"spark.ui.port": "4041"}
		a.Spec.SparkUIOptions = &v1beta2.SparkUIConfiguration{
			ServicePort:        &uiPort,
			ServiceLabels:      map[string]string{"team": "data"},
			ServiceAnnotations: map[string]string{"note": "ui"},
			IngressAnnotations: map[string]string{uinames.RewriteTargetAnnotation: "/$2"},
		}
	})
	app.Status.SubmissionID = "sub-1"

	opts := uiresources.Options{
		ServiceEnabled:   true,
		IngressURLFormat: "spark.example.com/{{$appNamespace}}/{{$appName}}",
		IngressClassName: "nginx",
	}
	if info, ok, err := uiresources.Observe(ctx, c, app, opts); err != nil || ok || info != (uiresources.Info{}) {
		t.Fatalf("Observe before Ensure: %+v, %t, %v; want nothing current", info, ok, err)
	}
	first, err := uiresources.Ensure(ctx, c, app, opts)
	if err != nil {
		t.Fatalf("first Ensure: %v", err)
	}
	// Observe sees what Ensure made, as Ensure says it, without writing.
	counting := cluster.CountWrites(c)
	if info, ok, err := uiresources.Observe(ctx, counting, app, opts); err != nil || !ok || info != first {
		t.Errorf("Observe after Ensure: %+v, %t, %v; want %+v, current", info, ok, err, first)
	}
	changed := app.DeepCopy()
	changed.Spec.SparkUIOptions.ServiceLabels["team"] = "other"
	if _, ok, err := uiresources.Observe(ctx, counting, changed, opts); err != nil || ok {
		t.Errorf("Observe of a changed spec: %t, %v; want not current", ok, err)
	}
	if counting.Writes() != 0 {
		t.Errorf("Observe wrote %d objects", counting.Writes())
	}
	svc := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: app.UIServiceName()}, svc); err != nil {
		t.Fatal(err)
	}
	// A second Ensure for the same spec finds everything as wanted and writes nothing.
	second, err := uiresources.Ensure(ctx, counting, app, opts)
	if err != nil {
		t.Fatalf("second Ensure: %v", err)
	}
	if d := cmp.Diff(first, second); d != "" {
		t.Errorf("Ensure is not idempotent (-first +second):\n%s", d)
	}
	if counting.Writes() != 0 {
		t.Errorf("second Ensure applied %d objects, want none", counting.Writes())
	}
	again := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(svc), again); err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != svc.ResourceVersion {
		t.Errorf("second Ensure rewrote an unchanged Service (resourceVersion %s -> %s)", svc.ResourceVersion, again.ResourceVersion)
	}
	var services corev1.ServiceList
	if err := c.List(ctx, &services, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(services.Items) != 1 {
		t.Errorf("want 1 Service, got %d", len(services.Items))
	}

	wantInfo := uiresources.Info{
		ServiceName:    app.UIServiceName(),
		Port:           8080,
		Address:        svc.Spec.ClusterIP + ":8080",
		IngressName:    uinames.IngressName(app),
		IngressAddress: "http://spark.example.com/" + ns + "/" + name,
	}
	if d := cmp.Diff(wantInfo, first); d != "" {
		t.Errorf("Info (-want +got):\n%s", d)
	}
	if svc.Spec.ClusterIP == "" {
		t.Errorf("service has no cluster IP")
	}

	type svcView struct {
		Labels, Annotations, Selector map[string]string
		Type                          corev1.ServiceType
		Ports                         []corev1.ServicePort
		Owners                        []metav1.OwnerReference
	}
	yes := true
	owner := metav1.OwnerReference{
		APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication", Name: name, UID: app.UID,
		Controller: &yes, BlockOwnerDeletion: &yes,
	}
	wantSvc := svcView{
		Labels: map[string]string{
			v1beta2.LabelAppName: name, v1beta2.LabelLaunchedByOperator: "true", "team": "data",
		},
		Annotations: map[string]string{"note": "ui"},
		Selector: map[string]string{
			v1beta2.LabelAppName: name, v1beta2.LabelSubmissionID: "sub-1", v1beta2.SparkRoleLabel: "driver",
		},
		Type: corev1.ServiceTypeClusterIP,
		Ports: []corev1.ServicePort{{
			Name: "spark-driver-ui-port", Protocol: corev1.ProtocolTCP, Port: 8080, TargetPort: intstr.FromInt32(4041),
		}},
		Owners: []metav1.OwnerReference{owner},
	}
	gotSvc := svcView{svc.Labels, withoutApplied(svc.Annotations), svc.Spec.Selector, svc.Spec.Type, svc.Spec.Ports, svc.OwnerReferences}
	if d := cmp.Diff(wantSvc, gotSvc); d != "" {
		t.Errorf("service (-want +got):\n%s", d)
	}

	ing := &networkingv1.Ingress{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: uinames.IngressName(app)}, ing); err != nil {
		t.Fatal(err)
	}
	specific := networkingv1.PathTypeImplementationSpecific
	class := "nginx"
	wantIngSpec := networkingv1.IngressSpec{
		IngressClassName: &class,
		Rules: []networkingv1.IngressRule{{
			Host: "spark.example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{
					Path:     "/" + ns + "/" + name + "(/|$)(.*)",
					PathType: &specific,
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
						Name: app.UIServiceName(), Port: networkingv1.ServiceBackendPort{Number: 8080},
					}},
				}},
			}},
		}},
	}
	if d := cmp.Diff(wantIngSpec, ing.Spec); d != "" {
		t.Errorf("ingress spec (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]metav1.OwnerReference{owner}, ing.OwnerReferences); d != "" {
		t.Errorf("ingress owners (-want +got):\n%s", d)
	}

	// Once the driver reports its application ID, the selector switches to it.
	app.Status.SparkApplicationID = "spark-0123"
	if _, err := uiresources.Ensure(ctx, c, app, opts); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
		t.Fatal(err)
	}
	wantSel := map[string]string{v1beta2.SparkAppSelectorLabel: "spark-0123", v1beta2.SparkRoleLabel: "driver"}
	if d := cmp.Diff(wantSel, svc.Spec.Selector); d != "" {
		t.Errorf("selector after the app ID is known (-want +got):\n%s", d)
	}

	// A changed spec updates the Service; the allocated node port then stays put.
	nodePort := corev1.ServiceTypeNodePort
	app.Spec.SparkUIOptions.ServiceType = &nodePort
	if _, err := uiresources.Ensure(ctx, c, app, opts); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Type != corev1.ServiceTypeNodePort || svc.Spec.Ports[0].NodePort == 0 {
		t.Errorf("after switching to NodePort: type %s, node port %d", svc.Spec.Type, svc.Spec.Ports[0].NodePort)
	}
	if _, err := uiresources.Ensure(ctx, c, app, opts); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(svc), again); err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != svc.ResourceVersion {
		t.Errorf("Ensure rewrote an unchanged NodePort Service")
	}

	if err := uiresources.Delete(ctx, c, app); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	for _, obj := range []client.Object{svc, ing} {
		cluster.Eventually(t, 10*time.Second, "deletion of "+obj.GetName(), func() (bool, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	}
	if err := uiresources.Delete(ctx, c, app); err != nil {
		t.Errorf("Delete of what is gone: %v", err)
	}
}

// withoutApplied drops the operator's bookkeeping annotation, to compare what users see.
func withoutApplied(annotations map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range annotations {
		if k != uiresources.AppliedAnnotation {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func TestEnsureDisabledAndInvalid(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "uiresources-off")
	app := createApp(t, c, ns, "pi", nil)

	info, err := uiresources.Ensure(ctx, c, app, uiresources.Options{IngressURLFormat: "x.example.com"})
	if err != nil || info != (uiresources.Info{}) {
		t.Errorf("disabled Ensure = %+v, %v; want empty Info, nil", info, err)
	}
	_, err = uiresources.Ensure(ctx, c, app, uiresources.Options{ServiceEnabled: true, IngressURLFormat: "{{$nope}}.example.com"})
	if err == nil || !strings.Contains(err.Error(), "ingress URL format") {
		t.Errorf("invalid format: error %v, want one naming the ingress URL format", err)
	}
	var services corev1.ServiceList
	if err := c.List(ctx, &services, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(services.Items) != 0 {
		t.Errorf("want no Service, got %d", len(services.Items))
	}
}

// TestGarbageCollection checks that the controller ownerReference is enough for the cluster's
// garbage collector to remove the UI resources with their application.
func TestGarbageCollection(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "uiresources-gc")
	app := createApp(t, c, ns, "gc", nil)
	opts := uiresources.Options{ServiceEnabled: true, IngressURLFormat: "{{$appName}}.{{$appNamespace}}.example.com"}
	if _, err := uiresources.Ensure(ctx, c, app, opts); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, app, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app.UIServiceName()}},
		&networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: uinames.IngressName(app)}},
	} {
		cluster.Eventually(t, 60*time.Second, "garbage collection of "+obj.GetName(), func() (bool, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	}
}
