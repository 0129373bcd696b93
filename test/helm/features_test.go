/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package helm

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestEveryFeatureRBAC installs the chart with every optional feature on
// (charts/spark-operator/ci/features-values.yaml: the gang scheduler by default with
// placeholders, batchScheduler: kubernetes, UI Ingresses, driver PodDisruptionBudgets,
// ResourceQuota enforcement, Spark Connect) and runs what uses them on the real node: an
// application under a ResourceQuota with a driver PodDisruptionBudget, admitted by the gang
// scheduler; a ScheduledSparkApplication whose run goes through the Workload API; a Spark
// Connect server with its executors. Neither the controller nor the webhook is refused a
// request: the chart grants every right they use.
func TestEveryFeatureRBAC(t *testing.T) {
	c, _ := cluster.Clients(t, realNode.Kubeconfig(t))
	ns := cluster.Namespace(t, c, "features")
	r := install(t, "so-features", "so-features", "-f", chartDir+"/ci/features-values.yaml",
		"--set", "fullnameOverride=so-features", "--set", "spark.jobNamespaces={"+ns+"}")
	r.requireValidatedThroughService(t, ns)
	ctx := context.Background()
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "room"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			corev1.ResourceRequestsMemory: resource.MustParse("20Gi"), corev1.ResourceRequestsCPU: resource.MustParse("10")}}}
	if err := r.c.Create(ctx, quota); err != nil {
		t.Fatal(err)
	}

	app := r.smallPi(ns, "pi")
	app.Spec.DriverPodDisruptionBudget = ptr.To(true)
	if err := r.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	r.waitCompleted(t, app)

	scheduled := &v1beta2.ScheduledSparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "every"},
		Spec: v1beta2.ScheduledSparkApplicationSpec{Schedule: "@every 10s", ConcurrencyPolicy: v1beta2.ConcurrencyForbid,
			Template: r.smallPi(ns, "").Spec}}
	scheduled.Spec.Template.BatchScheduler = ptr.To("kubernetes")
	if err := r.c.Create(ctx, scheduled); err != nil {
		t.Fatal(err)
	}
	var run string
	cluster.Eventually(t, 2*time.Minute, "the schedule's first run", func() (bool, error) {
		err := r.c.Get(ctx, client.ObjectKeyFromObject(scheduled), scheduled)
		run = scheduled.Status.LastRunName
		return run != "", err
	})
	scheduled.Spec.Suspend = ptr.To(true)
	if err := r.c.Update(ctx, scheduled); err != nil {
		t.Fatal(err)
	}
	r.waitCompleted(t, &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: run}})

	r.requireConnectReady(t, ns)
	r.noForbidden(t, "controller")
	r.noForbidden(t, "webhook")
}

// smallPi is SparkPi with a quarter of a CPU for the driver and its one executor, running as
// the chart's driver service account.
func (r *release) smallPi(ns, name string) *v1beta2.SparkApplication {
	app := cluster.SparkPi(ns, name)
	app.Spec.ImagePullPolicy = ptr.To("IfNotPresent")
	app.Spec.Arguments = []string{"10"}
	app.Spec.Driver.CoreRequest = ptr.To("250m")
	app.Spec.Driver.ServiceAccount = ptr.To(r.name + "-spark")
	app.Spec.Executor.CoreRequest = ptr.To("250m")
	app.Spec.Executor.Instances = ptr.To[int32](1)
	app.Spec.SparkConf = cluster.QuickJVM(app.Spec.SparkConf)
	return app
}

// requireConnectReady runs examples/spark-connect.yaml in ns until it is Ready.
func (r *release) requireConnectReady(t *testing.T, ns string) {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "examples", "spark-connect.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var sc v1alpha1.SparkConnect
	if err := yaml.UnmarshalStrict(data, &sc); err != nil {
		t.Fatal(err)
	}
	sc.Namespace = ns
	sc.Spec.Server.Template.Spec.ServiceAccountName = r.name + "-spark"
	sc.Spec.SparkConf = cluster.QuickJVM(sc.Spec.SparkConf)
	ctx := context.Background()
	if err := r.c.Create(ctx, &sc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.c.Delete(context.Background(), &sc) })
	cluster.Eventually(t, appTimeout, "the SparkConnect to be Ready", func() (bool, error) {
		if err := r.c.Get(ctx, client.ObjectKeyFromObject(&sc), &sc); err != nil {
			return false, err
		}
		if sc.Status.State == v1alpha1.SparkConnectStateFailed {
			t.Fatalf("the SparkConnect failed: %+v\n%s", sc.Status.Conditions, r.diagnostics())
		}
		return sc.Status.State == v1alpha1.SparkConnectStateReady, nil
	})
}
