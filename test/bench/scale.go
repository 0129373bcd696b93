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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// runScale is the scale scenario: the gang scheduler with --apps applications queued at once
// across --queues Queues of different priorities and quotas, on every node of the cluster
// (the number of kwok nodes is the cluster's: hack/local-cluster.sh up --nodes N), the Spark
// stand-in playing the gang scenario's mixed load (spark.go, gangApp). It prints
//
//	RESULT scenario=scale nodes=… apps=… queues=… decisions_per_s=… freed_to_driver_p50_ms=… freed_to_driver_p99_ms=… partial_starts=… rss_mib=… settled_rss_mib=… api_requests_per_app=…
//	scale: cycles=… every_ms=… deciding_ms=…   (the gang scheduler's cycles, their mean interval and deciding time)
//	scale: cycle_ms read=… decide=… store=… wake=… ungate=… placeholders=… reservation_status=… queue_status=…   (a cycle's mean time in each phase)
//	scale: apps_ever_partial=… unschedulable_peak=… unschedulable_executors=…   (as the gang scenario's)
//	scale: finished=… unfinished=… stuck=… makespan_s=… utilisation=… freed_ends=… unmatched=… freed_to_admitted_p50_ms=… freed_to_admitted_p99_ms=… api_writes_per_app=… api_reads_per_app=…
//
// decisions_per_s and partial_starts are the gang scenario's; freed_to_driver is from a run's
// end to the next application's driver on the room it freed (freed.go); rss_mib is the
// operator's peak resident memory over the run, settled_rss_mib its resident memory settle
// after the last application finished (all still present); api_requests_per_app the API
// server's reads and writes per application (apicount.go).
func runScale(ctx context.Context, c config) error {
	if c.queues < 1 {
		return fmt.Errorf("--queues must be at least 1")
	}
	e, err := newBenchEnv(ctx, c, "scale")
	if err != nil {
		return err
	}
	defer e.cleanup()
	nodes, queues, removeQueues, err := createScaleQueues(ctx, e, c.queues)
	defer removeQueues()
	if err != nil {
		return err
	}

	op, err := startOperator(ctx, c, e.ns, "scale", append([]string{"--enable-gang-scheduler", "--default-batch-scheduler=gang"}, gangOperatorArgs...)...)
	if err != nil {
		return err
	}
	defer op.stop()
	runCtx, stopStandIn := context.WithCancel(ctx)
	defer stopStandIn()
	spark, err := newStandIn(runCtx, e.cfg, e.cl, e.ns)
	if err != nil {
		return err
	}
	runs := newRunSpans()
	if err := spark.watch(runCtx, &corev1.Pod{}, runs.podHandler()); err != nil {
		return err
	}
	if err := spark.watch(runCtx, &schedv1alpha1.Reservation{}, runs.reservationHandler()); err != nil {
		return err
	}
	cost, err := startAPICost(ctx, e)
	if err != nil {
		return err
	}

	play, err := playGang(ctx, runCtx, spark, c.apps, c.timeout, func(i int) *v1beta2.SparkApplication {
		return scaleApp(e.ns, i, queues)
	})
	if err != nil {
		return err
	}
	use, err := cost.per(ctx, c.apps)
	if err != nil {
		return err
	}
	return reportScale(c, op, play, runs, use, nodes)
}

// createScaleQueues makes the scenario's queues over the cluster's nodes (scaleQueues) and
// returns how many nodes there are; remove deletes the queues made, also on an error.
func createScaleQueues(ctx context.Context, e *benchEnv, n int) (nodes int, queues []*schedv1alpha1.Queue, remove func(), err error) {
	var made []*schedv1alpha1.Queue
	remove = func() {
		for _, q := range made {
			_ = e.cl.Delete(context.Background(), q)
		}
	}
	var list corev1.NodeList
	if err := e.cl.List(ctx, &list); err != nil {
		return 0, nil, remove, err
	}
	total := allocatable(list.Items, corev1.ResourceCPU, corev1.ResourceMemory)
	queues = scaleQueues(e.ns, n, total[corev1.ResourceCPU], total[corev1.ResourceMemory])
	for _, q := range queues {
		if err := e.cl.Create(ctx, q); err != nil {
			return 0, nil, remove, err
		}
		made = append(made, q)
	}
	return len(list.Items), queues, remove, nil
}

