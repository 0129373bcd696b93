/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package metrics records the operator's Prometheus metrics about SparkApplications.
//
// No metric carries a per-application label: an operator runs many thousands of short-lived
// applications, and a series per application would grow Prometheus without bound.
package metrics

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// Metric names, exported for dashboards, alerts and tests.
const (
	SubmitTotal       = "spark_application_submit_total"
	SubmitFailedTotal = "spark_application_submit_failed_total"
	SuccessTotal      = "spark_application_success_total"
	FailureTotal      = "spark_application_failure_total"
	Running           = "spark_application_running"
	SubmitLatency     = "spark_application_submit_latency_seconds"
	StartLatency      = "spark_application_start_latency_seconds"
	ExecutionTime     = "spark_application_execution_time_seconds"
	ExecutorRunning   = "spark_executor_running"
	ExecutorFailure   = "spark_executor_failure_total"
)

// Recorder updates the metrics. Its methods may be called concurrently, and on a nil
// *Recorder, where they do nothing, so code paths without metrics need no checks.
type Recorder struct {
	submit, submitFailed, success, failure prometheus.Counter
	running                                prometheus.Gauge
	submitLatency, startLatency, execTime  prometheus.Observer
	executorRunning                        prometheus.Gauge
	executorFailure                        prometheus.Counter

	mu sync.Mutex
	// runningApps holds the applications counted in the running gauge, so that a state change
	// reported twice (a reconcile retried after a conflict) is not counted twice.
	runningApps map[appKey]struct{}
	// executors holds each application's last reported executor counts, from which the
	// global gauge and counter are moved by the difference.
	executors map[appKey]executorCounts
}

// appKey includes the UID so that a deleted application and its namesake created afterwards
// are not confused.
type appKey struct {
	namespace, name string
	uid             types.UID
}

type executorCounts struct{ running, failed int }

func keyOf(app *v1beta2.SparkApplication) appKey {
	if app == nil {
		return appKey{}
	}
	return appKey{app.Namespace, app.Name, app.UID}
}

// NewRecorder creates the metrics and registers them with reg: controller-runtime's
// metrics.Registry in the operator, so that they are served on the manager's /metrics. A
// metric that reg already has (a second Recorder on the same registry) is shared rather than
// reported as an error, which keeps registration to once per registry.
func NewRecorder(reg prometheus.Registerer) *Recorder {
	r := &Recorder{
		runningApps: map[appKey]struct{}{},
		executors:   map[appKey]executorCounts{},
	}
	counter := func(name, help string) prometheus.Counter {
		return register(reg, prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help}))
	}
	gauge := func(name, help string) prometheus.Gauge {
		return register(reg, prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help}))
	}
	histogram := func(name, help string, buckets []float64) prometheus.Histogram {
		return register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}))
	}

	r.submit = counter(SubmitTotal, "SparkApplications submitted successfully.")
	r.submitFailed = counter(SubmitFailedTotal, "Submissions of SparkApplications that failed.")
	r.success = counter(SuccessTotal, "SparkApplication runs that completed successfully.")
	r.failure = counter(FailureTotal, "SparkApplication runs that failed.")
	r.running = gauge(Running, "SparkApplications currently in the RUNNING state.")
	// Native submission takes milliseconds and spark-submit seconds; the buckets cover both.
	r.submitLatency = histogram(SubmitLatency,
		"Seconds from a SparkApplication's creation to its successful submission.",
		prometheus.ExponentialBuckets(0.01, 2, 16))
	r.startLatency = histogram(StartLatency,
		"Seconds from a SparkApplication's creation to its driver running.",
		prometheus.ExponentialBuckets(0.1, 2, 16))
	r.execTime = histogram(ExecutionTime,
		"Seconds from a SparkApplication's driver running to the application finishing.",
		prometheus.ExponentialBuckets(1, 2, 18))
	r.executorRunning = gauge(ExecutorRunning, "Executor pods currently running, over all SparkApplications.")
	r.executorFailure = counter(ExecutorFailure, "Executor pods that failed.")
	return r
}

