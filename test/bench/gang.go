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
	"maps"
	"net/http/httptest"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/examples/external-scheduler/sjf"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang"
)

// gangSizes are the executor counts of the mixed load, in turn (2 CPU each, 1-CPU drivers).
var gangSizes = []int32{2, 4, 8, 12}

// runGang is the gang scenario: --apps applications of mixed sizes created at once, run with
// the gang scheduler (--gang, the default) or without it, with this process playing Spark
// (spark.go). It prints
//
//	RESULT mode=gang scheduler=gang|kubernetes|kubernetes-naive|external|volcano|yunikorn|kube-scheduler|kueue|kueue-alone enforcement=advisory|placeholders|plugin load=none|competing apps=… decisions_per_s=… partial_starts=… unschedulable_executors=… placeholder_pods=… utilisation=… cluster_utilisation=… makespan_s=… state_lag_p50_ms=… state_lag_p99_ms=… api_writes_per_app=… api_reads_per_app=… operator_cpu_s=… scheduler_cpu_s=… app_writes_per_app=… beyond_fit=… finished=… [external_rtt_ms=…]
//	gang: mode=gang allocated=… apps_ever_partial=… apps_ever_beyond_fit=… unschedulable_peak=… stuck=… unfinished=… ramp_s=… ramp_max_s=… (created …, ungated …, bound …)
//	gang: mode=gang unschedulable executors=… bound_after_s=… bound_after_max_s=…   (when there were any, with their messages and pods)
//	gang: mode=gang beyond fit <application> at …s: … executors of …m not bound, …   (up to five: what the step that first found each saw)
//	gang: mode=gang runs started without their room held (ReservationNotHeld)=…   (the plugin enforcement)
//	gang: mode=gang unfinished <application> state=… message=… conditions=… pods=…   (up to five, then the operator's log)
//
// partial_starts is the most applications at once whose driver runs while one of its executors
// is unschedulable or has stayed unbound longer than unboundGrace; apps_ever_partial counts the
// applications ever in that state, unschedulable_peak the most at once with an executor the
// kube-scheduler found no room for (the rest of the peak only waited). beyond_fit is the most
// applications at once whose driver runs while their executors not bound yet do not fit the
// nodes' free CPU (beyondFit: drivers started beyond what the nodes fit), apps_ever_beyond_fit
// those ever; finished counts the applications COMPLETED or FAILED by the run's end.
// utilisation is the mean share of the nodes' allocatable CPU at work over the run: requested
// by the running executors of jobs that progress, and by their drivers; cluster_utilisation
// adds the competing load's running pods (--load competing; without load it is utilisation):
// what the cluster does, since the load runs on room the applications then cannot have;
// allocated is the mean share requested by all running pods, idle drivers included. The run
// ends when every application has finished, or gives up when no job has progressed (nor any
// driver started) for stallLimit after all were created (or --timeout has passed): stuck
// counts the applications then left whose driver runs with no executor running, unfinished all
// those not finished. ramp is the mean time from a driver running to all its executors
// running, and within it to all created, ungated and bound.
// operator_cpu_s is the CPU seconds the operator used over the run, scheduler_cpu_s those of the
// processes that schedule for the run's scheduler (schedulerComponents: the pod scheduler and
// the batch scheduler's own); the cpu_s line lists every process of the cluster.
// app_writes_per_app is the mean number of writes of an application a watch saw from its
// creation to the end of the run (appWrites): status writes mostly, queue reasons included.
func runGang(ctx context.Context, c config) error {
	mode := "nogang"
	if c.gang {
		mode = "gang"
	}
	e, err := newBenchEnv(ctx, c, mode)
	if err != nil {
		return err
	}
	defer e.cleanup()
	sched := ""
	if c.gang {
		sched = c.scheduler
	}
	args, cleanup, err := gangSetUp(ctx, c, e, sched)
	defer cleanup()
	if err != nil {
		return err
	}
	op, err := startOperator(ctx, c, e.ns, "gang-"+mode, append(args, gangOperatorArgs...)...)
	if err != nil {
		return err
	}
	defer op.stop()
	cpu := startCPUMeter(c.kubeconfig, op.cmd.Process.Pid)
	runCtx, stopStandIn := context.WithCancel(ctx)
	defer stopStandIn()
	spark, err := newStandIn(runCtx, e.cfg, e.cl, e.ns)
	if err != nil {
		return err
	}

	cost, err := startAPICost(ctx, e)
	if err != nil {
		return err
	}
	var load *competingLoad
	if c.load == "competing" {
		if load, err = startCompetingLoad(runCtx, e); err != nil {
			return err
		}
	}

	play, err := playGang(ctx, runCtx, spark, c.apps, c.timeout, func(i int) *v1beta2.SparkApplication {
		return gangApp(e.ns, i, sched)
	})
	if err != nil {
		return err
	}
	cpuUsed := cpu.finish()
	use, err := cost.per(ctx, c.apps)
	if err != nil {
		return err
	}
	return reportGang(ctx, c, mode, sched, op, spark, play, load, use, cpuUsed)
}

