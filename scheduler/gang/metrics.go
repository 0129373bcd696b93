/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The cycle loop's metrics, on the operator's metrics endpoint.
var (
	cyclesTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "spark_operator_gang_cycles_total", Help: "Admission cycles run by the gang scheduler.",
	})
	decisionsTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "spark_operator_gang_decisions_total",
		Help: "Applications decided for by the gang scheduler's cycles (admitted, left waiting or rejected), summed over cycles.",
	})
	scheduleSeconds = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "spark_operator_gang_schedule_seconds_total", Help: "Time spent deciding (gang.Schedule), summed over cycles.",
	})
	admittedTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "spark_operator_gang_admitted_total", Help: "Applications admitted by the gang scheduler.",
	})
)

func init() {
	ctrlmetrics.Registry.MustRegister(cyclesTotal, decisionsTotal, scheduleSeconds, admittedTotal)
}
