/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

// The gang scenario's Spark stand-in. kwok runs no Spark, so this process plays what Spark's
// drivers would do, and watches the run:
//
//   - a job is work in executor-seconds (annotationWork on its application); once its driver
//     runs, its executors are created from the driver's executor pod template, all at once;
//   - the job progresses by one executor-second per second for each of its executors that is
//     running (bound and Running), so a driver whose executors cannot be placed makes no
//     progress: the driver deadlock, as a real Spark driver waits for executors;
//   - when the work is done its executors are deleted and the driver ends (annotation
//     kwok.sparkop.dev/exit-code "0", which kwok turns into Succeeded at once).
//
// The decisions (which executors to start, which jobs are done, what is partial) are made by
// jobs.step on what an informer cache holds, so that they can be tested without a cluster; the
// API calls they lead to run side by side, off the loop that makes them.

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/sparkpod"
)

// annotationWork is a bench application's work in executor-seconds.
const annotationWork = "bench.sparkop.dev/work-executor-seconds"

// unboundGrace is how long an executor may stay unbound, gated or not, before its application
// counts as partially started (one that the kube-scheduler found unschedulable counts at once).
const unboundGrace = 10 * time.Second

// jobs is the stand-in's bookkeeping, one entry per application, and what it has observed of
// the run. It is used by one goroutine (the loop calling step); the outcome of the API calls
// comes back through done.
type jobs struct {
	byApp map[string]*job
	// reservations are the applications' reservations by name, as last read.
	reservations map[string]gang.Reservation
	// partialPeak is the most applications partially started at once; everPartial those ever;
	// unschedulablePeak the most at once with an executor the kube-scheduler found no room for.
	partialPeak, unschedulablePeak int
	everPartial                    map[string]bool
	// beyondFitPeak is the most applications at once started beyond what the nodes fit
	// (beyondFit); everBeyondFit those ever, each with what the step that first found it saw
	// (beyondSight).
	beyondFitPeak int
	everBeyondFit map[string]string
	// cpuShareSeconds and seconds integrate the share of CPU requested by running pods and the
	// time, for the means; the share working is capacity.working.
	cpuShareSeconds, seconds float64
	// unschedulable keeps, per executor pod the kube-scheduler found no room for, when that
	// was first seen, its message and how long the pod stayed so: what the run tells of why.
	unschedulable map[string]*unschedulableExecutor
	// capacity integrates where the nodes' CPU went (see capacityShares), for the means.
	capacity capacityShares
}

// capacityShares splits the nodes' allocatable CPU, as shares of it: requested by the
// applications' running pods at work (working) and not at work (idle), by the competing load's
// running pods (competing) and by running placeholders (placeholders); by pods bound and not
// running yet (starting); kept by the gang scheduler's reservations for members not bound yet,
// of jobs not ended, beyond what placeholders bound hold for them (reserved); and the rest
// (free). Where capacity goes that does no work tells what a scheduler costs, and the
// competing load's share what an application under load cannot have. At work are the running
// pods of jobs that progress: their running executors and their driver. A driver waiting for
// executors (or executors left running after their driver) holds CPU and does no work; in a
// real cluster it uses next to none of what it requested, which is what the simulation counts.
type capacityShares struct {
	working, idle, competing, placeholders, starting, reserved, free float64
}

func (c capacityShares) add(o capacityShares, k float64) capacityShares {
	return capacityShares{c.working + k*o.working, c.idle + k*o.idle, c.competing + k*o.competing,
		c.placeholders + k*o.placeholders, c.starting + k*o.starting, c.reserved + k*o.reserved, c.free + k*o.free}
}

type unschedulableExecutor struct {
	seen    time.Time
	message string
	until   time.Duration // from seen to bound; 0 while unbound
}

type job struct {
	progress float64 // executor-seconds done
	// When the stand-in first saw the application, its reservation, that reservation said held
	// by the pod scheduler (the plugin enforcement), its driver pod, that pod bound, asked for
	// the job to end, and saw the application finished (zero until then).
	seen, admitted, held, driverCreated, driverBound, endAsked, finished time.Time
	// driverCPU and executorCPU are what one pod of each role requests, in millicores (from
	// the application's demand; read once).
	driverCPU, executorCPU int64
	// When the stand-in first saw the driver Running, had created its executors, and saw
	// them all ungated, bound and running (zero until then).
	driverRunning, created, allUngated, allBound, allRunning time.Time
	busy                                                     bool // an API call for it is under way
	started                                                  bool // its executors are created
	ended                                                    bool // its work is done and its driver told to end
	// ending: its end is asked for and under way (endJob: its executors deleted, then its
	// driver told to end); its executors going need no room again.
	ending bool
}

