/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// The Kubeflow Spark operator's metric names, with its types, served beside this operator's
// own so that dashboards and alerts written for it keep working. Where a name is both
// Kubeflow's and ours (the latencies), it has Kubeflow's type.
const (
	Count                 = "spark_application_count"
	SubmitCount           = "spark_application_submit_count"
	FailedSubmissionCount = "spark_application_failed_submission_count"
	RunningCount          = "spark_application_running_count"
	SuccessCount          = "spark_application_success_count"
	FailureCount          = "spark_application_failure_count"
	SuccessExecutionTime  = "spark_application_success_execution_time_seconds"
	FailureExecutionTime  = "spark_application_failure_execution_time_seconds"
	// SubmitLatency and StartLatency are summaries (a count and a sum); the histograms with
	// buckets are the same names with _histogram.
	SubmitLatency          = "spark_application_submit_latency_seconds"
	SubmitLatencyHistogram = SubmitLatency + "_histogram"
	StartLatency           = "spark_application_start_latency_seconds"
	StartLatencyHistogram  = StartLatency + "_histogram"
	ExecutorRunningCount   = "spark_executor_running_count"
	ExecutorSuccessCount   = "spark_executor_success_count"
	ExecutorFailureCount   = "spark_executor_failure_count"
)

// KubeflowNames are the names above, which keep Kubeflow's spelling whatever Prometheus's
// naming conventions say (counters without _total, _count on a counter).
var KubeflowNames = []string{Count, SubmitCount, FailedSubmissionCount, RunningCount, SuccessCount, FailureCount,
	SuccessExecutionTime, FailureExecutionTime, SubmitLatency, SubmitLatencyHistogram, StartLatency, StartLatencyHistogram,
	ExecutorRunningCount, ExecutorSuccessCount, ExecutorFailureCount}

// kubeflowMetrics are the metrics under Kubeflow's names, each labelled by the configured
// application labels.
type kubeflowMetrics struct {
	labels []string

	count, submit, submitFailed, success, failure *prometheus.CounterVec
	running                                       *prometheus.GaugeVec
	successTime, failureTime                      *prometheus.SummaryVec
	submitLatency, startLatency                   *prometheus.SummaryVec
	submitLatencyHist, startLatencyHist           *prometheus.HistogramVec
	executorRunning                               *prometheus.GaugeVec
	executorSuccess, executorFailure              *prometheus.CounterVec
}

func newKubeflowMetrics(reg prometheus.Registerer, o Options) *kubeflowMetrics {
	m := &kubeflowMetrics{}
	for _, l := range o.Labels {
		m.labels = append(m.labels, labelName(l))
	}
	counter := func(name, help string) *prometheus.CounterVec {
		return register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: o.Prefix + name, Help: help}, m.labels))
	}
	gauge := func(name, help string) *prometheus.GaugeVec {
		return register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: o.Prefix + name, Help: help}, m.labels))
	}
	summary := func(name, help string) *prometheus.SummaryVec {
		return register(reg, prometheus.NewSummaryVec(prometheus.SummaryOpts{Name: o.Prefix + name, Help: help}, m.labels))
	}
	histogram := func(name, help string, buckets, def []float64) *prometheus.HistogramVec {
		if buckets == nil {
			buckets = def
		}
		return register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: o.Prefix + name, Help: help, Buckets: buckets}, m.labels))
	}
	m.count = counter(Count, "SparkApplications the operator started to run.")
	m.submit = counter(SubmitCount, "SparkApplications submitted successfully (as "+SubmitTotal+").")
	m.submitFailed = counter(FailedSubmissionCount, "Submissions of SparkApplications that failed (as "+SubmitFailedTotal+").")
	m.running = gauge(RunningCount, "SparkApplications currently in the RUNNING state (as "+Running+").")
	m.success = counter(SuccessCount, "SparkApplications that reached COMPLETED.")
	m.failure = counter(FailureCount, "SparkApplications that reached FAILED.")
	m.successTime = summary(SuccessExecutionTime, "Seconds from the last submission to the end, of SparkApplications that reached COMPLETED.")
	m.failureTime = summary(FailureExecutionTime, "Seconds from the last submission to the end, of SparkApplications that reached FAILED.")
	m.submitLatency = summary(SubmitLatency, "Seconds from a SparkApplication's creation (or its rerun) to its successful submission.")
	m.submitLatencyHist = histogram(SubmitLatencyHistogram, "Seconds from a SparkApplication's creation (or its rerun) to its successful submission.",
		o.SubmitLatencyBuckets, DefaultSubmitLatencyBuckets)
	m.startLatency = summary(StartLatency, "Seconds from a SparkApplication's creation to its first driver running.")
	m.startLatencyHist = histogram(StartLatencyHistogram, "Seconds from a SparkApplication's creation to its first driver running.",
		o.StartLatencyBuckets, DefaultStartLatencyBuckets)
	m.executorRunning = gauge(ExecutorRunningCount, "Executor pods currently running (as "+ExecutorRunning+").")
	m.executorSuccess = counter(ExecutorSuccessCount, "Executor pods that completed.")
	m.executorFailure = counter(ExecutorFailureCount, "Executor pods that failed (as "+ExecutorFailure+").")
	if len(m.labels) == 0 {
		// Unlabelled, each has its one series from the start, 0 until something happens.
		for _, v := range []interface {
			WithLabelValues(...string) prometheus.Counter
		}{m.count, m.submit, m.submitFailed,
			m.success, m.failure, m.executorSuccess, m.executorFailure} {
			v.WithLabelValues()
		}
		m.running.WithLabelValues()
		m.executorRunning.WithLabelValues()
		for _, v := range []interface {
			WithLabelValues(...string) prometheus.Observer
		}{m.successTime, m.failureTime,
			m.submitLatency, m.startLatency, m.submitLatencyHist, m.startLatencyHist} {
			v.WithLabelValues()
		}
	}
	return m
}

