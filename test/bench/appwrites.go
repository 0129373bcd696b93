/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"sync"

	toolscache "k8s.io/client-go/tools/cache"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// appWrites counts the writes of each application a watch sees after its creation (each new
// version: its status, mostly), which is what a user's watch, and every controller's, receives.
// test/e2e's TestStatusWritesPerApplication counted them for one application of 6 executors
// (6 in its last runs); how many a run takes depends on how the executors' pod changes fall
// within the operator's batching of them, so the figure is the benchmark's, over a run's
// applications. A watch that breaks and lists again misses the versions in between: the count
// is a lower bound.
type appWrites struct {
	mu sync.Mutex
	n  map[string]int
}

func newAppWrites() *appWrites { return &appWrites{n: map[string]int{}} }

// handler is the application informer's event handler.
func (w *appWrites) handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(oldObj, newObj any) {
		prev, ok := oldObj.(*v1beta2.SparkApplication)
		app, ok2 := newObj.(*v1beta2.SparkApplication)
		if !ok || !ok2 || prev.ResourceVersion == app.ResourceVersion { // a resync, not a write
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.n[app.Name]++
	}}
}

// perApp is the mean number of writes over apps applications.
func (w *appWrites) perApp(apps int) float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	total := 0
	for _, n := range w.n {
		total += n
	}
	return float64(total) / float64(max(apps, 1))
}
