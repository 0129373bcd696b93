/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package webhook

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// RequestDuration is spark_webhook_request_duration_seconds{webhook}: how long each webhook
// (pod-mutator, sparkapplication-validator, scheduledsparkapplication-validator) took to decide.
// controller-runtime records controller_runtime_webhook_latency_seconds{webhook=<path>} (with
// controller_runtime_webhook_requests_total and _in_flight) on the same registry as well; this
// one names the webhook and has buckets suited to in-process decisions.
var RequestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "spark_webhook_request_duration_seconds",
	Help:    "Time the Spark operator's admission webhooks took to answer a request, by webhook.",
	Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5},
}, []string{"webhook"})

var registerOnce sync.Once

func registerMetrics() {
	registerOnce.Do(func() {
		if err := metrics.Registry.Register(RequestDuration); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				panic(err)
			}
		}
	})
}

// instrument records the handler's latency under name.
func instrument(name string, h admission.Handler) admission.Handler {
	registerMetrics()
	return admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
		start := time.Now()
		defer func() { RequestDuration.WithLabelValues(name).Observe(time.Since(start).Seconds()) }()
		return h.Handle(ctx, req)
	})
}

func errorsJoin(errs ...error) error { return errors.Join(errs...) }