// action is an API call step asks for.
type action struct {
	kind   actionKind
	app    string
	driver *corev1.Pod
	count  int
}

type actionKind int

const (
	startExecutors actionKind = iota
	endJob
)

// observation is what one step saw.
type observation struct {
	finished int  // applications COMPLETED or FAILED
	progress bool // some job progressed, or some application finished, since the last step
	partial  int  // applications partially started now
	// applications partially started now with an executor the kube-scheduler found no room
	// for (the others only waited past the grace)
	unschedulable int
	stuck         int     // applications whose driver runs with no executor running
	cpuShare      float64 // of the nodes' allocatable CPU, the share running pods request
	capacity      capacityShares
	unstarted     int // applications not finished whose driver has not run yet
	beyondFit     int // applications whose driver runs while their missing executors do not fit the nodes
}

func newJobs() *jobs {
	return &jobs{byApp: map[string]*job{}, everPartial: map[string]bool{}, everBeyondFit: map[string]string{},
		unschedulable: map[string]*unschedulableExecutor{}}
}

// step accounts for dt elapsed until now on the state given and returns the API calls to make.
func (j *jobs) step(now time.Time, dt time.Duration, apps []v1beta2.SparkApplication, pods []corev1.Pod, nodes []corev1.Node) ([]action, observation) {
	var obs observation
	t := j.tally(now, pods)
	for i := range nodes {
		q := nodes[i].Status.Allocatable[corev1.ResourceCPU]
		t.alloc += q.MilliValue()
	}
	var acts []action
	for i := range apps {
		if a, ok := j.stepApp(now, dt, &apps[i], &t, &obs); ok {
			acts = append(acts, a)
		}
	}
	beyond := beyondFit(nodes, t.nodeUsed, t.started)
	obs.beyondFit = len(beyond)
	for _, name := range beyond {
		if _, seen := j.everBeyondFit[name]; !seen {
			j.everBeyondFit[name] = j.beyondSight(now, name, nodes, &t)
		}
	}
	j.account(&obs, &t, dt)
	return acts, obs
}

// execState is what one application's live executors are doing.
type execState struct {
	total, ungated, bound, running, partial, unschedulable int
	runningCPU                                             int64 // millicores requested by the running ones
}

// cpuTally is one step's count of the cluster's CPU (millicores) and the Spark pods.
type cpuTally struct {
	// used, starting: all pods' requests, running and bound not running; competing and
	// placeholders: those of running pods of the competing load and running placeholders;
	// placeholdersBound: those of placeholders bound, running or not, which hold room reserved;
	// working: that of running applications with running executors; reserved: that
	// reservations hold for pods not bound yet.
	alloc, used, working, starting, reserved, competing, placeholders, placeholdersBound int64
	drivers                                                                              map[string]*corev1.Pod
	execs                                                                                map[string]*execState
	// nodeUsed is, by node, what its live pods request (placeholders excepted: their room is
	// held for the applications' executors); started are the applications whose driver runs
	// and whose job has not ended. beyondFit reads them.
	nodeUsed map[string]int64
	started  []startedApp
}

// tally counts the pods' CPU and each application's executors.
func (j *jobs) tally(now time.Time, pods []corev1.Pod) cpuTally {
	t := cpuTally{drivers: map[string]*corev1.Pod{}, execs: map[string]*execState{}, nodeUsed: map[string]int64{}}
	for i := range pods {
		p := &pods[i]
		live := p.DeletionTimestamp.IsZero() && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
		running := live && p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning
		if running {
			t.used += cpuOf(p)
			switch {
			case p.Labels[labelLoad] != "":
				t.competing += cpuOf(p)
			case p.Labels[gang.LabelPlaceholder] != "":
				t.placeholders += cpuOf(p)
			}
		} else if live && p.Spec.NodeName != "" {
			t.starting += cpuOf(p)
		}
		if live && p.Spec.NodeName != "" {
			if p.Labels[gang.LabelPlaceholder] != "" {
				t.placeholdersBound += cpuOf(p)
			} else {
				t.nodeUsed[p.Spec.NodeName] += cpuOf(p)
			}
		}
		switch p.Labels[v1beta2.SparkRoleLabel] {
		case v1beta2.SparkRoleDriver:
			t.drivers[p.Name] = p
		case v1beta2.SparkRoleExecutor:
			if live {
				j.tallyExecutor(now, p, running, &t)
			}
		}
	}
	return t
}

