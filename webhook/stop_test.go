/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// TestRequestsInFlightWhenStopping: controller-runtime's webhook server gives each request a
// context derived from its own, which the manager cancels as it stops, while the server still
// waits for the requests in flight. A request whose server context is already cancelled, as in
// a replica a rolling update is stopping, is answered as it would be otherwise: its reads are
// not cancelled with it.
func TestRequestsInFlightWhenStopping(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, v1beta2.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	// Reads fail as a real client's do once their context is cancelled.
	reader := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return c.List(ctx, list, opts...)
		},
	}).Build()
	server := ctrlwebhook.NewServer(ctrlwebhook.Options{})
	Register(server, scheme, CacheFirst{Cache: reader, API: reader}, Options{})

	app := &v1beta2.SparkApplication{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1beta2.GroupVersion.String(), Kind: "SparkApplication"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pi"},
		Spec: v1beta2.SparkApplicationSpec{Type: v1beta2.SparkApplicationTypeScala, Mode: v1beta2.DeployModeCluster,
			SparkVersion: "4.0.4", MainApplicationFile: "local:///opt/spark/examples/jars/spark-examples.jar"},
	}
	raw, err := json.Marshal(app)
	if err != nil {
		t.Fatal(err)
	}
	review, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "1", Operation: admissionv1.Create, Namespace: "ns", Name: "pi",
			Kind:     metav1.GroupVersionKind{Group: v1beta2.GroupVersion.Group, Version: v1beta2.GroupVersion.Version, Kind: "SparkApplication"},
			Resource: metav1.GroupVersionResource{Group: v1beta2.GroupVersion.Group, Version: v1beta2.GroupVersion.Version, Resource: "sparkapplications"},
			Object:   runtime.RawExtension{Raw: raw}},
	})
	if err != nil {
		t.Fatal(err)
	}
	stopped, stop := context.WithCancel(context.Background())
	stop()
	req := httptest.NewRequestWithContext(stopped, http.MethodPost, PathValidateSparkApplication, bytes.NewReader(review))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	server.WebhookMux().ServeHTTP(rec, req)

	var got admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Response == nil {
		t.Fatalf("response %q: %v", rec.Body.String(), err)
	}
	if !got.Response.Allowed {
		t.Errorf("refused while stopping: %+v", got.Response.Result)
	}
}
