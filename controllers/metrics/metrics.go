/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package metrics records the operator's Prometheus metrics about SparkApplications: its own
// names, and the Kubeflow Spark operator's names beside them (kubeflow.go), so that dashboards
// and alerts written for either keep working.
//
// No metric carries a per-application label: an operator runs many thousands of short-lived
// applications, and a series per application would grow Prometheus without bound. Kubeflow's
// names carry the application labels named by Options.Labels, as Kubeflow's do.
package metrics

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
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
	ExecutionTime     = "spark_application_execution_time_seconds"
	ExecutorRunning   = "spark_executor_running"
	ExecutorFailure   = "spark_executor_failure_total"
)

// OwnNames are the names above; Kubeflow's are in KubeflowNames.
var OwnNames = []string{SubmitTotal, SubmitFailedTotal, SuccessTotal, FailureTotal, Running, ExecutionTime,
	ExecutorRunning, ExecutorFailure}

// Recorder updates the metrics. Its methods may be called concurrently, and on a nil
// *Recorder, where they do nothing, so code paths without metrics need no checks.
type Recorder struct {
	submit, submitFailed, success, failure prometheus.Counter
	running                                prometheus.Gauge
	execTime                               prometheus.Observer
	executorRunning                        prometheus.Gauge
	executorFailure                        prometheus.Counter
	kf                                     *kubeflowMetrics

	mu sync.Mutex
	// runningApps holds the applications counted in the running gauge, so that a state change
	// reported twice (a reconcile retried after a conflict) is not counted twice.
	// It holds the Kubeflow labels the application was counted under.
	runningApps map[appKey][]string
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

// executorCounts are an application's executors by state, and the Kubeflow labels its running
// ones were counted under.
type executorCounts struct {
	running, failed, completed int
	labels                     []string
}

func keyOf(app *v1beta2.SparkApplication) appKey {
	if app == nil {
		return appKey{}
	}
	return appKey{app.Namespace, app.Name, app.UID}
}

// Options shape the metrics: the Kubeflow operator's --metrics-prefix, --metrics-labels and
// latency buckets. The zero value serves every name unprefixed and unlabelled.
type Options struct {
	// Prefix is put before the name of every spark_application_* and spark_executor_* metric.
	Prefix string
	// Labels are the label names of Kubeflow's metrics: an application label of that name
	// (its characters outside [a-zA-Z0-9_] made _), or "namespace"; "Unknown" when absent.
	Labels []string
	// SubmitLatencyBuckets and StartLatencyBuckets are the latency histograms' buckets, in
	// seconds; nil keeps the defaults (DefaultSubmitLatencyBuckets, DefaultStartLatencyBuckets).
	SubmitLatencyBuckets, StartLatencyBuckets []float64
}

// The latency histograms' default buckets: native submission takes milliseconds and
// spark-submit seconds, and a driver may wait for its node for minutes.
var (
	DefaultSubmitLatencyBuckets = prometheus.ExponentialBuckets(0.01, 2, 16)
	DefaultStartLatencyBuckets  = prometheus.ExponentialBuckets(0.1, 2, 16)
)

// Validate reports options whose names Prometheus would refuse.
func (o Options) Validate() error {
	if o.Prefix != "" && !model.LegacyValidation.IsValidMetricName(o.Prefix+SubmitTotal) {
		return fmt.Errorf("metrics prefix %q does not make valid metric names ([a-zA-Z_:][a-zA-Z0-9_:]*)", o.Prefix)
	}
	for _, b := range [][]float64{o.SubmitLatencyBuckets, o.StartLatencyBuckets} {
		if !slices.IsSorted(b) || len(slices.Compact(slices.Clone(b))) != len(b) {
			return fmt.Errorf("histogram buckets %v do not increase", b)
		}
	}
	return nil
}

// NewRecorder creates the metrics and registers them with reg: controller-runtime's
// metrics.Registry in the operator, so that they are served on the manager's /metrics. A
// metric that reg already has (a second Recorder on the same registry) is shared rather than
// reported as an error, which keeps registration to once per registry.
func NewRecorder(reg prometheus.Registerer) *Recorder { return NewRecorderWith(reg, Options{}) }

// NewRecorderWith is NewRecorder with options; they must have passed Validate.
func NewRecorderWith(reg prometheus.Registerer, o Options) *Recorder {
	r := &Recorder{
		runningApps: map[appKey][]string{},
		executors:   map[appKey]executorCounts{},
	}
	counter := func(name, help string) prometheus.Counter {
		return register(reg, prometheus.NewCounter(prometheus.CounterOpts{Name: o.Prefix + name, Help: help}))
	}
	gauge := func(name, help string) prometheus.Gauge {
		return register(reg, prometheus.NewGauge(prometheus.GaugeOpts{Name: o.Prefix + name, Help: help}))
	}
	histogram := func(name, help string, buckets []float64) prometheus.Histogram {
		return register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{Name: o.Prefix + name, Help: help, Buckets: buckets}))
	}

	r.submit = counter(SubmitTotal, "SparkApplications submitted successfully.")
	r.submitFailed = counter(SubmitFailedTotal, "Submissions of SparkApplications that failed.")
	r.success = counter(SuccessTotal, "SparkApplication runs that completed successfully.")
	r.failure = counter(FailureTotal, "SparkApplication runs that failed.")
	r.running = gauge(Running, "SparkApplications currently in the RUNNING state.")
	r.execTime = histogram(ExecutionTime,
		"Seconds from a SparkApplication's driver running to the application finishing.",
		prometheus.ExponentialBuckets(1, 2, 18))
	r.executorRunning = gauge(ExecutorRunning, "Executor pods currently running, over all SparkApplications.")
	r.executorFailure = counter(ExecutorFailure, "Executor pods that failed.")
	r.kf = newKubeflowMetrics(reg, o)
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
	r.kf.submitted(app, seconds(latency))
}

