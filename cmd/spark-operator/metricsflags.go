/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/sparkop/spark-operator/controllers/metrics"
)

// metricsFlags are the settings of the metrics endpoint and of the metrics' names, with the
// Kubeflow operator's flag names.
type metricsFlags struct {
	endpoint string
	opts     metrics.Options
}

// add registers the flags on fs; validate checks them after parsing.
func (m *metricsFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&m.endpoint, "metrics-endpoint", "/metrics", "Path of the Prometheus metrics endpoint on --metrics-bind-address (also served at /metrics).")
	fs.StringVar(&m.opts.Prefix, "metrics-prefix", "", "Prefix of the name of every spark_application_* and spark_executor_* metric.")
	fs.Func("metrics-labels", "Comma-separated application labels (or namespace) that label the Kubeflow-named metrics (spark_application_count, …); may repeat.", func(v string) error {
		for _, l := range strings.Split(v, ",") {
			if l = strings.TrimSpace(l); l != "" {
				m.opts.Labels = append(m.opts.Labels, l)
			}
		}
		return nil
	})
	fs.Func("metrics-job-start-latency-buckets", "Comma-separated buckets, in seconds, of spark_application_start_latency_seconds_histogram.", buckets(&m.opts.StartLatencyBuckets))
	fs.Func("metrics-job-submit-latency-buckets", "Comma-separated buckets, in seconds, of spark_application_submit_latency_seconds_histogram.", buckets(&m.opts.SubmitLatencyBuckets))
}

func buckets(into *[]float64) func(string) error {
	return func(v string) error {
		*into = nil
		for _, s := range strings.Split(v, ",") {
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				return fmt.Errorf("%q is not a number of seconds", s)
			}
			*into = append(*into, f)
		}
		return nil
	}
}

func (m *metricsFlags) validate() error {
	if !strings.HasPrefix(m.endpoint, "/") {
		return fmt.Errorf("--metrics-endpoint must be a path starting with /, got %q", m.endpoint)
	}
	if err := m.opts.Validate(); err != nil {
		return fmt.Errorf("--metrics-prefix, --metrics-job-*-latency-buckets: %w", err)
	}
	return nil
}

// extraHandlers serves the metrics at the endpoint too when it is not /metrics.
func (m *metricsFlags) extraHandlers() map[string]http.Handler {
	if m.endpoint == "/metrics" {
		return nil
	}
	return map[string]http.Handler{m.endpoint: promhttp.HandlerFor(ctrlmetrics.Registry, promhttp.HandlerOpts{})}
}
