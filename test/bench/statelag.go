/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// stateLag measures how long an application's status takes to show what its driver pod did,
// both as seen in a watch: from the driver pod Running to the application RUNNING, and from
// the driver pod ended to the application COMPLETED or FAILED. A user watching `kubectl get
// sparkapp` (or a workflow engine, or Kueue) waits that long for nothing.
type stateLag struct {
	mu    sync.Mutex
	pod   map[lagKey]time.Time // when the driver pod was seen to reach the stage
	shown map[lagKey]time.Time // when the application's status was seen to show it
}

type lagKey struct {
	app   string
	ended bool // the driver's end; else its start
}

func newStateLag() *stateLag {
	return &stateLag{pod: map[lagKey]time.Time{}, shown: map[lagKey]time.Time{}}
}

// handlers are the event handlers of the pod and application informers.
func (l *stateLag) podHandler() toolscache.ResourceEventHandler {
	on := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Labels[v1beta2.SparkRoleLabel] != v1beta2.SparkRoleDriver {
			return
		}
		switch p.Status.Phase {
		case corev1.PodRunning:
			l.seen(l.pod, lagKey{app: p.Labels[v1beta2.LabelAppName]})
		case corev1.PodSucceeded, corev1.PodFailed:
			l.seen(l.pod, lagKey{app: p.Labels[v1beta2.LabelAppName], ended: true})
		}
	}
	return toolscache.ResourceEventHandlerFuncs{AddFunc: on, UpdateFunc: func(_, obj any) { on(obj) }}
}

func (l *stateLag) appHandler() toolscache.ResourceEventHandler {
	on := func(obj any) {
		app, ok := obj.(*v1beta2.SparkApplication)
		if !ok {
			return
		}
		switch app.Status.AppState.State {
		case v1beta2.ApplicationStateRunning:
			l.seen(l.shown, lagKey{app: app.Name})
		case v1beta2.ApplicationStateCompleted, v1beta2.ApplicationStateFailed:
			l.seen(l.shown, lagKey{app: app.Name, ended: true})
		}
	}
	return toolscache.ResourceEventHandlerFuncs{AddFunc: on, UpdateFunc: func(_, obj any) { on(obj) }}
}

// seen records the first time a key was seen in m.
func (l *stateLag) seen(m map[lagKey]time.Time, k lagKey) {
	if k.app == "" {
		return
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := m[k]; !ok {
		m[k] = now
	}
}

// percentiles returns the lag's p50 and p99 over the stages seen both on the pod and in the
// status, and how many there were. A status seen before its pod's stage (the application
// failed for another reason, say) counts as no lag.
func (l *stateLag) percentiles() (p50, p99 time.Duration, n int) {
	return l.percentilesOf(func(lagKey) bool { return true })
}

// split is the lag's p50 and p99 of the drivers' starts and of their ends apart, for the
// diagnostics: a start is one status write, an end may be more.
func (l *stateLag) split() string {
	s50, s99, sn := l.percentilesOf(func(k lagKey) bool { return !k.ended })
	e50, e99, en := l.percentilesOf(func(k lagKey) bool { return k.ended })
	return fmt.Sprintf("state_lag starts p50=%.0fms p99=%.0fms (%d), ends p50=%.0fms p99=%.0fms (%d)", ms(s50), ms(s99), sn, ms(e50), ms(e99), en)
}

func (l *stateLag) percentilesOf(keep func(lagKey) bool) (p50, p99 time.Duration, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var lags []time.Duration
	for k, at := range l.pod {
		if shown, ok := l.shown[k]; ok && keep(k) {
			lags = append(lags, max(shown.Sub(at), 0))
		}
	}
	slices.Sort(lags)
	return percentile(lags, 50), percentile(lags, 99), len(lags)
}
