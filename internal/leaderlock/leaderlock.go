/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package leaderlock is the operator's leader-election lock: a Lease, read and written as
// client-go's LeaseLock does, that a standby also watches.
//
// client-go's elector polls the lock: a standby reads the Lease every retry period (2 s with a
// jitter of up to 120% more), starts counting the lease duration from the first read at which
// it saw the leader's last renewal, and takes over at the first read after that has run out. So
// a standby takes over up to two polls (up to 8.8 s by default) later than the lease allows,
// and a released lease waits for the next poll. With this lock the standby's read waits, while
// another replica holds the lease, until the watch shows the lease released or run out: the
// duration counted from the moment the watch saw the leader's last renewal, on the standby's
// own clock, as client-go counts it. The elector then tries at once. A lease the watch has seen
// run out is handed to the elector as vacant (no holder); the elector's update of it carries the
// resourceVersion it was read with, so if the leader renewed in the meantime the update fails
// and nothing is taken.
//
// Without the watch (not yet synced, stopped, or not allowed by RBAC) the lock is the plain
// LeaseLock: reads return at once and the elector polls as before.
package leaderlock

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	toolscache "k8s.io/client-go/tools/cache"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
)

// Lock is a Lease lock whose Get, for a standby, waits until the lease can be taken. Start
// runs its watch; until it has synced, Get does not wait.
type Lock struct {
	inner  *rl.LeaseLock
	client coordinationv1client.LeasesGetter
	clock  clock.Clock

	mu sync.Mutex
	// seen is the Lease as the watch last saw it.
	seen observed
	// changed is closed, and replaced, whenever seen changes.
	changed  chan struct{}
	recorder record.EventRecorder
	// watching: Start has been called; gaveUp: a read waited syncWait for the watch to sync,
	// in vain, and reads no longer wait for it.
	watching, gaveUp bool
}

// syncWait is how long a read waits for a started watch's first sync, so that a standby's
// first read, at its start, already waits on the watch; the elector polls after it otherwise.
const syncWait = 10 * time.Second

// observed is the lease as the watch saw it, and when.
type observed struct {
	synced bool
	// absent: there is no Lease (deleted, or not created yet).
	absent bool
	// version is the Lease's resourceVersion: every renewal changes it (the record's times are
	// written to the second, so two renewals within a second have the same record).
	version string
	raw     []byte
	holder  string
	// at is when the watch saw this version (this renewal) first; duration is the lease duration
	// its holder wrote.
	at       time.Time
	duration time.Duration
}

// New returns a lock on the Lease namespace/name held under identity.
func New(client coordinationv1client.LeasesGetter, namespace, name, identity string, labels map[string]string) *Lock {
	l := &Lock{client: client, clock: clock.RealClock{}, changed: make(chan struct{})}
	l.inner = &rl.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: name},
		Client:     client,
		LockConfig: rl.ResourceLockConfig{Identity: identity, EventRecorder: l},
		Labels:     labels,
	}
	return l
}

// SetEventRecorder sets where the elector's events ("became leader") go; none until set.
func (l *Lock) SetEventRecorder(r record.EventRecorder) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recorder = r
}

// Get reads the Lease. If another replica holds it, it first waits until the watch shows the
// lease released or run out (or ctx ends); a lease the watch has seen run out, and which the
// read finds unchanged, is returned without a holder, so that the elector takes it now.
func (l *Lock) Get(ctx context.Context) (*rl.LeaderElectionRecord, []byte, error) {
	l.waitForChance(ctx)
	record, raw, err := l.inner.Get(ctx)
	if err != nil || record.HolderIdentity == "" || record.HolderIdentity == l.Identity() {
		return record, raw, err
	}
	if l.ranOut(raw) {
		vacant := *record
		vacant.HolderIdentity = ""
		if b, err := json.Marshal(vacant); err == nil {
			return &vacant, b, nil
		}
	}
	return record, raw, nil
}

// Create creates the Lease.
func (l *Lock) Create(ctx context.Context, ler rl.LeaderElectionRecord) error {
	return l.inner.Create(ctx, ler)
}

// Update writes the Lease as last read (its resourceVersion), so it fails if anyone wrote it
// since.
func (l *Lock) Update(ctx context.Context, ler rl.LeaderElectionRecord) error {
	return l.inner.Update(ctx, ler)
}

// RecordEvent records an event of the elector on the Lease.
func (l *Lock) RecordEvent(s string) { l.inner.RecordEvent(s) }

// Identity is this replica's identity in the Lease.
func (l *Lock) Identity() string { return l.inner.Identity() }