// gangSetUp prepares the run of sched (none: no batch scheduler): its Queue, what it runs with
// (the Kueue objects, the external scheduler), and the operator's flags for it. cleanup undoes
// what was set up, also on an error.
func gangSetUp(ctx context.Context, c config, e *benchEnv, sched string) (args []string, cleanup func(), err error) {
	var undo []func()
	cleanup = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	if sched == "" {
		return nil, cleanup, nil
	}
	q := &schedv1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}
	if err := e.cl.Create(ctx, q); err != nil {
		return nil, cleanup, err
	}
	undo = append(undo, func() { _ = e.cl.Delete(context.Background(), q) })
	switch sched {
	case "gang":
		args = append(args, "--enable-gang-scheduler", "--default-batch-scheduler=gang")
	case "kubernetes":
		args = append(args, "--enable-kubernetes-scheduler")
	case "kubernetes-naive":
		args = append(args, "--enable-kubernetes-naive-scheduler")
	case "external":
		// The example scheduler, in this process: what a user would copy and run.
		srv := httptest.NewServer(sjf.Handler())
		undo = append(undo, srv.Close)
		args = append(args, "--enable-gang-scheduler", "--external-scheduler-url="+srv.URL, "--external-scheduler-interval=1s")
	case "volcano", "yunikorn":
		// Kubeflow's batch schedulers, running in the cluster (hack/local-cluster.sh volcano,
		// yunikorn): the operator only prepares their groups.
		args = append(args, "--enable-batch-scheduler")
	case "kube-scheduler":
		// scheduler-plugins' coscheduling (hack/local-cluster.sh coscheduling).
		args = append(args, "--enable-batch-scheduler", "--kube-scheduler-names=kube-scheduler")
	case "kueue", "kueue-alone":
		// Kueue's own SparkApplication integration (hack/local-cluster.sh kueue) queues the
		// applications labelled for its LocalQueue and resumes them (spec.suspend) as its
		// ClusterQueue has quota. With kueue the operator runs the gang core, as
		// docs/gang-scheduling.md#kueue says to (and make dev does), which admits each resumed
		// application again by the nodes' fit; with kueue-alone it runs with no batch
		// scheduler: Kueue's quota alone holds the gang.
		if sched == "kueue" {
			args = append(args, "--enable-batch-scheduler")
		}
		kueueCleanup, err := setUpKueue(ctx, e)
		if err != nil {
			return nil, cleanup, err
		}
		undo = append(undo, kueueCleanup)
	default:
		return nil, cleanup, fmt.Errorf("--scheduler %q: want gang, kubernetes, kubernetes-naive, external, volcano, yunikorn, kube-scheduler, kueue or kueue-alone", sched)
	}
	if c.enforcement != "" && gangCore(sched) {
		args = append(args, "--gang-enforcement="+c.enforcement)
	}
	return args, cleanup, nil
}