// tallyExecutor counts live executor p in its application's execState.
func (j *jobs) tallyExecutor(now time.Time, p *corev1.Pod, running bool, t *cpuTally) {
	app := p.Labels[v1beta2.LabelAppName]
	e := t.execs[app]
	if e == nil {
		e = &execState{}
		t.execs[app] = e
	}
	e.total++
	if len(p.Spec.SchedulingGates) == 0 {
		e.ungated++
	}
	if p.Spec.NodeName != "" {
		e.bound++
		if u := j.unschedulable[p.Name]; u != nil && u.until == 0 {
			u.until = now.Sub(u.seen)
		}
	}
	switch {
	case running:
		e.running++
		e.runningCPU += cpuOf(p)
	case p.Spec.NodeName == "" && unschedulable(p) != nil:
		e.partial++
		e.unschedulable++
		if j.unschedulable[p.Name] == nil {
			j.unschedulable[p.Name] = &unschedulableExecutor{seen: now, message: unschedulable(p).Message}
		}
	case p.Spec.NodeName == "" && now.Sub(p.CreationTimestamp.Time) > unboundGrace:
		e.partial++
	}
}

// stepApp plays app for one step: its times recorded, its reserved room counted, and the
// action its driver takes next, if any.
func (j *jobs) stepApp(now time.Time, dt time.Duration, app *v1beta2.SparkApplication, t *cpuTally, obs *observation) (action, bool) {
	jb := j.job(now, app)
	switch app.Status.AppState.State {
	case v1beta2.ApplicationStateCompleted, v1beta2.ApplicationStateFailed:
		obs.finished++
		if jb.finished.IsZero() {
			jb.finished = now
		}
		return action{}, false
	}
	d := t.drivers[app.DriverPodName()]
	if d != nil && jb.driverCreated.IsZero() {
		jb.driverCreated = now
	}
	if d != nil && d.Spec.NodeName != "" && jb.driverBound.IsZero() {
		jb.driverBound = now
	}
	j.countReserved(now, app, jb, d, t)
	if d == nil || d.Status.Phase != corev1.PodRunning || !d.DeletionTimestamp.IsZero() {
		if d == nil || d.Status.Phase == corev1.PodPending {
			obs.unstarted++
		}
		return action{}, false
	}
	if jb.driverRunning.IsZero() {
		jb.driverRunning = now
	}
	e := t.execs[app.Name]
	if e == nil {
		e = &execState{}
	}
	want := int(ptr.Deref(app.Spec.Executor.Instances, 1))
	for _, ts := range []struct {
		at   *time.Time
		have int
	}{{&jb.allUngated, e.ungated}, {&jb.allBound, e.bound}, {&jb.allRunning, e.running}} {
		if ts.at.IsZero() && jb.started && ts.have >= want {
			*ts.at = now
		}
	}
	if e.unschedulable > 0 {
		obs.unschedulable++
	}
	if e.partial > 0 {
		obs.partial++
		j.everPartial[app.Name] = true
	}
	if !jb.ended && !jb.ending {
		t.started = append(t.started, startedApp{name: app.Name, since: jb.driverRunning, missing: want - e.bound, executorCPU: jb.executorCPU})
	}
	if e.running == 0 {
		obs.stuck++
	} else if !jb.ended {
		t.working += e.runningCPU + cpuOf(d)
	}
	if jb.ended || jb.busy {
		return action{}, false
	}
	if !jb.started {
		jb.busy = true
		return action{kind: startExecutors, app: app.Name, driver: d, count: want}, true
	}
	if e.running > 0 {
		jb.progress += float64(e.running) * dt.Seconds()
		obs.progress = true
	}
	if jb.progress >= workOf(app) {
		jb.busy, jb.ending = true, true
		return action{kind: endJob, app: app.Name, driver: d}, true
	}
	return action{}, false
}

// job is app's job, made on first sight with its pods' CPU.
func (j *jobs) job(now time.Time, app *v1beta2.SparkApplication) *job {
	jb := j.byApp[app.Name]
	if jb == nil {
		jb = &job{seen: now}
		j.byApp[app.Name] = jb
	}
	if jb.driverCPU == 0 && jb.executorCPU == 0 {
		if d, err := sparkpod.DemandOf(app); err == nil {
			jb.driverCPU = d.Driver.Requests.Cpu().MilliValue()
			jb.executorCPU = d.Executor.Requests.Cpu().MilliValue()
		}
	}
	return jb
}

