/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkconnect

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/internal/ssa"
	"github.com/sparkop/spark-operator/sparkpod"
	"github.com/sparkop/spark-operator/test/cluster"
)

// cachedClient starts a manager's cache for ns, set up as the operator's (only what it launched,
// without managed fields), and returns the manager.
func cachedClient(t *testing.T, ns string) ctrl.Manager {
	t.Helper()
	launched := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{v1beta2.LabelLaunchedByOperator: "true"})}
	mgr, err := ctrl.NewManager(cluster.Config(t), ctrl.Options{
		Scheme:                 cluster.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{ns: {}},
			DefaultTransform:  cache.TransformStripManagedFields(),
			ByObject:          map[client.Object]cache.ByObject{&corev1.Pod{}: launched, &corev1.Service{}: launched, &corev1.ConfigMap{}: launched},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	cluster.StartManager(t, mgr)
	return mgr
}

// TestServiceAndConfigMapApplied: the SparkConnect's Service and executor template ConfigMap
// are written with server-side apply. Both carry the operator's labels and the SparkConnect as
// their controller; once they are as the spec wants, a reconcile writes nothing and their
// resourceVersion stays; a spec change (spec.server.service, spec.executor.template) updates
// them, and what another controller added to them survives.
func TestServiceAndConfigMapApplied(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "connect-apply")
	mgr := cachedClient(t, ns)
	counter := cluster.CountWrites(mgr.GetClient())
	r := &Reconciler{Client: counter, APIReader: mgr.GetAPIReader(), Clock: clock.RealClock{}, Recorder: mgr.GetEventRecorder(ControllerName)}

	conn := &v1alpha1.SparkConnect{
		ObjectMeta: metav1.ObjectMeta{Name: "applied", Namespace: ns},
		Spec: v1alpha1.SparkConnectSpec{
			SparkVersion: "4.0.4",
			Image:        ptr.To("docker.io/apache/spark:4.0.4"),
			Server: v1alpha1.ServerSpec{Service: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "applied-grpc", Labels: map[string]string{"tier": "connect"}, Annotations: map[string]string{"lb": "internal"}},
				Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "grpc", Port: 15002}}},
			}},
			Executor: v1alpha1.ExecutorSpec{SparkPodSpec: v1alpha1.SparkPodSpec{Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"disk": "hdd"},
			}}}},
		},
	}
	if err := c.Create(ctx, conn); err != nil {
		t.Fatal(err)
	}
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(conn)}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "applied-grpc"}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: conn.ExecutorTemplateConfigMapName()}}
	get := func(obj client.Object) {
		t.Helper()
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
	}

	cluster.Eventually(t, 20*time.Second, "the SparkConnect in the cache", func() (bool, error) {
		err := mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(conn), &v1alpha1.SparkConnect{})
		return err == nil, client.IgnoreNotFound(err)
	})
	reconcile()
	get(conn)
	get(svc)
	get(cm)
	for _, obj := range []client.Object{svc, cm} {
		l := obj.GetLabels()
		if !metav1.IsControlledBy(obj, conn) || l[v1beta2.LabelLaunchedByOperator] != "true" || l[v1alpha1.LabelConnectName] != conn.Name ||
			l[v1alpha1.LabelCreatedByOperator] != "true" || obj.GetAnnotations()[ssa.AppliedAnnotation] == "" {
			t.Errorf("%s: owners %+v, labels %v, annotations %v", obj.GetName(), obj.GetOwnerReferences(), l, obj.GetAnnotations())
		}
	}
	if svc.Annotations["lb"] != "internal" || svc.Labels["tier"] != "connect" || svc.Spec.Type != corev1.ServiceTypeClusterIP || len(svc.Spec.Ports) != 1 ||
		svc.Spec.Ports[0].TargetPort.IntValue() != 15002 || svc.Spec.Selector[v1alpha1.LabelConnectName] != conn.Name {
		t.Errorf("Service: annotations %v, type %s, ports %+v, selector %v", svc.Annotations, svc.Spec.Type, svc.Spec.Ports, svc.Spec.Selector)
	}
	if !strings.Contains(cm.Data[sparkpod.ConnectExecutorTemplateKey], "disk: hdd") {
		t.Errorf("executor template = %q", cm.Data[sparkpod.ConnectExecutorTemplateKey])
	}

	// Another controller annotates and labels both.
	for _, obj := range []client.Object{svc, cm} {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			get(obj)
			obj.SetAnnotations(with(obj.GetAnnotations(), "example.com/lb-id", "abc"))
			obj.SetLabels(with(obj.GetLabels(), "example.com/team", "data"))
			return c.Update(ctx, obj)
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	// Once the cache has the objects as written, a reconcile costs no write.
	cluster.Eventually(t, 20*time.Second, "a reconcile without writes", func() (bool, error) {
		counter.Reset()
		reconcile()
		return counter.Writes() == 0, nil
	})
	get(svc)
	get(cm)
	svcVersion, cmVersion := svc.ResourceVersion, cm.ResourceVersion
	for range 3 {
		reconcile()
	}
	get(svc)
	get(cm)
	if n := counter.Writes(); n != 0 || svc.ResourceVersion != svcVersion || cm.ResourceVersion != cmVersion {
		t.Errorf("steady reconciles: %d writes, Service resourceVersion %s -> %s, ConfigMap %s -> %s",
			n, svcVersion, svc.ResourceVersion, cmVersion, cm.ResourceVersion)
	}

	// A spec change reaches both; what the other controller added stays.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		get(conn)
		conn.Spec.Server.Service.Spec.Type = corev1.ServiceTypeNodePort
		conn.Spec.Server.Service.Annotations["lb"] = "external"
		conn.Spec.Server.Service.Labels["tier"] = "grpc"
		conn.Spec.Executor.Template.Spec.NodeSelector["disk"] = "ssd"
		return c.Update(ctx, conn)
	})
	if err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 20*time.Second, "the Service and ConfigMap to follow the spec", func() (bool, error) {
		reconcile()
		get(svc)
		get(cm)
		return svc.Spec.Type == corev1.ServiceTypeNodePort && strings.Contains(cm.Data[sparkpod.ConnectExecutorTemplateKey], "disk: ssd"), nil
	})
	if svc.Annotations["lb"] != "external" || svc.Labels["tier"] != "grpc" || svc.Spec.Ports[0].NodePort == 0 {
		t.Errorf("Service after the change: annotations %v, labels %v, ports %+v", svc.Annotations, svc.Labels, svc.Spec.Ports)
	}
	for _, obj := range []client.Object{svc, cm} {
		if obj.GetAnnotations()["example.com/lb-id"] != "abc" || obj.GetLabels()["example.com/team"] != "data" ||
			obj.GetLabels()[v1beta2.LabelLaunchedByOperator] != "true" || !metav1.IsControlledBy(obj, conn) {
			t.Errorf("%s lost what others or the operator set: owners %+v, labels %v, annotations %v",
				obj.GetName(), obj.GetOwnerReferences(), obj.GetLabels(), obj.GetAnnotations())
		}
	}
}

