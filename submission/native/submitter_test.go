/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package native

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/test/cluster"
)

func TestSubmitSparkPi(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "native-submit")
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "spark-operator-spark", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	app := loadExample(t, "spark-pi.yaml")
	app.Namespace, app.UID, app.ResourceVersion = ns, "", ""
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	v1beta2.SetSparkApplicationDefaults(app)

	sub := &Submitter{Client: c, Options: Options{Master: "k8s://https://kubernetes.default.svc:443", SparkUser: "spark"}}
	attempt := submission.Attempt{SubmissionID: "11111111-aaaa", DriverPodName: app.DriverPodName()}
	res, err := sub.Submit(ctx, app, attempt)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.SparkApplicationID, "spark-") || len(res.SparkApplicationID) != 38 || res.DriverPodName != "spark-pi-driver" {
		t.Errorf("result = %+v", res)
	}

	pod := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "spark-pi-driver"}, pod); err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{
		"spark-app-name": "spark-pi", "spark-app-selector": res.SparkApplicationID, "spark-role": "driver",
		"spark-version": "4.0.4", "app.kubernetes.io/part-of": "spark-pi-demo",
		v1beta2.LabelAppName: "spark-pi", v1beta2.LabelLaunchedByOperator: "true", v1beta2.LabelSubmissionID: attempt.SubmissionID,
	}
	if diff := cmp.Diff(withLabel(wantLabels, v1beta2.LabelCustomised, "true"), pod.Labels); diff != "" {
		t.Errorf("pod labels (-want +got):\n%s", diff)
	}
	if len(pod.OwnerReferences) != 1 || pod.OwnerReferences[0].UID != app.UID || !*pod.OwnerReferences[0].Controller {
		t.Errorf("pod owner references = %+v, want the SparkApplication as controller", pod.OwnerReferences)
	}
	if got := pod.Spec.Containers[0].Resources.Limits.Memory().String(); got != "896Mi" {
		t.Errorf("memory limit = %s, want 896Mi", got)
	}

	ownedByPod := func(refs []metav1.OwnerReference) bool {
		return len(refs) == 1 && refs[0].Kind == "Pod" && refs[0].UID == pod.UID && *refs[0].Controller
	}
	var cmName, tmplName string
	for _, v := range pod.Spec.Volumes {
		switch v.Name {
		case "spark-conf-volume-driver":
			cmName = v.ConfigMap.Name
		case "pod-template-volume":
			tmplName = v.ConfigMap.Name
		}
	}
	for _, name := range []string{cmName, tmplName} {
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
			t.Fatalf("ConfigMap %q: %v", name, err)
		}
		if !ownedByPod(cm.OwnerReferences) {
			t.Errorf("ConfigMap %s owner references = %+v", name, cm.OwnerReferences)
		}
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cmName}, cm); err != nil {
		t.Fatal(err)
	}
	props, err := ParseProperties(cm.Data["spark.properties"])
	if err != nil {
		t.Fatal(err)
	}
	if props["spark.app.id"] != res.SparkApplicationID {
		t.Errorf("spark.app.id = %q, want %q", props["spark.app.id"], res.SparkApplicationID)
	}
	svcName, _, _ := strings.Cut(props["spark.driver.host"], ".")
	svc := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: svcName}, svc); err != nil {
		t.Fatalf("driver Service named by spark.driver.host: %v", err)
	}
	if !ownedByPod(svc.OwnerReferences) || svc.Spec.ClusterIP != "None" || len(svc.Spec.Ports) != 3 {
		t.Errorf("service = %+v", svc)
	}
	if diff := cmp.Diff(wantLabels, svc.Spec.Selector); diff != "" {
		t.Errorf("service selector (-want +got):\n%s", diff)
	}

	// Submitting the same attempt again finds the pod and creates nothing new.
	res2, err := sub.Submit(ctx, app, attempt)
	if err != nil {
		t.Fatal(err)
	}
	if res2 != res {
		t.Errorf("second submission = %+v, want %+v", res2, res)
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	svcs := &corev1.ServiceList{}
	if err := c.List(ctx, svcs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || len(svcs.Items) != 1 {
		t.Errorf("after two submissions: %d pods, %d services; want 1 and 1", len(pods.Items), len(svcs.Items))
	}

	// Another attempt must not adopt this driver.
	_, err = sub.Submit(ctx, app, submission.Attempt{SubmissionID: "22222222-bbbb", DriverPodName: app.DriverPodName()})
	var serr *submission.Error
	if !errors.As(err, &serr) {
		t.Errorf("submission with another ID: error = %v, want a *submission.Error", err)
	}
}

// TestSubmitResumesInterrupted deletes the dependents of a submitted driver, as if the
// operator had died right after creating the pod, and checks that resubmitting restores them
// under the names the pod refers to.
func TestSubmitResumesInterrupted(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "native-resume")
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "spark-operator-spark", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	app := loadExample(t, "spark-pi.yaml")
	app.Namespace, app.UID, app.ResourceVersion = ns, "", ""
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	sub := &Submitter{Client: c, Options: Options{Master: "k8s://https://kubernetes.default.svc:443"}}
	attempt := submission.Attempt{SubmissionID: "resume-1", DriverPodName: app.DriverPodName()}
	if _, err := sub.Submit(ctx, app, attempt); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: attempt.DriverPodName}, pod); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil && strings.HasPrefix(v.Name, "spark-conf-volume") || v.Name == "pod-template-volume" {
			names = append(names, v.ConfigMap.Name)
			if err := c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v.ConfigMap.Name}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := sub.Submit(ctx, app, attempt); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ConfigMap{}); err != nil {
			t.Errorf("ConfigMap %s not restored: %v", name, err)
		}
	}
}

// TestSubmitCutShortKeepsDriver ends a submission's context between the driver pod and its
// dependents, as the operator stopping (a leader handing over) does: the pod stays, and the next
// call for the same attempt completes that pod's dependents instead of making a second driver.
func TestSubmitCutShortKeepsDriver(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1beta2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).Build(), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Pod); ok {
				defer stop() // the operator stops right after the pod is made
			} else if err := ctx.Err(); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		}})
	app := loadExample(t, "spark-pi.yaml")
	app.Namespace = "ns"
	v1beta2.SetSparkApplicationDefaults(app)
	sub := &Submitter{Client: c, Options: Options{Master: "k8s://https://kubernetes.default.svc:443"}}
	attempt := submission.Attempt{SubmissionID: "cut-1", DriverPodName: app.DriverPodName()}
	if _, err := sub.Submit(ctx, app, attempt); !errors.Is(err, context.Canceled) {
		t.Fatalf("Submit cut short = %v, want context.Canceled", err)
	}
	key := client.ObjectKey{Namespace: "ns", Name: attempt.DriverPodName}
	before := &corev1.Pod{}
	if err := c.Get(context.Background(), key, before); err != nil {
		t.Fatalf("the driver pod of the cut-short submission: %v", err)
	}

	if _, err := sub.Submit(context.Background(), app, attempt); err != nil {
		t.Fatal(err)
	}
	after := &corev1.Pod{}
	if err := c.Get(context.Background(), key, after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("the driver pod was made again (resourceVersion %s, then %s)", before.ResourceVersion, after.ResourceVersion)
	}
	for _, v := range after.Spec.Volumes {
		if v.ConfigMap != nil && strings.HasPrefix(v.Name, "spark-conf-volume") {
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: v.ConfigMap.Name}, &corev1.ConfigMap{}); err != nil {
				t.Errorf("ConfigMap %s of the resumed submission: %v", v.ConfigMap.Name, err)
			}
		}
	}
}