// reportScale reads the operator's figures once the run is over and prints the scale lines and
// the RESULT line.
func reportScale(c config, op *operatorProcess, play gangPlay, runs *runSpans, use apiUse, nodes int) error {
	decisionsPerS, err := op.decisionRate()
	if err != nil {
		return err
	}
	cycles, err := op.counter("spark_operator_gang_cycles_total", "", "") // one series, no labels
	if err != nil {
		return err
	}
	_, deciding, err := op.gangDecisions()
	if err != nil {
		return err
	}
	rss, err := op.rssMiB("VmHWM")
	if err != nil {
		return err
	}
	// What stays resident once the run is over, its applications still present.
	time.Sleep(settle)
	settled, err := op.rssMiB("VmRSS")
	if err != nil {
		return err
	}
	freed := freedToDriver(runs.spans(c.apps))

	j, obs := play.j, play.obs
	fmt.Printf("scale: %s\n", j.stages())
	if q, err := op.workQueues(); err == nil {
		fmt.Printf("scale: %s\n", q)
	}
	fmt.Printf("scale: %s\n", use.top)
	// A cycle decides, stores its reservations and writes the queues' status and held reasons;
	// triggers arriving meanwhile wait for the next one.
	fmt.Printf("scale: cycles=%.0f every_ms=%.0f deciding_ms=%.1f\n", cycles, ms(play.makespan())/max(cycles, 1), deciding*1000/max(cycles, 1))
	fmt.Printf("scale: cycle_ms%s\n", cyclePhases(op, cycles))
	fmt.Printf("scale: reason_refreshes%s\n", reasonRefreshes(op))
	fmt.Printf("scale: apps_ever_partial=%d unschedulable_peak=%d unschedulable_executors=%d\n", len(j.everPartial), j.unschedulablePeak, j.unschedulableExecutors())
	utilisation, _ := j.utilisation()
	fmt.Printf("scale: finished=%d unfinished=%d stuck=%d makespan_s=%.1f utilisation=%.3f freed_ends=%d unmatched=%d freed_to_admitted_p50_ms=%.0f freed_to_admitted_p99_ms=%.0f api_writes_per_app=%.1f api_reads_per_app=%.1f\n",
		obs.finished, c.apps-obs.finished, obs.stuck, play.makespan().Seconds(), utilisation,
		len(freed.toDriver), freed.unmatched, ms(percentile(freed.toAdmitted, 50)), ms(percentile(freed.toAdmitted, 99)), use.writes, use.reads)
	fmt.Printf("RESULT scenario=scale nodes=%d apps=%d queues=%d decisions_per_s=%.0f freed_to_driver_p50_ms=%.0f freed_to_driver_p99_ms=%.0f partial_starts=%d rss_mib=%.1f settled_rss_mib=%.1f api_requests_per_app=%.1f\n",
		nodes, c.apps, c.queues, decisionsPerS, ms(percentile(freed.toDriver, 50)), ms(percentile(freed.toDriver, 99)), j.partialPeak,
		rss, settled, use.writes+use.reads)
	return nil
}

// Queue q of the scale scenario has priority scalePriorityStep × (q mod scalePriorityLevels),
// so the queues fall into that many priority levels; and each has scaleQuotaShare/queues of
// the cluster's CPU and memory as its quota, at least scaleMinQuota (the largest gang fits
// any queue). With 20 queues, each level's 5 queues have 75% of the cluster between them: the
// highest level's quotas bind, and the capacity it leaves goes to the next level down.
const (
	scalePriorityLevels = 4
	scalePriorityStep   = 10
	scaleQuotaShare     = 3
)

// scaleMinQuota is the smallest quota of a queue: more than the mixed load's largest gang
// (a 1-CPU driver and 12 executors of 2 CPU and 1 GiB, with Spark's memory overhead).
var scaleMinQuota = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("64Gi")}

// scaleQueues are the scenario's n top-level queues, named after prefix, for a cluster of
// cpu and memory allocatable.
func scaleQueues(prefix string, n int, cpu, memory resource.Quantity) []*schedv1alpha1.Queue {
	atLeast := func(q resource.Quantity, name corev1.ResourceName) resource.Quantity {
		if least := scaleMinQuota[name]; q.Cmp(least) < 0 {
			return least.DeepCopy()
		}
		return q
	}
	quota := corev1.ResourceList{
		corev1.ResourceCPU:    atLeast(*resource.NewMilliQuantity(cpu.MilliValue()*scaleQuotaShare/int64(n), resource.DecimalSI), corev1.ResourceCPU),
		corev1.ResourceMemory: atLeast(*resource.NewQuantity(memory.Value()*scaleQuotaShare/int64(n), resource.BinarySI), corev1.ResourceMemory),
	}
	queues := make([]*schedv1alpha1.Queue, n)
	for q := range n {
		queues[q] = &schedv1alpha1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-q%02d", prefix, q)},
			Spec: schedv1alpha1.QueueSpec{
				Priority: int32(scalePriorityStep * (q % scalePriorityLevels)),
				Quota:    quota.DeepCopy(),
			},
		}
	}
	return queues
}

// scaleApp is application i of the gang scenario's mixed load (gangApp), in a queue of its
// own: consecutive groups of len(gangSizes) applications, one of each size, go to the queues
// in turn, so every queue holds the same mix whatever its priority.
func scaleApp(ns string, i int, queues []*schedv1alpha1.Queue) *v1beta2.SparkApplication {
	app := gangApp(ns, i, "gang")
	q := queues[(i/len(gangSizes))%len(queues)]
	app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To(q.Name)}
	return app
}

// cyclePhases is the mean time a cycle of op's spent in each of its phases
// (spark_operator_gang_cycle_seconds_total), as " phase=ms" fields in the cycle's order.
func cyclePhases(op *operatorProcess, cycles float64) string {
	families, err := op.metrics()
	if err != nil {
		return " unknown"
	}
	seconds := map[string]float64{}
	for _, m := range families["spark_operator_gang_cycle_seconds_total"].GetMetric() {
		seconds[labelValue(m, "phase")] = m.GetCounter().GetValue()
	}
	var b strings.Builder
	for _, phase := range []string{"read", "decide", "store", "wake", "ungate", "placeholders", "reservation_status", "queue_status"} {
		fmt.Fprintf(&b, " %s=%.1f", phase, seconds[phase]*1000/max(cycles, 1))
	}
	return b.String()
}

// reasonRefreshes is how many held applications op woke to show a new reason, by what changed
// (spark_operator_gang_reason_refreshes_total), as " change=count" fields.
func reasonRefreshes(op *operatorProcess) string {
	var b strings.Builder
	for _, change := range []string{"first", "meaning", "numbers"} {
		n, err := op.counter("spark_operator_gang_reason_refreshes_total", "change", change)
		if err != nil {
			return " unknown"
		}
		fmt.Fprintf(&b, " %s=%.0f", change, n)
	}
	return b.String()
}