// reportGang prints what the run did: its gang lines, then its RESULT line.
func reportGang(ctx context.Context, c config, mode, sched string, op *operatorProcess, spark *standIn, play gangPlay, load *competingLoad, use apiUse, cpuUsed map[string]float64) error {
	j, obs := play.j, play.obs
	makespan := play.makespan()
	var err error
	lagP50, lagP99, lags := spark.lag.percentiles()
	decisionsPerS := 0.0
	if c.gang && gangCore(sched) { // the others' admissions are not the gang core's to count
		if decisionsPerS, err = op.decisionRate(); err != nil {
			return err
		}
	}
	created, ungated, bound, running, longest := j.ramp()
	fmt.Printf("gang: mode=%s allocated=%.3f apps_ever_partial=%d apps_ever_beyond_fit=%d unschedulable_peak=%d stuck=%d unfinished=%d ramp_s=%.1f ramp_max_s=%.1f (created %.1f, ungated %.1f, bound %.1f)\n",
		mode, j.cpuShareSeconds/max(j.seconds, 1e-9), len(j.everPartial), len(j.everBeyondFit), j.unschedulablePeak, obs.stuck, c.apps-obs.finished,
		running.Seconds(), longest.Seconds(), created.Seconds(), ungated.Seconds(), bound.Seconds())
	fmt.Printf("gang: mode=%s %s\n", mode, j.stages())
	if q, err := op.workQueues(); err == nil {
		fmt.Printf("gang: mode=%s %s\n", mode, q)
	}
	if u := j.unschedulableSummary(); u != "" {
		fmt.Printf("gang: mode=%s %s\n", mode, u)
	}
	for _, name := range slices.Sorted(maps.Keys(j.everBeyondFit))[:min(len(j.everBeyondFit), 5)] {
		fmt.Printf("gang: mode=%s beyond fit %s %s\n", mode, name, j.everBeyondFit[name])
	}
	for _, u := range play.unfinished {
		fmt.Printf("gang: mode=%s unfinished %s\n", mode, u)
	}
	if len(play.unfinished) > 0 {
		fmt.Printf("gang: mode=%s operator log %s\n", mode, op.log)
	}
	if c.gang && gangCore(sched) && c.enforcement == string(gang.EnforcementPlugin) {
		// A run that the pod scheduler did not say it holds within the wait starts without
		// (advisory): other pods may take its members' room.
		unheld, err := eventCount(ctx, spark.cl, spark.ns, "ReservationNotHeld")
		if err != nil {
			return err
		}
		fmt.Printf("gang: mode=%s runs started without their room held (ReservationNotHeld)=%d\n", mode, unheld)
	}
	utilisation, clusterUtilisation := j.utilisation()
	enforcement := c.enforcement
	if enforcement == "" {
		enforcement = "advisory"
	}
	var placeholders float64
	if c.gang && gangCore(sched) {
		if placeholders, err = op.counter("spark_operator_gang_placeholder_writes_total", "verb", "create"); err != nil {
			return err
		}
		if c.enforcement == string(gang.EnforcementPlaceholders) {
			standIns, err := op.counter("spark_operator_gang_placeholder_stand_ins_total", "", "")
			if err != nil {
				return err
			}
			fmt.Printf("gang: mode=%s placeholders created=%.0f (for executors missing from their node's swap: %.0f)\n", mode, placeholders, standIns)
		}
	}
	if load != nil {
		fmt.Printf("gang: mode=%s competing pods created=%d (target %d live of %d CPU each, %d s each)\n", mode, load.created.Load(), load.target, competingCPU, competingSeconds)
	}
	fmt.Printf("gang: mode=%s %s\n", mode, use.top)
	if c.gang && gangCore(sched) {
		fmt.Printf("gang: mode=%s reason_refreshes%s\n", mode, reasonRefreshes(op))
	}
	fmt.Printf("gang: mode=%s state_lag over %d driver starts and ends; %s\n", mode, lags, spark.lag.split())
	fmt.Printf("gang: mode=%s %s\n", mode, cpuLine(cpuUsed))
	extra := ""
	if sched == "external" {
		rtt, err := op.externalRoundTrip()
		if err != nil {
			return err
		}
		extra = fmt.Sprintf(" external_rtt_ms=%.1f", ms(rtt))
	}
	schedField := ""
	if sched != "" {
		schedField = " scheduler=" + sched
	}
	// One line for every gang comparison (make bench-gang): the scheduler, the enforcement and
	// the load it ran with, then what it did.
	fmt.Printf("RESULT mode=%s%s enforcement=%s load=%s apps=%d decisions_per_s=%.0f partial_starts=%d unschedulable_executors=%d placeholder_pods=%.0f utilisation=%.3f cluster_utilisation=%.3f makespan_s=%.1f state_lag_p50_ms=%.0f state_lag_p99_ms=%.0f api_writes_per_app=%.1f api_reads_per_app=%.1f operator_cpu_s=%.1f scheduler_cpu_s=%.1f app_writes_per_app=%.1f beyond_fit=%d finished=%d%s\n",
		mode, schedField, enforcement, c.load, c.apps, decisionsPerS, j.partialPeak, j.unschedulableExecutors(), placeholders, utilisation, clusterUtilisation, makespan.Seconds(),
		ms(lagP50), ms(lagP99), use.writes, use.reads, cpuUsed["operator"], sumOf(cpuUsed, schedulerComponentsOf(sched)),
		spark.writes.perApp(c.apps), j.beyondFitPeak, obs.finished, extra)
	return nil
}