// labelName makes a Kubernetes label key a Prometheus label name, as Kubeflow does: every
// character outside [a-zA-Z0-9_] becomes _.
func labelName(key string) string {
	return strings.Map(func(c rune) rune {
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			return c
		}
		return '_'
	}, key)
}

// labelsOf is the label values of app: the value of its label whose key makes the label name,
// its namespace for "namespace", else "Unknown".
func (m *kubeflowMetrics) labelsOf(app *v1beta2.SparkApplication) []string {
	if len(m.labels) == 0 {
		return nil
	}
	byName := map[string]string{}
	if app != nil {
		for k, v := range app.Labels {
			byName[labelName(k)] = v
		}
	}
	values := make([]string, len(m.labels))
	for i, l := range m.labels {
		v, ok := byName[l]
		switch {
		case ok:
			values[i] = v
		case l == "namespace" && app != nil:
			values[i] = app.Namespace
		default:
			values[i] = "Unknown"
		}
	}
	return values
}

func (m *kubeflowMetrics) submitted(app *v1beta2.SparkApplication, latency float64) {
	l := m.labelsOf(app)
	m.submit.WithLabelValues(l...).Inc()
	m.submitLatency.WithLabelValues(l...).Observe(latency)
	m.submitLatencyHist.WithLabelValues(l...).Observe(latency)
}

func (m *kubeflowMetrics) started(app *v1beta2.SparkApplication, latency float64) {
	l := m.labelsOf(app)
	m.startLatency.WithLabelValues(l...).Observe(latency)
	m.startLatencyHist.WithLabelValues(l...).Observe(latency)
}

// ended counts an application that reached COMPLETED or FAILED, with the time from its last
// submission to its end.
func (m *kubeflowMetrics) ended(app *v1beta2.SparkApplication, to v1beta2.ApplicationStateType) {
	var count *prometheus.CounterVec
	var took *prometheus.SummaryVec
	switch to {
	case v1beta2.ApplicationStateCompleted:
		count, took = m.success, m.successTime
	case v1beta2.ApplicationStateFailed:
		count, took = m.failure, m.failureTime
	default:
		return
	}
	l := m.labelsOf(app)
	count.WithLabelValues(l...).Inc()
	if app != nil && !app.Status.LastSubmissionAttemptTime.IsZero() && !app.Status.TerminationTime.IsZero() {
		took.WithLabelValues(l...).Observe(seconds(app.Status.TerminationTime.Sub(app.Status.LastSubmissionAttemptTime.Time)))
	}
}