// TestServiceNameTaken: a Service of the name that is not the SparkConnect's, even one the
// operator's cache does not hold, is left alone and reported.
func TestServiceNameTaken(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "connect-taken")
	mgr := cachedClient(t, ns)
	r := &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Clock: clock.RealClock{}, Recorder: mgr.GetEventRecorder(ControllerName)}

	conn := &v1alpha1.SparkConnect{
		ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: ns},
		Spec:       v1alpha1.SparkConnectSpec{SparkVersion: "4.0.4", Image: ptr.To("docker.io/apache/spark:4.0.4")},
	}
	// Someone else's, without the operator's label: the cache does not see it.
	other := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: conn.ServerServiceName(), Namespace: ns},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	for _, obj := range []client.Object{other, conn} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	cluster.Eventually(t, 20*time.Second, "the SparkConnect reported invalid", func() (bool, error) {
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(conn)}); err != nil {
			return false, err
		}
		got := &v1alpha1.SparkConnect{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(conn), got); err != nil {
			return false, err
		}
		cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionServerPodReady)
		return cond != nil && strings.Contains(cond.Message, "does not belong to this SparkConnect"), nil
	})
	after := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(other), after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != other.ResourceVersion || len(after.OwnerReferences) != 0 {
		t.Errorf("the other Service was written: resourceVersion %s -> %s, owners %+v", other.ResourceVersion, after.ResourceVersion, after.OwnerReferences)
	}
}

func with(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}
