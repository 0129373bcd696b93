/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestNodeLost: a live driver that is not Ready on a node not Ready for longer than the timeout
// is lost; before then, how long to wait; a Ready driver, a Ready node, a finished driver, or a
// zero timeout: nothing.
func TestNodeLost(t *testing.T) {
	since := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	unknown := &corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown",
		Message: "Kubelet stopped posting node status.", LastTransitionTime: metav1.Time{Time: since}}
	ready := &corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Time{Time: since}}
	on := func(phase corev1.PodPhase, podReady corev1.ConditionStatus) *corev1.Pod {
		pod := podIn(phase)
		pod.Spec.NodeName = "node-1"
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: podReady}}
		return pod
	}
	const timeout = 5 * time.Minute
	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		node     *corev1.NodeCondition
		after    time.Duration
		timeout  time.Duration
		wantMsg  string
		wantWait time.Duration
	}{
		{"within the timeout", on(corev1.PodRunning, corev1.ConditionFalse), unknown, time.Minute, timeout, "", 4 * time.Minute},
		{"past it", on(corev1.PodRunning, corev1.ConditionFalse), unknown, 6 * time.Minute, timeout,
			"driver pod app-driver is lost: its node node-1 has not been Ready since 2026-01-01T12:00:00Z " +
				"(NodeStatusUnknown: Kubelet stopped posting node status.), more than 5m0s", 0},
		{"pending, placed, past it", on(corev1.PodPending, corev1.ConditionFalse), unknown, 6 * time.Minute, timeout,
			"driver pod app-driver is lost: its node node-1 has not been Ready since 2026-01-01T12:00:00Z " +
				"(NodeStatusUnknown: Kubelet stopped posting node status.), more than 5m0s", 0},
		{"the driver Ready", on(corev1.PodRunning, corev1.ConditionTrue), unknown, time.Hour, timeout, "", 0},
		{"the node Ready", on(corev1.PodRunning, corev1.ConditionFalse), ready, time.Hour, timeout, "", 0},
		{"the node unknown to the operator", on(corev1.PodRunning, corev1.ConditionFalse), nil, time.Hour, timeout, "", 0},
		{"finished", on(corev1.PodFailed, corev1.ConditionFalse), unknown, time.Hour, timeout, "", 0},
		{"not placed", podIn(corev1.PodPending), unknown, time.Hour, timeout, "", 0},
		{"no timeout", on(corev1.PodRunning, corev1.ConditionFalse), unknown, time.Hour, 0, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodeReady := func(name string, _ time.Time) *corev1.NodeCondition {
				if name != "node-1" {
					t.Errorf("asked for node %q", name)
				}
				return tc.node
			}
			msg, wait := nodeLost(tc.pod, nodeReady, since.Add(tc.after), tc.timeout)
			if diff := cmp.Diff([]any{tc.wantMsg, tc.wantWait}, []any{msg, wait}); diff != "" {
				t.Errorf("[message, wait] (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDriverNodeLost runs an application through the real API server whose driver is on a
// node that then stops being Ready (its status written as the node controller writes it for a
// kubelet that stopped answering, the driver marked not Ready): past the timeout the run fails
// saying so, with a DriverLost event, and its driver is deleted.
func TestDriverNodeLost(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	e := &env{c: c, ns: cluster.Namespace(t, c, "sparkapp-node-lost"),
		sub: &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}, gate: &gate{}}}
	startManager(t, []string{e.ns}, e.sub, Options{NodeLostTimeout: 2 * time.Second})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "lost-" + rand.String(6)}}
	if err := c.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, node) })
	setNodeReady(t, c, node, corev1.ConditionTrue)

	key := e.create(t, newApp(e.ns, "pi", func(a *v1beta2.SparkApplication) {
		a.Spec.Driver.NodeSelector = map[string]string{"sparkop.dev/no-such-node": "true"}
	}))
	driver := e.driver(t, e.waitState(t, key, v1beta2.ApplicationStateSubmitted, 30*time.Second))
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: driver.Name, Namespace: driver.Namespace},
		Target: corev1.ObjectReference{Kind: "Node", Name: node.Name}}
	if err := c.SubResource("binding").Create(ctx, driver, binding); err != nil {
		t.Fatal(err)
	}
	driver.Spec.NodeName = node.Name
	t.Cleanup(func() { _ = c.Delete(ctx, driver, client.GracePeriodSeconds(0)) })
	bindAndWait(t, c, driver, corev1.PodRunning, nil)
	e.waitState(t, key, v1beta2.ApplicationStateRunning, 30*time.Second)

	setNodeReady(t, c, node, corev1.ConditionUnknown)
	cluster.Eventually(t, 10*time.Second, "the driver marked not Ready", func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(driver), driver); err != nil {
			return false, err
		}
		driver.Status.Conditions = append(driver.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady,
			Status: corev1.ConditionFalse, Reason: "NodeNotReady", LastTransitionTime: metav1.Now()})
		err := c.Status().Update(ctx, driver)
		return err == nil, ignoreConflict(err)
	})
	app := e.waitState(t, key, v1beta2.ApplicationStateFailed, 40*time.Second)
	want := "driver pod pi-driver is lost: its node " + node.Name + " has not been Ready since "
	if msg := app.Status.AppState.ErrorMessage; !strings.HasPrefix(msg, want) || !strings.HasSuffix(msg, "more than 2s") {
		t.Errorf("errorMessage = %q, want it to start %q and name the timeout", msg, want)
	}
	e.waitEvents(t, "pi", "DriverLost")
	if err := c.Get(ctx, client.ObjectKeyFromObject(driver), driver); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	} else if err == nil && driver.DeletionTimestamp.IsZero() {
		t.Errorf("driver pod %s not deleted", driver.Name)
	}
}

// setNodeReady writes the node's Ready condition, as its kubelet or the node controller does.
func setNodeReady(t *testing.T, c client.Client, node *corev1.Node, status corev1.ConditionStatus) {
	t.Helper()
	ctx := context.Background()
	cluster.Eventually(t, 10*time.Second, "node "+node.Name+" Ready="+string(status), func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(node), node); err != nil {
			return false, err
		}
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status,
			Reason: "Test", Message: "written by the test", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		err := c.Status().Update(ctx, node)
		return err == nil, ignoreConflict(err)
	})
}

func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}