// countReserved records app's admission and counts the room its current reservation holds for
// pods not bound yet.
func (j *jobs) countReserved(now time.Time, app *v1beta2.SparkApplication, jb *job, d *corev1.Pod, t *cpuTally) {
	r, ok := j.reservations[app.Name]
	if !ok || r.SubmissionID != app.Status.SubmissionID || jb.ended {
		return
	}
	if jb.admitted.IsZero() {
		jb.admitted = now
	}
	if r.Held && jb.held.IsZero() {
		jb.held = now
	}
	var bound int64
	if e := t.execs[app.Name]; e != nil {
		bound = int64(e.bound)
	}
	if d == nil || d.Spec.NodeName == "" {
		t.reserved += jb.driverCPU
	}
	var planned int64
	for _, n := range r.Executors {
		planned += int64(n)
	}
	t.reserved += max(planned-bound, 0) * jb.executorCPU
}

// account adds the step's shares of the cluster's CPU, over dt, to the run's.
func (j *jobs) account(obs *observation, t *cpuTally, dt time.Duration) {
	j.partialPeak = max(j.partialPeak, obs.partial)
	j.beyondFitPeak = max(j.beyondFitPeak, obs.beyondFit)
	j.unschedulablePeak = max(j.unschedulablePeak, obs.unschedulable)
	if t.alloc > 0 {
		obs.cpuShare = float64(t.used) / float64(t.alloc)
		a := float64(t.alloc)
		// The room a bound placeholder holds is reserved room too: counted once, as the
		// placeholder's.
		reserved := max(t.reserved-t.placeholdersBound, 0)
		obs.capacity = capacityShares{working: float64(t.working) / a, idle: float64(t.used-t.working-t.competing-t.placeholders) / a,
			competing: float64(t.competing) / a, placeholders: float64(t.placeholders) / a,
			starting: float64(t.starting) / a, reserved: float64(reserved) / a,
			free: float64(t.alloc-t.used-t.starting-reserved) / a}
	}
	j.capacity = j.capacity.add(obs.capacity, dt.Seconds())
	j.cpuShareSeconds += obs.cpuShare * dt.Seconds()
	j.seconds += dt.Seconds()
}

// done records the outcome of an action step asked for; a failed one is asked for again.
func (j *jobs) done(a action, ok bool) {
	jb := j.byApp[a.app]
	jb.busy = false
	if !ok {
		jb.ending = false
		return
	}
	switch a.kind {
	case startExecutors:
		jb.started = true
		jb.created = time.Now()
	case endJob:
		jb.ended = true
		jb.endAsked = time.Now()
	}
}

// stages returns, over the applications that finished, the mean time spent from one stage
// to the next as the stand-in saw them: in the queue (created to admitted, for those with a
// reservation), from admission (or creation) to the driver pod, to its binding, to it
// running, to all executors running, to the job's end (the work), and from the end to the
// application finished. Stages it did not see are left out of their mean. to_held, the part
// of to_driver until the pod scheduler said it holds the reservation's room (the plugin
// enforcement, whose drivers wait for that), follows to_driver.
func (j *jobs) stages() string {
	type span struct {
		name     string
		from, to func(*job) time.Time
	}
	spans := []span{
		{"queued", func(jb *job) time.Time { return jb.seen }, func(jb *job) time.Time { return jb.admitted }},
		{"to_driver", func(jb *job) time.Time {
			if !jb.admitted.IsZero() {
				return jb.admitted
			}
			return jb.seen
		}, func(jb *job) time.Time { return jb.driverCreated }},
		{"to_held", func(jb *job) time.Time { return jb.admitted }, func(jb *job) time.Time {
			if jb.held.After(jb.driverCreated) {
				return time.Time{} // held since a plan made again, after the driver: not what it waited for
			}
			return jb.held
		}},
		{"to_bound", func(jb *job) time.Time { return jb.driverCreated }, func(jb *job) time.Time { return jb.driverBound }},
		{"to_running", func(jb *job) time.Time { return jb.driverBound }, func(jb *job) time.Time { return jb.driverRunning }},
		{"to_executors", func(jb *job) time.Time { return jb.driverRunning }, func(jb *job) time.Time { return jb.allRunning }},
		{"work", func(jb *job) time.Time { return jb.allRunning }, func(jb *job) time.Time { return jb.endAsked }},
		{"to_finished", func(jb *job) time.Time { return jb.endAsked }, func(jb *job) time.Time { return jb.finished }},
	}
	out := "stages_s"
	for _, sp := range spans {
		var sum time.Duration
		n := 0
		for _, jb := range j.byApp {
			from, to := sp.from(jb), sp.to(jb)
			if jb.finished.IsZero() || from.IsZero() || to.IsZero() {
				continue
			}
			sum += to.Sub(from)
			n++
		}
		if n > 0 {
			out += fmt.Sprintf(" %s=%.1f", sp.name, (sum / time.Duration(n)).Seconds())
		}
	}
	c := j.capacity
	k := 1 / max(j.seconds, 1e-9)
	return out + fmt.Sprintf(" cpu working=%.3f idle=%.3f competing=%.3f placeholders=%.3f starting=%.3f reserved=%.3f free=%.3f",
		c.working*k, c.idle*k, c.competing*k, c.placeholders*k, c.starting*k, c.reserved*k, c.free*k)
}

