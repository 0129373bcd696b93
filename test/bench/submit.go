/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// run is the submit scenario.
func run(ctx context.Context, c config) error {
	e, err := newBenchEnv(ctx, c, strings.ReplaceAll(c.mode, "-", ""))
	if err != nil {
		return err
	}
	defer e.cleanup()
	cl, ns := e.cl, e.ns

	op, err := startOperator(ctx, c, ns, c.mode)
	if err != nil {
		return err
	}
	defer op.stop()

	// Watch driver pods before creating anything, so no appearance is missed.
	drivers, err := watchDrivers(ctx, e.cs, ns, c.apps)
	if err != nil {
		return err
	}
	defer drivers.stop()

	cost, err := startAPICost(ctx, e)
	if err != nil {
		return err
	}
	start := time.Now()
	var interval time.Duration
	if c.perMinute > 0 {
		interval = time.Duration(float64(time.Minute) / c.perMinute)
	}
	var mu sync.Mutex
	created := map[string]time.Time{}
	failed := inParallel(c.apps, 16, interval, func(i int) error {
		app := benchApp(ns, i)
		t0 := time.Now()
		if err := cl.Create(ctx, app); err != nil {
			return fmt.Errorf("create: %w", err)
		}
		mu.Lock()
		created[app.Name] = t0
		mu.Unlock()
		return nil
	})
	if failed > 0 {
		return fmt.Errorf("%d applications could not be created", failed)
	}

	select {
	case <-drivers.all:
	case <-time.After(c.timeout):
		return fmt.Errorf("only %d of %d driver pods appeared within %s", drivers.count.Load(), c.apps, c.timeout)
	}
	rss, err := op.rssMiB("VmHWM")
	if err != nil {
		return err
	}
	// What stays resident once the burst is over and the applications are simply present.
	time.Sleep(settle)
	settled, err := op.rssMiB("VmRSS")
	if err != nil {
		return err
	}

	use, err := cost.per(ctx, c.apps)
	if err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	return reportSubmit(c, op, start, created, drivers.firstSeen(), rss, settled, use)
}

// driverWatch records when each application's first driver pod appeared.
type driverWatch struct {
	mu   sync.Mutex
	seen map[string]time.Time
	// all is closed once apps applications have a driver; count is how many have.
	all   chan struct{}
	count atomic.Int64
	done  chan struct{}
}

// watchDrivers starts watching ns's driver pods, and returns once the watch has synced.
func watchDrivers(ctx context.Context, cs kubernetes.Interface, ns string, apps int) (*driverWatch, error) {
	w := &driverWatch{seen: map[string]time.Time{}, all: make(chan struct{}), done: make(chan struct{})}
	lw := &cache.ListWatch{
		// Both use the bench's ctx, as the deprecated context-free forms did; the one the
		// informer passes ends when the watch is stopped.
		ListWithContextFunc: func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = v1beta2.SparkRoleLabel + "=" + v1beta2.SparkRoleDriver
			return cs.CoreV1().Pods(ns).List(ctx, o)
		},
		WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = v1beta2.SparkRoleLabel + "=" + v1beta2.SparkRoleDriver
			return cs.CoreV1().Pods(ns).Watch(ctx, o)
		},
	}
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.Pod{},
		Handler: cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			now := time.Now()
			app := obj.(*corev1.Pod).Labels[v1beta2.LabelAppName]
			w.mu.Lock()
			defer w.mu.Unlock()
			if _, dup := w.seen[app]; dup || app == "" {
				return
			}
			w.seen[app] = now
			if w.count.Add(1) == int64(apps) {
				close(w.all)
			}
		}},
	})
	go informer.Run(w.done)
	if !cache.WaitForCacheSync(w.done, informer.HasSynced) {
		w.stop()
		return nil, fmt.Errorf("pod watch did not sync")
	}
	return w, nil
}

func (w *driverWatch) stop() { close(w.done) }

// firstSeen is when each application's driver was first seen.
func (w *driverWatch) firstSeen() map[string]time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.seen)
}

// reportSubmit prints the submit scenario's table and RESULT lines.
func reportSubmit(c config, op *operatorProcess, start time.Time, created, seen map[string]time.Time, rss, settled float64, use apiUse) error {
	var latencies []time.Duration
	var last time.Time
	for name, t := range created {
		latencies = append(latencies, seen[name].Sub(t))
		if seen[name].After(last) {
			last = seen[name]
		}
	}
	slices.Sort(latencies)
	elapsed := last.Sub(start)
	perMin := float64(c.apps) / elapsed.Minutes()
	p50, p99 := percentile(latencies, 50), percentile(latencies, 99)
	offered := "max"
	if c.perMinute > 0 {
		offered = strconv.FormatFloat(c.perMinute, 'f', 0, 64) + "/min"
	}
	fmt.Printf("%-13s %6s %9s %12s %9s %9s %9s %12s\n", "mode", "apps", "offered", "apps/min", "p50 ms", "p99 ms", "peak MiB", "settled MiB")
	fmt.Printf("%-13s %6d %9s %12.0f %9.1f %9.1f %9.1f %12.1f\n", c.mode, c.apps, offered, perMin, ms(p50), ms(p99), rss, settled)
	fmt.Println(use.top)
	fmt.Printf("RESULT mode=%s apps=%d offered=%s apps_per_min=%.0f p50_ms=%.1f p99_ms=%.1f rss_mib=%.1f settled_rss_mib=%.1f api_writes_per_app=%.1f api_reads_per_app=%.1f\n",
		c.mode, c.apps, offered, perMin, ms(p50), ms(p99), rss, settled, use.writes, use.reads)
	if c.webhook {
		wp50, wp99, n, err := op.webhookLatency()
		if err != nil {
			return err
		}
		fmt.Printf("webhook: %d admission requests, p50 %.2f ms, p99 %.2f ms\n", n, ms(wp50), ms(wp99))
		fmt.Printf("RESULT mode=webhook apps=%d requests=%d p50_ms=%.2f p99_ms=%.2f\n", c.apps, n, ms(wp50), ms(wp99))
	}
	return nil
}
