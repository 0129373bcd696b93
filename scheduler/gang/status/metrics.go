/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package status

import "github.com/prometheus/client_golang/prometheus"

var (
	// A held application's shown reason is refreshed by a status write (ReasonRefresh); what made
	// it out of date says whether the write told a user something new.
	reasonRefreshesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "spark_operator_gang_reason_refreshes_total",
		Help: "Held applications woken to show a new reason, by what changed: first (nothing shown yet, or shown by another process), meaning (another kind of reason or queue), numbers (a position or an amount).",
	}, []string{"change"})
)

// Collectors are this package's metrics, for the operator to register.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{reasonRefreshesTotal}
}