// gangOperatorArgs are the operator's flags in every run of the gang and scale scenarios,
// beside its scheduler's: 32 submission workers and no SparkConnect controller.
var gangOperatorArgs = []string{"--submission-workers", "32", "--enable-spark-connect=false"}

// gangPlay is what the stand-in saw of one run of applications created at once.
type gangPlay struct {
	j *jobs
	// obs is the last step's observation.
	obs observation
	// start is the first create call, last the last step.
	start, last time.Time
	// unfinished describes the applications not finished at the last step (unfinishedApps).
	unfinished []string
}

// makespan is from the first creation to the last application finished (or to giving up).
func (p gangPlay) makespan() time.Duration { return p.last.Sub(p.start) }

// playGang creates n applications at once (newApp(i), 32 create calls side by side) and plays
// Spark for them with spark until every one has finished, no job has progressed (nor any
// driver started) for stallLimit since they were all created, or timeout has passed. Its API
// calls run on runCtx.
func playGang(ctx, runCtx context.Context, spark *standIn, n int, timeout time.Duration, newApp func(i int) *v1beta2.SparkApplication) (gangPlay, error) {
	p := gangPlay{j: newJobs(), start: time.Now()}
	if failed := inParallel(n, 32, 0, func(i int) error {
		return spark.cl.Create(ctx, newApp(i))
	}); failed > 0 {
		return p, fmt.Errorf("%d of %d applications could not be created", failed, n)
	}
	p.last = p.start
	// The stall clock starts once every application exists: at scale the creation alone takes
	// longer than stallLimit.
	lastProgress := time.Now()
	deadline := p.start.Add(timeout)
	tick := time.NewTicker(standInTick)
	defer tick.Stop()
	for {
		select {
		case r := <-spark.results:
			p.j.done(r.a, r.ok)
			continue
		case <-tick.C:
		}
		apps, pods, nodes, err := spark.read(ctx)
		if err != nil {
			return p, err
		}
		if p.j.reservations, err = spark.reservations(ctx); err != nil {
			return p, err
		}
		now := time.Now()
		finishedBefore, unstartedBefore := p.obs.finished, p.obs.unstarted
		var acts []action
		acts, p.obs = p.j.step(now, now.Sub(p.last), apps, pods, nodes)
		p.last = now
		for _, a := range acts {
			spark.run(runCtx, a)
		}
		// A driver starting is progress too: many admitted at once take a while to get their
		// executors running.
		if p.obs.progress || p.obs.finished > finishedBefore || p.obs.unstarted < unstartedBefore {
			lastProgress = now
		}
		if p.obs.finished == n || now.Sub(lastProgress) > stallLimit || now.After(deadline) {
			p.unfinished = unfinishedApps(apps, pods, 5)
			return p, nil
		}
	}
}

// decisionRate is the gang scheduler's decisions per second of deciding (see gangDecisions);
// 0 before it has decided anything.
func (o *operatorProcess) decisionRate() (float64, error) {
	decisions, busy, err := o.gangDecisions()
	if err != nil || busy == 0 {
		return 0, err
	}
	return decisions / busy, nil
}

