/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package helm

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestTwoReplicas installs the chart with two controller and two webhook replicas (leader
// election on, as by default) and runs applications whose drivers run on the cluster's
// simulated nodes, while the operator runs on the real node:
//
//   - the leader pod is deleted during a burst of 50 applications: a standby takes over, every
//     application completes, each with one driver pod and one submission attempt;
//   - a `helm upgrade` that changes the image rolls both Deployments (maxUnavailable 0) while
//     applications are created all along, at least 100: the webhook refuses none, a ready
//     webhook endpoint is there throughout, and each application completes with one driver.
func TestTwoReplicas(t *testing.T) {
	c, _ := cluster.Clients(t, realNode.Kubeconfig(t))
	ns := cluster.Namespace(t, c, "ha")
	r := install(t, "so-ha", "so-ha", "--set", "fullnameOverride=so-ha", "--set", "spark.jobNamespaces={"+ns+"}",
		"--set", "controller.replicas=2", "--set", "webhook.replicas=2")
	r.requireValidatedThroughService(t, ns)
	r.requireRollsWithoutUnavailable(t)
	drivers := cluster.RecordDrivers(t, r.cs, ns)

	burst := appNames("burst", 50)
	r.createWithLeaderDeleted(t, ns, burst, drivers)
	r.requireAllCompleted(t, ns, burst)
	drivers.RequireOneEach(t, burst)
	if t.Failed() {
		return
	}

	rolled := r.upgradeImageUnderLoad(t, ns, 100)
	r.requireAllCompleted(t, ns, rolled)
	drivers.RequireOneEach(t, rolled)
}

// simulatedDriver is an application whose driver runs on a simulated node for a few seconds
// and ends successfully (kwok plays it; hack/kwok/stages.yaml).
func (r *release) simulatedDriver(ns, name string) *v1beta2.SparkApplication {
	app := cluster.SparkPi(ns, name)
	app.Spec.Driver.ServiceAccount = ptr.To(r.name + "-spark")
	app.Spec.Driver.Annotations = map[string]string{"kwok.sparkop.dev/run-seconds": "2"}
	app.Spec.Driver.Tolerations = []corev1.Toleration{{Key: "sparkop.dev/simulated", Operator: corev1.TolerationOpEqual,
		Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	app.Spec.NodeSelector = map[string]string{"type": "kwok"}
	return app
}

func appNames(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	return names
}

// requireRollsWithoutUnavailable: both Deployments roll a new pod in before an old one goes.
func (r *release) requireRollsWithoutUnavailable(t *testing.T) {
	t.Helper()
	for _, component := range []string{"controller", "webhook"} {
		var d appsv1.Deployment
		if err := r.c.Get(context.Background(), client.ObjectKey{Namespace: r.namespace, Name: r.name + "-" + component}, &d); err != nil {
			t.Fatal(err)
		}
		ru := d.Spec.Strategy.RollingUpdate
		if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 {
			t.Errorf("the %s Deployment's strategy is %+v, want a rolling update with maxUnavailable 0", component, d.Spec.Strategy)
		}
	}
}

// lease is the controller's leader-election Lease, nil before a replica made it.
func (r *release) lease(t *testing.T) *coordinationv1.Lease {
	t.Helper()
	var lease coordinationv1.Lease
	err := r.c.Get(context.Background(), client.ObjectKey{Namespace: r.namespace, Name: r.name + "-controller-lock"}, &lease)
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	if err != nil {
		return nil
	}
	return &lease
}

// leader is the name of the pod holding the controller's Lease, empty if none.
func (r *release) leader(t *testing.T) string {
	t.Helper()
	lease := r.lease(t)
	if lease == nil {
		return ""
	}
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	if i := strings.LastIndex(holder, "_"); i > 0 {
		return holder[:i] // the identity is the pod's host name and a unique suffix
	}
	return holder
}

// createWithLeaderDeleted creates the first half of names, waits until the leader has made 5
// of their drivers, deletes the leader's pod as a user or a drain would (SIGTERM, its grace
// period) and creates the second half at once; it waits until another pod leads.
func (r *release) createWithLeaderDeleted(t *testing.T, ns string, names []string, drivers *cluster.DriverRecord) {
	t.Helper()
	ctx := context.Background()
	half := len(names) / 2
	for _, name := range names[:half] {
		if err := r.c.Create(ctx, r.simulatedDriver(ns, name)); err != nil {
			t.Fatal(err)
		}
	}
	var leader string
	cluster.Eventually(t, 2*time.Minute, "the leader to make drivers", func() (bool, error) {
		leader = r.leader(t)
		return leader != "" && drivers.Count() >= 5, nil
	})
	if err := r.cs.CoreV1().Pods(r.namespace).Delete(ctx, leader, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("deleted the leader %s with %d drivers made", leader, drivers.Count())
	for _, name := range names[half:] {
		if err := r.c.Create(ctx, r.simulatedDriver(ns, name)); err != nil {
			t.Fatal(err)
		}
	}
	cluster.Eventually(t, 3*time.Minute, "another pod to lead", func() (bool, error) {
		now := r.leader(t)
		return now != "" && now != leader, nil
	})
	t.Logf("%s leads", r.leader(t))
}

// requireAllCompleted waits until every application of names is COMPLETED, failing at once if
// one fails, and requires one submission attempt of each.
func (r *release) requireAllCompleted(t *testing.T, ns string, names []string) {
	t.Helper()
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var apps v1beta2.SparkApplicationList
	var left []string
	defer func() {
		if t.Failed() {
			t.Logf("not completed: %v", left)
		}
	}()
	cluster.Eventually(t, 10*time.Minute, fmt.Sprintf("%d applications to complete", len(names)), func() (bool, error) {
		if err := r.c.List(context.Background(), &apps, client.InNamespace(ns)); err != nil {
			return false, err
		}
		left = left[:0]
		found := 0
		for _, a := range apps.Items {
			if !want[a.Name] {
				continue
			}
			found++
			switch a.Status.AppState.State {
			case v1beta2.ApplicationStateCompleted:
			case v1beta2.ApplicationStateFailed, v1beta2.ApplicationStateFailedSubmission:
				t.Fatalf("%s ended %s: %s\n%s", a.Name, a.Status.AppState.State, a.Status.AppState.ErrorMessage, r.diagnostics())
			default:
				left = append(left, a.Name+" "+string(a.Status.AppState.State))
			}
		}
		if found < len(names) {
			return false, fmt.Errorf("only %d of the %d applications exist: lost", found, len(names))
		}
		return len(left) == 0, nil
	})
	for _, a := range apps.Items {
		if want[a.Name] && a.Status.SubmissionAttempts != 1 {
			t.Errorf("%s: %d submission attempts, want 1", a.Name, a.Status.SubmissionAttempts)
		}
	}
}
