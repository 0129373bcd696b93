/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package leaderlock

import (
	"context"
	"strconv"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

const ns, name = "ops", "lock"

// setup starts a lock of identity "standby" over a Lease held by "leader", on a fake clock,
// and returns it once its watch has synced.
func setup(t *testing.T) (*Lock, *fake.Clientset, *clocktesting.FakeClock) {
	t.Helper()
	now := metav1.NewMicroTime(time.Now())
	cs := fake.NewClientset(&coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("leader"), LeaseDurationSeconds: ptr.To[int32](15),
			AcquireTime: &now, RenewTime: &now},
	})
	clk := clocktesting.NewFakeClock(time.Now())
	l := New(noWatchList{cs.CoordinationV1()}, ns, name, "standby", nil)
	l.clock = clk
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = l.Start(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		synced := l.seen.synced
		l.mu.Unlock()
		if synced {
			return l, cs, clk
		}
		if time.Now().After(deadline) {
			t.Fatal("the watch did not sync")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// noWatchList is a fake client, which cannot stream an initial list, saying so.
type noWatchList struct {
	coordinationv1client.LeasesGetter
}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

type got struct {
	record *rl.LeaderElectionRecord
	err    error
}

func get(l *Lock) <-chan got {
	ch := make(chan got, 1)
	go func() {
		r, _, err := l.Get(context.Background())
		ch <- got{r, err}
	}()
	return ch
}

func blocked(t *testing.T, ch <-chan got, what string) {
	t.Helper()
	select {
	case g := <-ch:
		t.Fatalf("%s: Get returned (%+v, %v), want it to wait", what, g.record, g.err)
	case <-time.After(200 * time.Millisecond):
	}
}

func returned(t *testing.T, ch <-chan got, what string) *rl.LeaderElectionRecord {
	t.Helper()
	select {
	case g := <-ch:
		if g.err != nil {
			t.Fatalf("%s: %v", what, g.err)
		}
		return g.record
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: Get still waits", what)
	}
	return nil
}

var versions = 1

func update(t *testing.T, cs *fake.Clientset, holder string, duration int32) {
	t.Helper()
	lease, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.NewMicroTime(time.Now())
	// The fake client does not version what it stores; the API server does, on every write.
	versions++
	lease.ResourceVersion = strconv.Itoa(versions)
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds, lease.Spec.RenewTime = ptr.To(holder), ptr.To(duration), &now
	if _, err := cs.CoordinationV1().Leases(ns).Update(context.Background(), lease, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// step advances the fake clock once Get waits on it.
func step(t *testing.T, clk *clocktesting.FakeClock, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("nothing waits on the clock")
		}
		time.Sleep(5 * time.Millisecond)
	}
	clk.Step(d)
}

func TestReleasedLeaseEndsTheWait(t *testing.T) {
	l, cs, _ := setup(t)
	ch := get(l)
	blocked(t, ch, "lease held")
	update(t, cs, "", 1) // as client-go's elector releases
	if r := returned(t, ch, "lease released"); r.HolderIdentity != "" {
		t.Errorf("holder %q after the release", r.HolderIdentity)
	}
}

func TestRenewedLeaseKeepsTheWaitAndRunOutEndsIt(t *testing.T) {
	l, cs, clk := setup(t)
	ch := get(l)
	// Renewed every 10 s for 30 s: twice the lease duration, never run out.
	for range 3 {
		step(t, clk, 10*time.Second)
		update(t, cs, "leader", 15)
		blocked(t, ch, "lease renewed")
	}
	// No more renewals: it runs out 15 s after the watch saw the last one.
	step(t, clk, 14*time.Second)
	blocked(t, ch, "lease 1 s from running out")
	step(t, clk, 2*time.Second)
	if r := returned(t, ch, "lease run out"); r.HolderIdentity != "" {
		t.Errorf("a lease run out is returned held by %q, want vacant, so that the elector takes it", r.HolderIdentity)
	}
}

func TestHeldLeaseReadBeforeTheWatchIsNotVacant(t *testing.T) {
	l, _, clk := setup(t)
	// The watch saw the lease 16 s ago, but the read finds a renewal it has not seen yet.
	clk.Step(16 * time.Second)
	l.mu.Lock()
	l.seen.raw = []byte("an older record")
	l.mu.Unlock()
	r, _, err := l.Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.HolderIdentity != "leader" {
		t.Errorf("holder %q, want the leader's: the read is newer than the watch", r.HolderIdentity)
	}
}