// Describe names the Lease.
func (l *Lock) Describe() string { return l.inner.Describe() }

// NeedLeaderElection: the watch runs on every replica, the leader and its standbys alike.
func (l *Lock) NeedLeaderElection() bool { return false }

// Start runs the watch of the Lease until ctx ends.
func (l *Lock) Start(ctx context.Context) error {
	ns, name := l.inner.LeaseMeta.Namespace, l.inner.LeaseMeta.Name
	byName := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = byName
			return l.client.Leases(ns).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = byName
			return l.client.Leases(ns).Watch(ctx, o)
		},
	}
	l.mu.Lock()
	l.watching = true
	l.notifyLocked()
	l.mu.Unlock()
	// The client says whether it can stream the initial list (a real API server can; a fake
	// client in tests cannot).
	informer := toolscache.NewSharedIndexInformer(toolscache.ToListWatcherWithWatchListSemantics(lw, l.client), &coordinationv1.Lease{}, 0, toolscache.Indexers{})
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { l.saw(obj) },
		UpdateFunc: func(_, obj any) { l.saw(obj) },
		DeleteFunc: func(any) { l.set(observed{absent: true}) },
	}); err != nil {
		return err
	}
	go informer.RunWithContext(ctx)
	if toolscache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		l.mu.Lock()
		if !l.seen.synced {
			// No Lease at all: nothing to wait for.
			l.seen = observed{synced: true, absent: true}
			l.notifyLocked()
		}
		l.mu.Unlock()
	}
	<-ctx.Done()
	// Without the watch, reads stop waiting.
	l.mu.Lock()
	l.seen = observed{}
	l.watching = false
	l.notifyLocked()
	l.mu.Unlock()
	return nil
}

// saw records a Lease the watch delivered; the time counts from its first sight of each
// version, as client-go's elector counts from its first read of each record.
func (l *Lock) saw(obj any) {
	lease, ok := obj.(*coordinationv1.Lease)
	if !ok {
		return
	}
	record := rl.LeaseSpecToLeaderElectionRecord(&lease.Spec)
	raw, err := json.Marshal(*record)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen.synced && !l.seen.absent && l.seen.version == lease.ResourceVersion {
		return
	}
	l.seen = observed{synced: true, version: lease.ResourceVersion, raw: raw, holder: record.HolderIdentity, at: l.clock.Now(),
		duration: time.Duration(record.LeaseDurationSeconds) * time.Second}
	l.notifyLocked()
}

func (l *Lock) set(o observed) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o.synced = true
	l.seen = o
	l.notifyLocked()
}

func (l *Lock) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// waitForChance returns once the lease may be taken by this replica as far as the watch shows
// (no watch, no Lease, no holder, held by this replica, or run out), or when ctx ends.
func (l *Lock) waitForChance(ctx context.Context) {
	var syncDeadline <-chan time.Time
	for {
		l.mu.Lock()
		seen, changed, waitSync := l.seen, l.changed, l.watching && !l.gaveUp
		l.mu.Unlock()
		if !seen.synced && waitSync {
			if syncDeadline == nil {
				t := l.clock.NewTimer(syncWait)
				defer t.Stop()
				syncDeadline = t.C()
			}
			select {
			case <-ctx.Done():
				return
			case <-changed:
				continue
			case <-syncDeadline:
				l.mu.Lock()
				l.gaveUp = true
				l.mu.Unlock()
				return
			}
		}
		if !seen.synced || seen.absent || seen.holder == "" || seen.holder == l.Identity() {
			return
		}
		left := seen.at.Add(seen.duration).Sub(l.clock.Now())
		if left < 0 {
			return
		}
		t := l.clock.NewTimer(left)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-changed:
			t.Stop()
		case <-t.C():
			return
		}
	}
}

// ranOut reports whether raw, a record just read, is the one the watch last saw and has seen
// unchanged for longer than its lease duration.
func (l *Lock) ranOut(raw []byte) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.seen
	return s.synced && !s.absent && s.holder != "" && bytes.Equal(s.raw, raw) && l.clock.Since(s.at) > s.duration
}

// Eventf hands the elector's events to the recorder set by SetEventRecorder, if any.
func (l *Lock) Eventf(obj runtime.Object, eventtype, reason, message string, args ...any) {
	l.mu.Lock()
	r := l.recorder
	l.mu.Unlock()
	if r != nil {
		r.Eventf(obj, eventtype, reason, message, args...)
	}
}

var _ rl.Interface = &Lock{}
