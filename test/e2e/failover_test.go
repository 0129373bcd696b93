/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestFailoverLosesAndDuplicatesNothing runs two operators with leader election, kills the
// leader (SIGKILL: its lease is not released) while applications are being created and
// submitted, and checks that the standby takes over and that every application runs with
// exactly one driver, created once.
func TestFailoverLosesAndDuplicatesNothing(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	cs := kubernetes.NewForConfigOrDie(cluster.Config(t))
	ns := cluster.Namespace(t, c, "e2e-failover")
	const apps = 40
	const lock = "failover-lock"
	// A short lease, so the test waits seconds rather than the default 15 s.
	elect := []string{"--leader-elect", "--leader-election-namespace", ns, "--leader-election-id", lock,
		"--leader-election-lease-duration", "6s", "--leader-election-renew-deadline", "4s", "--leader-election-retry-period", "1s"}
	holder := func() string {
		lease := &coordinationv1.Lease{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: lock}, lease); err != nil {
			return ""
		}
		return ptr.Deref(lease.Spec.HolderIdentity, "")
	}

	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: v1beta2.SparkRoleLabel + "=" + v1beta2.SparkRoleDriver})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	created := map[string]int{}
	drivers := make(chan struct{}, apps*2)
	go func() {
		for ev := range w.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Added {
				mu.Lock()
				created[pod.Name]++
				mu.Unlock()
				drivers <- struct{}{}
			}
		}
	}()
	defer w.Stop()

	leader := startOperator(t, ns, elect...)
	var first string
	cluster.Eventually(t, 30*time.Second, "the first operator to lead", func() (bool, error) {
		first = holder()
		return first != "", nil
	})
	startOperator(t, ns, elect...) // the standby

	// Half the applications, then the kill as soon as some have drivers (so submissions are
	// in flight), then the other half while no one leads.
	create := func(from, to int) {
		for i := from; i < to; i++ {
			app := cluster.SparkPi(ns, fmt.Sprintf("app-%02d", i))
			if err := c.Create(ctx, app); err != nil {
				t.Fatal(err)
			}
		}
	}
	create(0, apps/2)
	for range 5 {
		select {
		case <-drivers:
		case <-time.After(30 * time.Second):
			t.Fatalf("the leader created no drivers; log: %s", leader.Log)
		}
	}
	leader.Kill()
	create(apps/2, apps)

	cluster.Eventually(t, 60*time.Second, "the standby to take over", func() (bool, error) {
		h := holder()
		return h != "" && h != first, nil
	})
	waitAllRunning(t, c, ns, apps)
	mu.Lock()
	defer mu.Unlock()
	requireCreatedOnce(t, ns, apps, created)
	if len(created) != apps {
		t.Errorf("%d driver pods created for %d applications", len(created), apps)
	}
}
