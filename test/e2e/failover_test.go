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
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
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

// TestGracefulStopHandsOverWithinTheLease stops a leader as a rolling update does (SIGTERM) and
// checks that it releases the lease on its way out, so that the standby serves a new
// application well within the lease (default timing, 15 s): half of it here. A leader that did
// not release would keep the standby waiting for the lease to run out, 13 s or more after the
// signal (the lease less at most one renewal interval).
func TestGracefulStopHandsOverWithinTheLease(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	cs := kubernetes.NewForConfigOrDie(cluster.Config(t))
	ns := cluster.Namespace(t, c, "e2e-handover")
	const lock = "handover-lock"
	const lease = 15 * time.Second // the operator's default --leader-election-lease-duration
	elect := []string{"--leader-elect", "--leader-election-namespace", ns, "--leader-election-id", lock}
	holder := func() string {
		l := &coordinationv1.Lease{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: lock}, l); err != nil {
			return ""
		}
		return ptr.Deref(l.Spec.HolderIdentity, "")
	}

	leader := startOperator(t, ns, elect...)
	var first string
	cluster.Eventually(t, 30*time.Second, "the first operator to lead", func() (bool, error) {
		first = holder()
		return first != "", nil
	})
	standby := startOperator(t, ns, elect...)
	// The standby is in its steady state once it enters the election: the manager fills its
	// caches and warms its controllers before that.
	cluster.Eventually(t, 60*time.Second, "the standby to enter the election", func() (bool, error) {
		b, err := os.ReadFile(standby.Log)
		return err == nil && strings.Contains(string(b), "Attempting to acquire leader lease"), err
	})

	app := cluster.SparkPi(ns, "after-sigterm")
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", app.DriverPodName()).String(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// The signal first, then the application, so that the stopping leader's controllers do not
	// take it up on their way out; its exit is timed to check that.
	t0 := time.Now()
	leader.Terminate()
	exitedAt := make(chan time.Time, 1)
	go func() {
		leader.WaitExit(time.Minute)
		exitedAt <- time.Now()
	}()
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(2 * lease)
	var elapsed time.Duration
	for elapsed == 0 {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch of the driver pod ended")
			}
			if _, isPod := ev.Object.(*corev1.Pod); isPod && ev.Type == watch.Added {
				elapsed = time.Since(t0)
			}
		case <-deadline:
			t.Fatalf("no driver within %s of the leader's SIGTERM; standby log: %s", 2*lease, standby.Log)
		}
	}
	t.Logf("the standby created the new application's driver %.1f s after the leader's SIGTERM", elapsed.Seconds())
	if h := holder(); h == first || h == "" {
		t.Errorf("the lease is held by %q after the handover, the stopped leader was %q", h, first)
	}
	if elapsed > lease/2 {
		t.Errorf("the new application's driver came %.1f s after the leader's SIGTERM, more than half the lease (%s): the stopped leader did not release its lease",
			elapsed.Seconds(), lease)
	}
	if gone := <-exitedAt; gone.Sub(t0) > elapsed {
		t.Errorf("the driver came %.1f s after the SIGTERM, before the stopped leader exited (%.1f s): it, not the standby, made it",
			elapsed.Seconds(), gone.Sub(t0).Seconds())
	}
	if code, exited := leader.WaitExit(0); !exited || code != 0 {
		t.Errorf("the leader stopped with SIGTERM: exited %t, exit code %d, want 0 (a clean stop); log: %s", exited, code, leader.Log)
	}
}
