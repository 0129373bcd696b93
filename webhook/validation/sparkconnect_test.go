/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package validation

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
)

func TestSparkConnectValidator(t *testing.T) {
	connect := func(mutate func(*v1alpha1.SparkConnect)) *v1alpha1.SparkConnect {
		c := &v1alpha1.SparkConnect{ObjectMeta: metav1.ObjectMeta{Name: "sc", Namespace: "ns"},
			Spec: v1alpha1.SparkConnectSpec{SparkVersion: "4.0.4", Image: ptr("spark:4")}}
		if mutate != nil {
			mutate(c)
		}
		return c
	}
	noImage := connect(func(c *v1alpha1.SparkConnect) { c.Spec.Image = nil })
	template := func(container, image string) *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: container, Image: image}}}}
	}
	tests := []struct {
		name         string
		op           admissionv1.Operation
		obj, old     *v1alpha1.SparkConnect
		wantAllowed  bool
		wantMessage  string
		wantWarnings []string
	}{
		{name: "valid", op: admissionv1.Create, obj: connect(nil), wantAllowed: true},
		{name: "no image", op: admissionv1.Create, obj: noImage,
			wantMessage: "spec.image: Required value: no image for the server: set spec.image or the image of the server template's spark-kubernetes-driver container"},
		{name: "server image only", op: admissionv1.Create, obj: connect(func(c *v1alpha1.SparkConnect) {
			c.Spec.Image, c.Spec.Server.Template = nil, template("spark-kubernetes-driver", "s:1")
		}), wantMessage: "spec.image: Required value: no image for the executors: set spec.image or the image of the executor template's spark-kubernetes-executor container"},
		{name: "images in both templates", op: admissionv1.Create, obj: connect(func(c *v1alpha1.SparkConnect) {
			c.Spec.Image = nil
			c.Spec.Server.Template, c.Spec.Executor.Template = template("spark-kubernetes-driver", "s:1"), template("spark-kubernetes-executor", "e:1")
		}), wantAllowed: true},
		{name: "operator's properties warned about", op: admissionv1.Create, obj: connect(func(c *v1alpha1.SparkConnect) {
			c.Spec.SparkConf = map[string]string{"spark.driver.host": "x", "spark.sql.a": "b", "spark.master": "local"}
		}), wantAllowed: true, wantWarnings: []string{
			"spec.sparkConf[spark.driver.host] is set by the operator; this value is ignored",
			"spec.sparkConf[spark.master] is set by the operator; this value is ignored",
		}},
		{name: "a Service without ignored parts: no warning", op: admissionv1.Create, obj: connect(func(c *v1alpha1.SparkConnect) {
			c.Spec.Server.Service = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "grpc"}}
		}), wantAllowed: true},
		{name: "ignored parts of the Service warned about", op: admissionv1.Create, obj: connect(func(c *v1alpha1.SparkConnect) {
			c.Spec.Server.Service = &corev1.Service{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
				ObjectMeta: metav1.ObjectMeta{Finalizers: []string{"example.com/keep"}},
				Status:     corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "10.0.0.1"}}}},
			}
		}), wantAllowed: true, wantWarnings: []string{
			".spec.server.service.apiVersion has no effect in this operator: " + ConnectNoEffect[0].Reason,
			".spec.server.service.kind has no effect in this operator: " + ConnectNoEffect[1].Reason,
			".spec.server.service.metadata.finalizers has no effect in this operator: " + ConnectNoEffect[2].Reason,
			".spec.server.service.status has no effect in this operator: " + ConnectNoEffect[3].Reason,
		}},
		{name: "update leaving a bad spec alone", op: admissionv1.Update, obj: noImage, old: noImage, wantAllowed: true},
		{name: "update to a bad spec", op: admissionv1.Update, obj: noImage, old: connect(nil),
			wantMessage: "spec.image: Required value: no image for the server: set spec.image or the image of the server template's spark-kubernetes-driver container"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: tt.op, Namespace: "ns", Object: raw(t, tt.obj)}}
			if tt.old != nil {
				req.OldObject = raw(t, tt.old)
			}
			resp := admission.WithValidator(scheme(t), SparkConnectValidator{}).Handle(context.Background(), req)
			if resp.Allowed != tt.wantAllowed {
				t.Fatalf("allowed = %v, want %v (%v)", resp.Allowed, tt.wantAllowed, resp.Result)
			}
			if !tt.wantAllowed && resp.Result.Message != tt.wantMessage {
				t.Errorf("message:\n got %q\nwant %q", resp.Result.Message, tt.wantMessage)
			}
			if diff := cmp.Diff(tt.wantWarnings, resp.Warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}