// startCompetingLoad starts the competing load in e's namespace and waits until it takes its
// share (or competingSeconds have passed), so the applications meet it at its steady state.
func startCompetingLoad(ctx context.Context, e *benchEnv) (*competingLoad, error) {
	var nodes corev1.NodeList
	if err := e.cl.List(ctx, &nodes); err != nil {
		return nil, err
	}
	cpu := allocatable(nodes.Items, corev1.ResourceCPU)[corev1.ResourceCPU]
	load := newCompetingLoad(e.cl, e.ns, cpu.Value())
	go load.run(ctx)
	deadline := time.Now().Add(competingSeconds * time.Second)
	for time.Now().Before(deadline) && load.created.Load() < int64(load.target) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return load, nil
}

// counter reads the counter name of the operator's metrics, of the series whose label is value.
func (o *operatorProcess) counter(name, label, value string) (float64, error) {
	families, err := o.metrics()
	if err != nil {
		return 0, err
	}
	for _, m := range families[name].GetMetric() {
		if labelValue(m, label) == value {
			return m.GetCounter().GetValue(), nil
		}
	}
	return 0, nil // never incremented: the series does not exist yet
}

// standInTick is how often the stand-in reads its cache and acts; stallLimit how long the run
// goes on with no job progressing before it gives up.
const (
	standInTick = 200 * time.Millisecond
	stallLimit  = 60 * time.Second
)

// gangApp is application i of the mixed load: a 1-CPU driver and 2, 4, 8 or 12 executors of
// 2 CPU, in turn, with 20, 30 or 40 seconds of work for each executor, in turn.
func gangApp(ns string, i int, sched string) *v1beta2.SparkApplication {
	app := benchApp(ns, i)
	n := gangSizes[i%len(gangSizes)]
	app.Annotations = map[string]string{annotationWork: fmt.Sprint(int(n) * (20 + 10*(i%3)))}
	app.Spec.Driver.Cores, app.Spec.Driver.CoreRequest = ptr.To[int32](1), nil
	app.Spec.Executor.Cores = ptr.To[int32](2)
	app.Spec.Executor.Memory = ptr.To("1024m")
	app.Spec.Executor.Instances = ptr.To(n)
	switch {
	case sched == "kueue" || sched == "kueue-alone":
		// Kueue queues by label, with no batch scheduler named (setUpKueue). It counts CPU by
		// coreRequest alone, so the pods' request (cores) is said again there.
		app.Labels = map[string]string{scheduler.LabelKueueQueueName: kueueLocalQueue}
		app.Spec.Driver.CoreRequest = ptr.To(fmt.Sprint(*app.Spec.Driver.Cores))
		app.Spec.Executor.CoreRequest = ptr.To(fmt.Sprint(*app.Spec.Executor.Cores))
	case sched != "" && sched != "gang": // gang is the operator's default there
		app.Spec.BatchScheduler = ptr.To(sched)
	}
	if gangCore(sched) {
		// A queue of the run's own; the other schedulers' queues are theirs (their defaults).
		app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To(ns)}
	}
	return app
}

// gangCore reports whether sched is decided by the operator's gang core (its queues, decisions,
// placeholders): gang and its variants.
func gangCore(sched string) bool {
	return sched == "gang" || sched == "kubernetes" || sched == "external"
}

// gangDecisions reads the gang scheduler's decision count and the time it spent deciding.
func (o *operatorProcess) gangDecisions() (decisions, seconds float64, err error) {
	families, err := o.metrics()
	if err != nil {
		return 0, 0, err
	}
	value := func(name string) (float64, error) {
		f, ok := families[name]
		if !ok || len(f.GetMetric()) == 0 {
			return 0, fmt.Errorf("the operator exposes no %s", name)
		}
		return f.GetMetric()[0].GetCounter().GetValue(), nil
	}
	if decisions, err = value("spark_operator_gang_decisions_total"); err != nil {
		return 0, 0, err
	}
	seconds, err = value("spark_operator_gang_schedule_seconds_total")
	return decisions, seconds, err
}