// SubmissionFailed counts a failed submission.
func (r *Recorder) SubmissionFailed(app *v1beta2.SparkApplication) {
	if r == nil {
		return
	}
	r.submitFailed.Inc()
	r.kf.submitFailed.WithLabelValues(r.kf.labelsOf(app)...).Inc()
}

// Created counts an application the operator starts to run for the first time.
func (r *Recorder) Created(app *v1beta2.SparkApplication) {
	if r == nil {
		return
	}
	r.kf.count.WithLabelValues(r.kf.labelsOf(app)...).Inc()
}

// Started records that the driver of an application's first run is running, latency after
// the application's creation.
func (r *Recorder) Started(app *v1beta2.SparkApplication, latency time.Duration) {
	if r == nil {
		return
	}
	r.kf.started(app, seconds(latency))
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
	r.setRunningLocked(app, false)
}

// AppStateChanged keeps the running gauge: an application entering RUNNING is counted, one
// leaving it is not any more. Repeated reports of the same change count once.
// Kubeflow's success and failure counts and execution times are recorded on the change to
// COMPLETED or FAILED, as Kubeflow records them.
func (r *Recorder) AppStateChanged(app *v1beta2.SparkApplication, from, to v1beta2.ApplicationStateType) {
	if r == nil || from == to {
		return
	}
	r.kf.ended(app, to)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.setRunningLocked(app, to == v1beta2.ApplicationStateRunning)
}

func (r *Recorder) setRunningLocked(app *v1beta2.SparkApplication, running bool) {
	k := keyOf(app)
	labels, was := r.runningApps[k]
	switch {
	case running && !was:
		labels = r.kf.labelsOf(app)
		r.runningApps[k] = labels
		r.running.Inc()
		r.kf.running.WithLabelValues(labels...).Inc()
	case !running && was:
		delete(r.runningApps, k)
		r.running.Dec()
		r.kf.running.WithLabelValues(labels...).Dec()
	}
}

// ExecutorStates reports how many of app's executors run now, and how many have failed and
// completed so far in its current run. The global gauges move by the change in running; the
// counters grow by the increase in failed and completed (a smaller count, after a rerun, only
// resets the baseline).
func (r *Recorder) ExecutorStates(app *v1beta2.SparkApplication, running, failed, completed int) {
	if r == nil {
		return
	}
	now := executorCounts{running: max(running, 0), failed: max(failed, 0), completed: max(completed, 0)}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := keyOf(app)
	last, ok := r.executors[k]
	if ok {
		now.labels = last.labels
	} else {
		now.labels = r.kf.labelsOf(app)
	}
	r.executorRunning.Add(float64(now.running - last.running))
	r.kf.executorRunning.WithLabelValues(now.labels...).Add(float64(now.running - last.running))
	if now.failed > last.failed {
		r.executorFailure.Add(float64(now.failed - last.failed))
		r.kf.executorFailure.WithLabelValues(now.labels...).Add(float64(now.failed - last.failed))
	}
	if now.completed > last.completed {
		r.kf.executorSuccess.WithLabelValues(now.labels...).Add(float64(now.completed - last.completed))
	}
	if now.running == 0 && now.failed == 0 && now.completed == 0 {
		delete(r.executors, k)
		return
	}
	r.executors[k] = now
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
		r.kf.executorRunning.WithLabelValues(last.labels...).Sub(float64(last.running))
		delete(r.executors, k)
	}
	r.setRunningLocked(app, false)
}
