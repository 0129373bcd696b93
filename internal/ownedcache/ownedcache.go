/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package ownedcache runs caches made beside a controller-runtime manager's own as the manager
// runs its own: started before the runnables that read them, stopped after them, on every
// replica.
//
// The manager puts a cache added with Add in the group of the runnables that need no leader,
// and stops that group at once, before the runnables that need a leader. A runnable still
// reading a cache stopped under it sees no new informer start: a read through a new informer
// with a context that is never cancelled (cert-controller's rotator does so) then waits
// forever, and the manager never stops.
//
// The manager starts its other runnables only once these caches have synced: a cache with
// informers made before the manager starts (an index, say) delays them all, and one that cannot
// sync (no right to list) keeps them from starting at all.
package ownedcache

import (
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Runnable is c as a runnable the manager starts and stops with its own caches: it has
// GetCache, which is how controller-runtime tells one.
func Runnable(c cache.Cache) manager.Runnable { return owned{c} }

type owned struct{ cache.Cache }

func (o owned) GetCache() cache.Cache { return o.Cache }

// Manager is mgr for a library that adds caches of its own to it (cert-controller's
// AddRotator): each cache it adds runs as Runnable makes it; everything else is mgr's.
func Manager(mgr manager.Manager) manager.Manager { return cachesLast{mgr} }

type cachesLast struct{ manager.Manager }

func (m cachesLast) Add(r manager.Runnable) error {
	if c, ok := r.(cache.Cache); ok {
		r = Runnable(c)
	}
	return m.Manager.Add(r)
}
