/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkconnect

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/sparkpod"
	"github.com/sparkop/spark-operator/test/cluster"
)

// holdOnce is a batch scheduler that holds each server (with retryAfter, if set) until the test
// opens it, and admits every server after that. With waking it says it wakes what it holds (and
// never does); with objects it wants a ConfigMap for each session's runs.
type holdOnce struct {
	name       string
	retryAfter time.Duration
	waking     bool
	open       atomic.Bool
}

func (h *holdOnce) Name() string { return h.name }

func (h *holdOnce) Admit(context.Context, scheduler.Workload) (scheduler.Decision, error) {
	if !h.open.Load() {
		return scheduler.Decision{Reason: "held until opened", RetryAfter: h.retryAfter}, nil
	}
	return scheduler.Decision{Admit: true}, nil
}

func (h *holdOnce) Release(context.Context, scheduler.Workload) error { return nil }

func (h *holdOnce) WakesHeldWorkloads() bool { return h.waking }

// withObjects is holdOnce wanting a ConfigMap before each session's server.
type withObjects struct{ *holdOnce }

func (withObjects) RunObjects(_ context.Context, w scheduler.Workload, _ scheduler.Decision) ([]client.Object, error) {
	return []client.Object{&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: w.Key.Name + "-group"},
		Data:       map[string]string{"queue": w.Queue},
	}}, nil
}

// queuedRetryInterval is the test controllers' QueuedRetryInterval.
const queuedRetryInterval = time.Second

// startController runs the SparkConnect controller for ns, with s as the operator's default
// batch scheduler, until the test ends, and returns its reconciler.
func startController(t *testing.T, ns string, s scheduler.Interface) *Reconciler {
	t.Helper()
	mgr, err := ctrl.NewManager(cluster.Config(t), ctrl.Options{
		Scheme:                 cluster.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Schedulers: scheduler.NewRegistry(s), DefaultBatchScheduler: s.Name(), QueuedRetryInterval: queuedRetryInterval}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	cluster.StartManager(t, mgr)
	return r
}

func session(ns, name string) *v1alpha1.SparkConnect {
	return &v1alpha1.SparkConnect{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.SparkConnectSpec{
			SparkVersion: "4.0.4",
			Image:        ptr.To("docker.io/apache/spark:4.0.4"),
			Executor:     v1alpha1.ExecutorSpec{Instances: ptr.To(int32(1))},
		},
	}
}

// waitServer waits for the session's server pod and returns it.
func waitServer(t *testing.T, c client.Client, conn *v1alpha1.SparkConnect) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	cluster.Eventually(t, 20*time.Second, "the server pod of "+conn.Name, func() (bool, error) {
		err := c.Get(context.Background(), client.ObjectKey{Namespace: conn.Namespace, Name: conn.ServerPodName()}, pod)
		return err == nil, client.IgnoreNotFound(err)
	})
	return pod
}

// TestHeldSessionsAreAskedAgain: a session its batch scheduler holds is asked again, as an
// application is: after the controller's retry interval when the scheduler does not wake what
// it holds, after the decision's RetryAfter when it names one (even for a scheduler that says
// it wakes them). Once the session shows it is held, a reconcile of it as stored asks to come
// back after that delay; opened, the scheduler admits it when it comes back, with nothing else
// about it changed.
func TestHeldSessionsAreAskedAgain(t *testing.T) {
	c := cluster.Client(t)
	tests := []struct {
		name  string
		s     *holdOnce
		retry time.Duration
	}{
		{name: "a scheduler that does not wake", s: &holdOnce{name: "polled"}, retry: queuedRetryInterval},
		{name: "a decision's RetryAfter", s: &holdOnce{name: "waking", waking: true, retryAfter: 500 * time.Millisecond},
			retry: 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := cluster.Namespace(t, c, "connect-plugin")
			r := startController(t, ns, tt.s)
			conn := session(ns, "held")
			if err := c.Create(context.Background(), conn); err != nil {
				t.Fatal(err)
			}
			cluster.Eventually(t, 20*time.Second, "the session shown held", func() (bool, error) {
				got := &v1alpha1.SparkConnect{}
				err := c.Get(context.Background(), client.ObjectKeyFromObject(conn), got)
				cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionServerPodReady)
				return err == nil && cond != nil && cond.Reason == v1alpha1.ReasonQueued, err
			})
			if res := reconcileAsStored(t, c, r, conn); res.RequeueAfter != tt.retry {
				t.Errorf("a reconcile of the held session returned %+v, want it back after %s", res, tt.retry)
			}
			tt.s.open.Store(true)
			waitServer(t, c, conn)
		})
	}
}

