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
	"slices"
	"strconv"
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

// TestGracefulStopReleasesTheLease stops a leader as a rolling update does (SIGTERM) and checks
// that it hands over by releasing its lease on its way out, not by letting it run out: a watch
// of the Lease sees a version without a holder (the release) right before the standby's first,
// one leader transition later. A leader that did not release would leave the standby to take a
// lease run out, held by it until then. The standby then serves a new application created after
// the signal: its driver is created after the release (the revisions of this one-etcd cluster
// order the writes), when the stopped leader's controllers had stopped (the manager stops them
// before it releases), so the standby, not the stopping leader, made it. How soon the handover
// comes is measured by the benchmark (bench --scenario failover: graceful_ms).
func TestGracefulStopReleasesTheLease(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	cs := kubernetes.NewForConfigOrDie(cluster.Config(t))
	ns := cluster.Namespace(t, c, "e2e-handover")
	const lock = "handover-lock"
	elect := []string{"--leader-elect", "--leader-election-namespace", ns, "--leader-election-id", lock}

	leader := startOperator(t, ns, elect...)
	leases := watchLease(t, cs, ns, lock)
	first := leases.waitHolder(t, "the first operator to lead", "")
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
	// take it up on their way out.
	leader.Terminate()
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	driver := waitCreated(t, w, "the new application's driver; standby log: "+standby.Log)
	leases.waitHolder(t, "the standby to lead", first)
	released, err := released(leases.versions(), first)
	if err != nil {
		t.Fatal(err)
	}
	if rv, _ := strconv.ParseInt(driver.ResourceVersion, 10, 64); rv <= released.revision {
		t.Errorf("the driver (revision %d) was created before the lease was released (revision %d): the stopping leader made it",
			rv, released.revision)
	}
	if code, exited := leader.WaitExit(time.Minute); !exited || code != 0 {
		t.Errorf("the leader stopped with SIGTERM: exited %t, exit code %d, want 0 (a clean stop); log: %s", exited, code, leader.Log)
	}
}

// waitCreated waits for the watch of one pod to see it created, and returns it as created.
func waitCreated(t *testing.T, w watch.Interface, what string) *corev1.Pod {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("the watch for %s ended", what)
			}
			if pod, isPod := ev.Object.(*corev1.Pod); isPod && ev.Type == watch.Added {
				return pod
			}
		case <-deadline:
			t.Fatalf("no %s within 2 minutes", what)
		}
	}
}

// leaseVersion is a version of a Lease as a watch delivered it.
type leaseVersion struct {
	revision    int64
	holder      string
	transitions int32
}

// leaseHistory is every version of a Lease a watch delivers from the moment it starts.
type leaseHistory struct {
	mu   sync.Mutex
	seen []leaseVersion
}

// watchLease watches the Lease ns/name, which may not exist yet, until the test ends.
func watchLease(t *testing.T, cs kubernetes.Interface, ns, name string) *leaseHistory {
	t.Helper()
	w, err := cs.CoordinationV1().Leases(ns).Watch(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	h := &leaseHistory{}
	go func() {
		for ev := range w.ResultChan() {
			lease, ok := ev.Object.(*coordinationv1.Lease)
			if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
				continue
			}
			rv, _ := strconv.ParseInt(lease.ResourceVersion, 10, 64)
			h.mu.Lock()
			h.seen = append(h.seen, leaseVersion{revision: rv, holder: ptr.Deref(lease.Spec.HolderIdentity, ""),
				transitions: ptr.Deref(lease.Spec.LeaseTransitions, 0)})
			h.mu.Unlock()
		}
	}()
	return h
}

func (h *leaseHistory) versions() []leaseVersion {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.seen)
}

// waitHolder waits until the watch has seen the Lease held by someone other than not, and
// returns the holder.
func (h *leaseHistory) waitHolder(t *testing.T, what, not string) string {
	t.Helper()
	var holder string
	cluster.Eventually(t, 60*time.Second, what, func() (bool, error) {
		for _, v := range h.versions() {
			if v.holder != "" && v.holder != not {
				holder = v.holder
				return true, nil
			}
		}
		return false, nil
	})
	return holder
}

// released finds, in versions, the first one held by another than first, and checks that the
// version right before it is first's release: no holder, the same leader transitions (the
// acquisition counts one more), after a version held by first. It returns the release.
func released(versions []leaseVersion, first string) (leaseVersion, error) {
	next := slices.IndexFunc(versions, func(v leaseVersion) bool { return v.holder != "" && v.holder != first })
	if next < 0 {
		return leaseVersion{}, fmt.Errorf("the lease was not taken from %s: %+v", first, versions)
	}
	before := slices.IndexFunc(versions, func(v leaseVersion) bool { return v.holder == first })
	if before < 0 || before >= next-1 || versions[next-1].holder != "" ||
		versions[next].transitions != versions[next-1].transitions+1 {
		return leaseVersion{}, fmt.Errorf("the lease went from %s to %s without a release right before (it ran out): versions %+v",
			first, versions[next].holder, versions)
	}
	return versions[next-1], nil
}
