/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package leaderlock

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

const ns, name = "ops", "lock"

// setup starts a lock of identity "standby" over a Lease held by "leader", on a fake clock,
// and returns it once its watch has synced.
func setup(t *testing.T) (*Lock, *fake.Clientset, *timerClock) {
	t.Helper()
	now := metav1.NewMicroTime(time.Now())
	cs := fake.NewClientset(&coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("leader"), LeaseDurationSeconds: ptr.To[int32](15),
			AcquireTime: &now, RenewTime: &now},
	})
	clk := &timerClock{FakeClock: clocktesting.NewFakeClock(time.Now())}
	l := New(noWatchList{cs.CoordinationV1()}, ns, name, "standby", nil)
	l.clock = clk
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = l.Start(ctx) }()
	poll(t, "the watch to sync", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.seen.synced
	})
	return l, cs, clk
}

// poll waits until cond holds, for 10 seconds at most.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// timerClock is a fake clock that keeps the deadline of every timer made on it: a Get that has
// made one for a deadline has read the lease as the watch then showed it, and waits for that
// deadline (or a change of the lease) and nothing else.
type timerClock struct {
	*clocktesting.FakeClock
	mu    sync.Mutex
	armed []time.Time
}

func (c *timerClock) NewTimer(d time.Duration) clock.Timer {
	at := c.Now().Add(d)
	timer := c.FakeClock.NewTimer(d)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed = append(c.armed, at)
	return timer
}

// waitsUntil waits until a timer was made for deadline, then checks that Get has not returned:
// the lock has taken in the lease as it is now, and will wait for deadline.
func waitsUntil(t *testing.T, clk *timerClock, ch <-chan got, deadline time.Time, what string) {
	t.Helper()
	poll(t, what+": a wait until "+deadline.Format(time.StampMilli), func() bool {
		clk.mu.Lock()
		defer clk.mu.Unlock()
		return slices.ContainsFunc(clk.armed, deadline.Equal)
	})
	blocked(t, ch, what)
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

// blocked checks that Get has not returned. It is called once nothing can end the wait: the
// lock is seen waiting for a later deadline (waitsUntil), or the fake clock was stepped short
// of it (a fake clock fires its timers within Step).
func blocked(t *testing.T, ch <-chan got, what string) {
	t.Helper()
	select {
	case g := <-ch:
		t.Fatalf("%s: Get returned (%+v, %v), want it to wait", what, g.record, g.err)
	default:
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

func TestReleasedLeaseEndsTheWait(t *testing.T) {
	l, cs, clk := setup(t)
	ch := get(l)
	waitsUntil(t, clk, ch, clk.Now().Add(15*time.Second), "lease held")
	update(t, cs, "", 1) // as client-go's elector releases
	if r := returned(t, ch, "lease released"); r.HolderIdentity != "" {
		t.Errorf("holder %q after the release", r.HolderIdentity)
	}
}

func TestRenewedLeaseKeepsTheWaitAndRunOutEndsIt(t *testing.T) {
	l, cs, clk := setup(t)
	ch := get(l)
	waitsUntil(t, clk, ch, clk.Now().Add(15*time.Second), "lease held")
	// Renewed every 10 s for 30 s: twice the lease duration, never run out. Each renewal moves
	// the wait to 15 s after the watch saw it.
	for range 3 {
		clk.Step(10 * time.Second)
		update(t, cs, "leader", 15)
		waitsUntil(t, clk, ch, clk.Now().Add(15*time.Second), "lease renewed")
	}
	// No more renewals: it runs out 15 s after the watch saw the last one.
	clk.Step(14 * time.Second)
	blocked(t, ch, "lease 1 s from running out")
	clk.Step(2 * time.Second)
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