// register registers c with reg and returns it, or the equal collector reg already has.
// Registration errors other than a duplicate mean a programming error in this package's
// definitions; the collector then simply stays unregistered, as a metric lost is better than
// an operator that does not start.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg == nil {
		return c
	}
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	return c
}

func seconds(d time.Duration) float64 {
	// Clock skew between the API server that stamped creation and this process can make a
	// latency negative; it is still one observation.
	if d < 0 {
		return 0
	}
	return d.Seconds()
}

// Submitted counts a successful submission, latency after the application's creation.
func (r *Recorder) Submitted(app *v1beta2.SparkApplication, latency time.Duration) {
	if r == nil {
		return
	}
	r.submit.Inc()
	r.submitLatency.Observe(seconds(latency))
}

// SubmissionFailed counts a failed submission.
func (r *Recorder) SubmissionFailed(app *v1beta2.SparkApplication) {
	if r == nil {
		return
	}
	r.submitFailed.Inc()
}

// Started records that the driver is running, latency after the application's creation.
func (r *Recorder) Started(app *v1beta2.SparkApplication, latency time.Duration) {
	if r == nil {
		return
	}
	r.startLatency.Observe(seconds(latency))
}

// Finished records the end of a run. COMPLETED and SUCCEEDING count as a success, FAILED and
// FAILING as a failure (the -ING states end a run that the restart policy may repeat); other
// states are ignored. executionTime is observed for both outcomes.
func (r *Recorder) Finished(app *v1beta2.SparkApplication, state v1beta2.ApplicationStateType, executionTime time.Duration) {
	if r == nil {
		return
	}
	switch state {
	case v1beta2.ApplicationStateCompleted, v1beta2.ApplicationStateSucceeding:
		r.success.Inc()
	case v1beta2.ApplicationStateFailed, v1beta2.ApplicationStateFailing:
		r.failure.Inc()
	default:
		return
	}
	r.execTime.Observe(seconds(executionTime))
	r.mu.Lock()
	defer r.mu.Unlock()
	r.setRunningLocked(keyOf(app), false)
}

// AppStateChanged keeps the running gauge: an application entering RUNNING is counted, one
// leaving it is not any more. Repeated reports of the same change count once.
func (r *Recorder) AppStateChanged(app *v1beta2.SparkApplication, from, to v1beta2.ApplicationStateType) {
	if r == nil || from == to {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.setRunningLocked(keyOf(app), to == v1beta2.ApplicationStateRunning)
}

func (r *Recorder) setRunningLocked(k appKey, running bool) {
	_, was := r.runningApps[k]
	switch {
	case running && !was:
		r.runningApps[k] = struct{}{}
		r.running.Inc()
	case !running && was:
		delete(r.runningApps, k)
		r.running.Dec()
	}
}

// ExecutorStates reports how many of app's executors run now and how many have failed so far
// in its current run. The global gauge moves by the change in running; the failure counter
// grows by the increase in failed (a smaller count, after a rerun, only resets the baseline).
func (r *Recorder) ExecutorStates(app *v1beta2.SparkApplication, running, failed int) {
	if r == nil {
		return
	}
	running, failed = max(running, 0), max(failed, 0)
	r.mu.Lock()
	defer r.mu.Unlock()
	k := keyOf(app)
	last := r.executors[k]
	r.executorRunning.Add(float64(running - last.running))
	if failed > last.failed {
		r.executorFailure.Add(float64(failed - last.failed))
	}
	if running == 0 && failed == 0 {
		delete(r.executors, k)
		return
	}
	r.executors[k] = executorCounts{running: running, failed: failed}
}

// Forget drops what the Recorder keeps about app, taking its executors and itself out of the
// running gauges. Call it when the application is deleted.
func (r *Recorder) Forget(app *v1beta2.SparkApplication) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := keyOf(app)
	if last, ok := r.executors[k]; ok {
		r.executorRunning.Sub(float64(last.running))
		delete(r.executors, k)
	}
	r.setRunningLocked(k, false)
}