// externalRoundTrip is the mean round trip of the operator's requests to the external scheduler
// (one per cycle in which its applications wait).
func (o *operatorProcess) externalRoundTrip() (time.Duration, error) {
	families, err := o.metrics()
	if err != nil {
		return 0, err
	}
	f, ok := families["spark_operator_gang_external_request_seconds"]
	if !ok || len(f.GetMetric()) == 0 {
		return 0, fmt.Errorf("the operator exposes no spark_operator_gang_external_request_seconds")
	}
	h := f.GetMetric()[0].GetHistogram()
	if h.GetSampleCount() == 0 {
		return 0, nil
	}
	return time.Duration(h.GetSampleSum() / float64(h.GetSampleCount()) * float64(time.Second)), nil
}

// workQueues summarises the operator's work queues (see queueSummary).
func (o *operatorProcess) workQueues() (string, error) {
	families, err := o.metrics()
	if err != nil {
		return "", err
	}
	return queueSummary(families), nil
}

// queueSummary tells, for each work queue in families (the SparkApplication controller's, the
// submission pool's, and any other), the items handled, and their mean wait in the queue and
// mean handling time, from controller-runtime's histograms. A long wait means the operator
// itself, not the API server, delays what its items do.
func queueSummary(families map[string]*dto.MetricFamily) string {
	// One histogram per queue name (its other label, controller, repeats the name).
	byName := func(family string) map[string]*dto.Histogram {
		out := map[string]*dto.Histogram{}
		for _, m := range families[family].GetMetric() {
			if name := labelValue(m, "name"); name != "" {
				out[name] = m.GetHistogram()
			}
		}
		return out
	}
	waits, works := byName("workqueue_queue_duration_seconds"), byName("workqueue_work_duration_seconds")
	out := "queues"
	for _, name := range slices.Sorted(maps.Keys(waits)) {
		n := float64(waits[name].GetSampleCount())
		if n == 0 {
			continue
		}
		out += fmt.Sprintf(" %s=%.0f wait_s=%.3f work_s=%.3f", name, n, waits[name].GetSampleSum()/n, works[name].GetSampleSum()/n)
	}
	return out
}

// queueDepth sums the depth of the work queue name over its series: a priority queue (the
// controllers' default) has one per priority, and the applications of a controller's initial
// list wait at a low one. ok is false when the queue reports no depth.
func queueDepth(families map[string]*dto.MetricFamily, name string) (depth float64, ok bool) {
	for _, m := range families["workqueue_depth"].GetMetric() {
		if labelValue(m, "name") == name {
			depth, ok = depth+m.GetGauge().GetValue(), true
		}
	}
	return depth, ok
}

// eventCount counts the events of ns with reason.
func eventCount(ctx context.Context, cl client.Client, ns, reason string) (int, error) {
	var events corev1.EventList
	if err := cl.List(ctx, &events, client.InNamespace(ns), client.MatchingFields{"reason": reason}); err != nil {
		return 0, fmt.Errorf("listing the %s events: %w", reason, err)
	}
	return len(events.Items), nil
}

// unfinishedApps describes up to limit of apps not COMPLETED or FAILED, by name: the state, the
// status's conditions and message, and the phase and node of each of its pods.
func unfinishedApps(apps []v1beta2.SparkApplication, pods []corev1.Pod, limit int) []string {
	byApp := map[string][]string{}
	for i := range pods {
		p := &pods[i]
		if app := p.Labels[v1beta2.LabelAppName]; app != "" {
			byApp[app] = append(byApp[app], fmt.Sprintf("%s:%s@%s", p.Name, p.Status.Phase, p.Spec.NodeName))
		}
	}
	var out []string
	for i := range apps {
		a := &apps[i]
		switch a.Status.AppState.State {
		case v1beta2.ApplicationStateCompleted, v1beta2.ApplicationStateFailed:
			continue
		}
		if len(out) == limit {
			out = append(out, "…")
			break
		}
		conds := make([]string, 0, len(a.Status.Conditions))
		for _, c := range a.Status.Conditions {
			conds = append(conds, fmt.Sprintf("%s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message))
		}
		slices.Sort(byApp[a.Name])
		out = append(out, fmt.Sprintf("%s state=%q message=%q conditions=%v pods=%v",
			a.Name, a.Status.AppState.State, a.Status.AppState.ErrorMessage, conds, byApp[a.Name]))
	}
	return out
}
