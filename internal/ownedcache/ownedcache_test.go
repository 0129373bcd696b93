/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package ownedcache

import (
	"context"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// recorder is a manager that records what is added to it.
type recorder struct {
	manager.Manager
	added []manager.Runnable
}

func (r *recorder) Add(x manager.Runnable) error {
	r.added = append(r.added, x)
	return nil
}

// TestManagerAddsCachesAsItsOwn: through Manager, a cache reaches the manager as one with
// GetCache (controller-runtime's sign of a cache runnable, started first and stopped last) and
// any other runnable as it is.
func TestManagerAddsCachesAsItsOwn(t *testing.T) {
	c, err := cache.New(&rest.Config{Host: "https://127.0.0.1:1"}, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	other := manager.RunnableFunc(func(context.Context) error { return nil })
	rec := &recorder{}
	m := Manager(rec)
	for _, r := range []manager.Runnable{c, other} {
		if err := m.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if len(rec.added) != 2 {
		t.Fatalf("added %d runnables, want 2", len(rec.added))
	}
	owned, ok := rec.added[0].(interface{ GetCache() cache.Cache })
	if !ok || owned.GetCache() != c {
		t.Errorf("the cache was added as %T, want one whose GetCache is the cache", rec.added[0])
	}
	if _, ok := rec.added[1].(interface{ GetCache() cache.Cache }); ok {
		t.Errorf("a runnable that is not a cache was added as a cache")
	}
}