// reconcileAsStored waits until r's cache has conn as the API server stores it, then
// reconciles it once, beside the manager's own reconciles, and returns the result.
func reconcileAsStored(t *testing.T, c client.Client, r *Reconciler, conn *v1alpha1.SparkConnect) ctrl.Result {
	t.Helper()
	cluster.InCache(t, c, r.Client, conn)
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(conn)})
	if err != nil {
		t.Fatalf("reconciling %s: %v", conn.Name, err)
	}
	return res
}

// TestSessionRunObjects: the objects a session's batch scheduler wants for the run exist before
// its server pod, owned by the session, and go when it is deleted; the admitting scheduler is
// recorded in status.server.batchScheduler.
func TestSessionRunObjects(t *testing.T) {
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "connect-plugin")
	objects := &holdOnce{name: "objects"}
	objects.open.Store(true)
	startController(t, ns, withObjects{objects})
	conn := session(ns, "grouped")
	conn.Spec.BatchSchedulerOptions = &v1alpha1.BatchSchedulerOptions{Queue: ptr.To("q1")}
	if err := c.Create(context.Background(), conn); err != nil {
		t.Fatal(err)
	}
	pod := waitServer(t, c, conn)
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "grouped-group"}, cm); err != nil {
		t.Fatal(err)
	}
	want := []metav1.OwnerReference{{APIVersion: "sparkoperator.k8s.io/v1alpha1", Kind: "SparkConnect", Name: "grouped", UID: conn.UID}}
	if diff := cmp.Diff(want, cm.OwnerReferences); diff != "" {
		t.Errorf("owners (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"queue": "q1"}, cm.Data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	// The test cluster has one etcd, whose revisions order the writes: the ConfigMap's
	// creation came before the pod's.
	cmRV, _ := strconv.ParseInt(cm.ResourceVersion, 10, 64)
	podRV, _ := strconv.ParseInt(pod.ResourceVersion, 10, 64)
	if cm.ResourceVersion != "" && cmRV >= podRV {
		t.Errorf("ConfigMap (revision %d) created after the server pod (revision %d)", cmRV, podRV)
	}
	cluster.Eventually(t, 20*time.Second, "status.server.batchScheduler", func() (bool, error) {
		got := &v1alpha1.SparkConnect{}
		err := c.Get(context.Background(), client.ObjectKeyFromObject(conn), got)
		return err == nil && got.Status.Server.BatchScheduler == "objects", err
	})
	if err := c.Delete(context.Background(), conn); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 60*time.Second, "the ConfigMap to go with the session", func() (bool, error) {
		err := c.Get(context.Background(), client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// TestAdmittingSchedulerFromTheServerPod: a server pod created by a reconcile whose status write
// then failed names its admitting scheduler itself; the next reconcile records it in
// status.server.batchScheduler, so the run is released to that scheduler.
func TestAdmittingSchedulerFromTheServerPod(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "connect-plugin")
	conn := session(ns, "recorded")
	if err := c.Create(ctx, conn); err != nil {
		t.Fatal(err)
	}
	conn.Status.Server.SubmissionID = "sub-1"
	if err := c.Status().Update(ctx, conn); err != nil {
		t.Fatal(err)
	}
	pod, err := sparkpod.ConnectServerPod(conn, sparkpod.RoleScheduling{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Annotations = map[string]string{scheduler.AnnotationAdmittedBy: "earlier"}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	startController(t, ns, &holdOnce{name: "earlier"})
	cluster.Eventually(t, 20*time.Second, "status.server.batchScheduler from the server pod", func() (bool, error) {
		got := &v1alpha1.SparkConnect{}
		err := c.Get(ctx, client.ObjectKeyFromObject(conn), got)
		return err == nil && got.Status.Server.BatchScheduler == "earlier", err
	})
}