// utilisation is the mean share of the nodes' CPU at work over the run: the applications'
// (capacity.working), and with the competing load's running pods (the cluster's work).
func (j *jobs) utilisation() (applications, cluster float64) {
	t := max(j.seconds, 1e-9)
	return j.capacity.working / t, (j.capacity.working + j.capacity.competing) / t
}

// ramp returns, over the applications whose executors all ran, the mean time from the driver
// running to its executors created, all ungated, all bound and all running, and the longest
// time to all running.
func (j *jobs) ramp() (created, ungated, bound, running, longest time.Duration) {
	n := 0
	for _, jb := range j.byApp {
		if jb.driverRunning.IsZero() || jb.allRunning.IsZero() {
			continue
		}
		created += jb.created.Sub(jb.driverRunning)
		ungated += jb.allUngated.Sub(jb.driverRunning)
		bound += jb.allBound.Sub(jb.driverRunning)
		running += jb.allRunning.Sub(jb.driverRunning)
		longest = max(longest, jb.allRunning.Sub(jb.driverRunning))
		n++
	}
	if n == 0 {
		return 0, 0, 0, 0, 0
	}
	d := time.Duration(n)
	return created / d, ungated / d, bound / d, running / d, longest
}

// unschedulableExecutors counts the executors that waited for room (the kube-scheduler found none)
// after their driver started: executors exist only then.
func (j *jobs) unschedulableExecutors() int { return len(j.unschedulable) }

// unschedulable returns the pod's condition saying the kube-scheduler found no room for it, or
// nil.
func unschedulable(p *corev1.Pod) *corev1.PodCondition {
	i := slices.IndexFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
	})
	if i < 0 {
		return nil
	}
	return &p.Status.Conditions[i]
}

// unschedulableSummary tells how many executors the kube-scheduler found no room for, how long
// they stayed unbound after (mean and longest, over those bound), its messages by count, and
// the first ten of those pods by name (to find in the schedulers' logs).
func (j *jobs) unschedulableSummary() string {
	if len(j.unschedulable) == 0 {
		return ""
	}
	var sum, longest time.Duration
	bound := 0
	messages := map[string]int{}
	for _, u := range j.unschedulable {
		messages[u.message]++
		if u.until > 0 {
			sum += u.until
			longest = max(longest, u.until)
			bound++
		}
	}
	out := fmt.Sprintf("unschedulable executors=%d bound_after_s=%.1f bound_after_max_s=%.1f", len(j.unschedulable),
		(sum / time.Duration(max(bound, 1))).Seconds(), longest.Seconds())
	keys := slices.Sorted(maps.Keys(messages))
	slices.SortStableFunc(keys, func(a, b string) int { return messages[b] - messages[a] })
	for _, m := range keys[:min(len(keys), 5)] {
		out += fmt.Sprintf("\n  %d× %s", messages[m], m)
	}
	pods := slices.Sorted(maps.Keys(j.unschedulable))
	out += "\n  pods: " + strings.Join(pods[:min(len(pods), 10)], " ")
	return out
}

// cpuOf is the CPU, in millicores, that p's containers request.
func cpuOf(p *corev1.Pod) int64 {
	var m int64
	for _, c := range p.Spec.Containers {
		q := c.Resources.Requests[corev1.ResourceCPU]
		m += q.MilliValue()
	}
	return m
}

// workOf reads an application's work; one without is done at once.
func workOf(app *v1beta2.SparkApplication) float64 {
	w, err := strconv.ParseFloat(app.Annotations[annotationWork], 64)
	if err != nil || math.IsNaN(w) {
		return 0
	}
	return w
}
