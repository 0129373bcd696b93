/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/scheduler/gang/status"
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
		Name: "spark_operator_gang_schedule_seconds_total", Help: "Time spent deciding (core.Schedule), summed over cycles.",
	})
	admittedTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "spark_operator_gang_admitted_total", Help: "Applications admitted by the gang scheduler.",
	})
	// A trigger that arrives while a cycle runs waits for the whole of it, its API calls
	// included: where a cycle's time goes is how long a run's end can wait to be acted on.
	cyclePhaseSeconds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "spark_operator_gang_cycle_seconds_total",
		Help: "Time the gang scheduler's cycles spent in each phase, summed over cycles: read (the caches into a snapshot), decide, store (reservations and placeholders created, preemptions), wake, ungate, placeholders, reservation_status, queue_status.",
	}, []string{"phase"})
	// An executor waits for its release: first for the gang scheduler to see it and choose its
	// node, then for the API call that lets it go. Long waits mean drivers run without their
	// executors (see --gang-start-backlog).
	ungateWaitSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "spark_operator_gang_executor_release_wait_seconds",
		Help:    "Time from a gated executor's creation (to the second) to the gang scheduler choosing its release.",
		Buckets: []float64{0.5, 1, 2, 3, 5, 8, 13, 21, 34, 55},
	})
	ungateCallSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "spark_operator_gang_executor_release_call_seconds",
		Help:    "Time from the gang scheduler choosing an executor's release to the API server taking it, waiting for a free call included.",
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 8, 13, 21},
	})
	// Executors the pod-mutating webhook placed as they were created had no release to wait for;
	// counted where the webhook runs.
	placedAtCreationTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "spark_operator_gang_executors_placed_at_creation_total",
		Help: "Executors given their planned node by the pod-mutating webhook as they were created, instead of being gated for the gang scheduler to release.",
	})
	// With placeholders, a node's executors share one placeholder; each one that comes too late
	// for the others' swap costs a placeholder of its own (takeGroups).
	standInsTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "spark_operator_gang_placeholder_stand_ins_total",
		Help: "Placeholders made for executors missing from the swap of their node's shared placeholder (created gated, nominated, then let go; also counted in spark_operator_gang_placeholder_writes_total).",
	})
	// The external scheduler (spec.batchScheduler: external) is asked once per cycle in which
	// its applications wait.
	externalRequestSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "spark_operator_gang_external_request_seconds",
		Help:    "Round trip of a request to the external scheduler, its answer included.",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	})
	externalAnswersTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "spark_operator_gang_external_requests_total",
		Help: "Requests to the external scheduler, by result: answered, or failed (unreachable, timed out, an answer that does not read).",
	}, []string{"result"})
	externalRefusedTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "spark_operator_gang_external_refused_total",
		Help: "Admissions in the external scheduler's answers refused by the fit and quota checks.",
	})
)

// The queues' state after each cycle, as their status says it, by queue.
var (
	queuePending = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "spark_operator_gang_queue_pending_applications",
		Help: "Applications waiting in a gang scheduler queue, after the last cycle.",
	}, []string{"queue"})
	queueAdmitted = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "spark_operator_gang_queue_admitted_applications",
		Help: "Applications of a gang scheduler queue admitted and holding their Reservation, after the last cycle.",
	}, []string{"queue"})
)

// setQueueGauges sets the queue gauges to the queues' new status and drops the series of the
// queues that are gone.
func setQueueGauges(want map[string]schedv1alpha1.QueueStatus) {
	queueSeries.mu.Lock()
	defer queueSeries.mu.Unlock()
	for name := range queueSeries.names {
		if _, ok := want[name]; !ok {
			queuePending.DeleteLabelValues(name)
			queueAdmitted.DeleteLabelValues(name)
			delete(queueSeries.names, name)
		}
	}
	for name, st := range want {
		queuePending.WithLabelValues(name).Set(float64(st.PendingApplications))
		queueAdmitted.WithLabelValues(name).Set(float64(st.AdmittedApplications))
		queueSeries.names[name] = true
	}
}

// queueSeries are the queues the gauges have a series for.
var queueSeries = struct {
	mu    sync.Mutex
	names map[string]bool
}{names: map[string]bool{}}

func init() {
	ctrlmetrics.Registry.MustRegister(cyclesTotal, decisionsTotal, scheduleSeconds, admittedTotal, cyclePhaseSeconds, ungateWaitSeconds, ungateCallSeconds, placedAtCreationTotal, standInsTotal,
		externalRequestSeconds, externalAnswersTotal, externalRefusedTotal, queuePending, queueAdmitted)
	ctrlmetrics.Registry.MustRegister(status.Collectors()...)
}
