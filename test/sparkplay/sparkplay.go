/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package sparkplay plays Spark for the tests of batch scheduling on simulated (kwok) nodes,
// where no driver ever asks for executors: for each running driver it makes the executors the
// driver would (test/executors, built on the executor pod template the driver was given, as
// many and as big as the application's spec says), and deletes them when the driver ends, as
// Spark's driver does. And it records what a gang is judged by: the drivers running at once,
// and the applications that ran in part. It decides nothing about a test's pass or failure.
package sparkplay

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
	"github.com/sparkop/spark-operator/test/executors"
)

// AnnotationExecutorSeconds on a SparkApplication sets Options.ExecutorSeconds for its
// executors alone.
const AnnotationExecutorSeconds = "sparkplay.sparkop.dev/executor-seconds"

// Options say how the drivers played here behave.
type Options struct {
	// ExecutorSeconds is how long each executor runs (kwok) before it succeeds, unless its
	// driver ends first or its application says otherwise (AnnotationExecutorSeconds); 0
	// means 60. With EndDriversAfterExecutors, how long they run before play ends their
	// driver.
	ExecutorSeconds int
	// Delay is how long a driver runs before it asks for executors, and Batch how many it asks
	// for at a time (0: all at once), as a Spark driver does (spark.kubernetes.allocation.
	// batch.size); each batch comes a step after the one before.
	Delay time.Duration
	Batch int
	// UnschedulableIsPartial counts an application as run in part as soon as, while its driver
	// runs and all its initial executors exist, one of them is marked Unschedulable: the
	// scheduler tried the whole group and found no room. Leave it off for schedulers that mark
	// the pods of a group still gathering Unschedulable (Volcano, YuniKorn): an executor that
	// gets no node before its driver ends is counted either way.
	UnschedulableIsPartial bool
	// TemplateOptional lets a driver have no executor pod template (no batch scheduler planned
	// its executors); otherwise that is an error.
	TemplateOptional bool
	// EndDrivers ends each driver once every initial executor of its run has been on a node, as
	// a Spark job ends once its tasks ran on them: the driver's run is then bound by what the
	// test checks, not by a time the machine's load can outrun. For drivers that would run on
	// otherwise (no kwok run time): a driver whose executors never get a node runs on, and
	// the test waiting for it fails, saying which.
	EndDrivers bool
	// EndDriversAfterExecutors, with EndDrivers, ends a driver only once each of its initial
	// executors has run ExecutorSeconds (by its start time); the executors then run until
	// their driver ends. So an application holds its whole room while its driver runs, at
	// least that long, as a job's tasks do: applications overlap however fast play is, and
	// however slow.
	EndDriversAfterExecutors bool
	// NoRoomIsPartial counts an application as run in part when, while its driver runs and all
	// its initial executors exist, one of them waits and no node has room for it (the nodes'
	// allocatable less the requests of every pod on them): others took the room its gang
	// should have held. A scheduler slow to bind an executor that has room is not counted.
	// For schedulers that hold room without pods of their own (no placeholders).
	NoRoomIsPartial bool
}

// Player plays Spark for the applications of one namespace. Its methods may be called from
// several goroutines.
type Player struct {
	c    client.Client
	ns   string
	opts Options

	mu sync.Mutex
	// made counts, per driver, the executors created so far; played holds the drivers all of
	// whose initial executors were created.
	made   map[types.UID]int
	played map[types.UID]bool
	// ended holds the drivers play has ended (EndDrivers); hold is how long each run's
	// executors run before its driver ends (EndDriversAfterExecutors), by submission ID.
	ended map[types.UID]bool
	hold  map[string]time.Duration
	// now is the clock executors' run times are read against.
	now func() time.Time
	// waiting are the executors (by name) seen without a node while their driver ran.
	waiting map[string]bool
	// bound are the executors ever seen on a node, by application.
	bound map[string]map[string]bool
	// partial says, per application that ran in part, why.
	partial map[string]string
	// peakDrivers is the most drivers seen on a node and not ended at once; peakCreated the
	// most seen not ended, on a node or not (runs started, whether their scheduler binds them).
	peakDrivers, peakCreated int
	// seen holds every Spark pod as last seen (executors are deleted when their driver ends).
	seen map[string]corev1.Pod
}

// New is a Player for namespace ns.
func New(c client.Client, ns string, o Options) *Player {
	if o.ExecutorSeconds == 0 {
		o.ExecutorSeconds = 60
	}
	return &Player{c: c, ns: ns, opts: o, made: map[types.UID]int{}, played: map[types.UID]bool{}, ended: map[types.UID]bool{},
		hold: map[string]time.Duration{}, now: time.Now,
		waiting: map[string]bool{}, bound: map[string]map[string]bool{}, partial: map[string]string{}, seen: map[string]corev1.Pod{}}
}

// Round is what one step saw.
type Round struct {
	Apps []v1beta2.SparkApplication
	Pods []corev1.Pod
	// Running is how many drivers were on a node and not ended; Finished how many applications
	// were COMPLETED or FAILED.
	Running, Finished int
}

// Step plays once: it records what the namespace's pods show, deletes the executors of drivers
// that ended, and makes executors for running drivers that want them.
func (p *Player) Step(ctx context.Context) (Round, error) {
	var apps v1beta2.SparkApplicationList
	if err := p.c.List(ctx, &apps, client.InNamespace(p.ns)); err != nil {
		return Round{}, err
	}
	var pods corev1.PodList
	if err := p.c.List(ctx, &pods, client.InNamespace(p.ns)); err != nil {
		return Round{}, err
	}
	r := Round{Apps: apps.Items, Pods: pods.Items, Running: p.Observe(pods.Items)}
	if err := p.checkRoom(ctx); err != nil {
		return Round{}, err
	}
	for _, app := range apps.Items {
		if st := app.Status.AppState.State; st == v1beta2.ApplicationStateCompleted || st == v1beta2.ApplicationStateFailed {
			r.Finished++
		}
	}
	if err := p.endExecutors(ctx, pods.Items); err != nil {
		return Round{}, err
	}
	if err := p.endDrivers(ctx, pods.Items); err != nil {
		return Round{}, err
	}
	byName := map[string]*v1beta2.SparkApplication{}
	for i := range apps.Items {
		byName[apps.Items[i].Name] = &apps.Items[i]
	}
	for i := range pods.Items {
		driver := &pods.Items[i]
		app := byName[driver.Labels[v1beta2.LabelAppName]]
		if app == nil || driver.Labels[v1beta2.SparkRoleLabel] != v1beta2.SparkRoleDriver || driver.Status.Phase != corev1.PodRunning || p.isPlayed(driver.UID) {
			continue
		}
		if err := p.makeExecutors(ctx, app, driver); err != nil {
			return Round{}, err
		}
	}
	return r, nil
}

func (p *Player) isPlayed(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.played[uid]
}

// endExecutors deletes the executors whose driver has ended or is gone, as Spark's driver does
// when it stops.
func (p *Player) endExecutors(ctx context.Context, pods []corev1.Pod) error {
	live := liveRuns(pods)
	for i := range pods {
		e := &pods[i]
		if e.Labels[v1beta2.SparkRoleLabel] != v1beta2.SparkRoleExecutor || live[e.Labels[v1beta2.LabelSubmissionID]] || e.DeletionTimestamp != nil {
			continue
		}
		if err := p.c.Delete(ctx, e); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// endDrivers ends, with EndDrivers, each running driver all of whose initial executors have
// been on a node (and, EndDriversAfterExecutors, have run their time there), by kwok's annotations
// (hack/kwok/stages.yaml): exit code 0 after 0 seconds.
func (p *Player) endDrivers(ctx context.Context, pods []corev1.Pod) error {
	if !p.opts.EndDrivers {
		return nil
	}
	bound := map[string]int{} // run → executors that did their part
	for i := range pods {
		if e := &pods[i]; e.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleExecutor && p.didItsPart(e) {
			bound[e.Labels[v1beta2.LabelSubmissionID]]++
		}
	}
	for i := range pods {
		d := &pods[i]
		if d.Labels[v1beta2.SparkRoleLabel] != v1beta2.SparkRoleDriver || d.Status.Phase != corev1.PodRunning || !p.done(d, bound) {
			continue
		}
		patch := client.MergeFrom(d.DeepCopy())
		if d.Annotations == nil {
			d.Annotations = map[string]string{}
		}
		d.Annotations[executors.AnnotationExitCode], d.Annotations[executors.AnnotationRunSeconds] = "0", "0"
		if err := p.c.Patch(ctx, d, patch); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("ending driver %s: %w", d.Name, err)
		}
		p.mu.Lock()
		p.ended[d.UID] = true
		p.mu.Unlock()
	}
	return nil
}

// didItsPart reports whether executor e has been on a node (and, EndDriversAfterExecutors,
// has run there as long as its run holds them, or ended).
func (p *Player) didItsPart(e *corev1.Pod) bool {
	if e.Spec.NodeName == "" {
		return false
	}
	if !p.opts.EndDriversAfterExecutors || Ended(e) {
		return true
	}
	p.mu.Lock()
	hold := p.hold[e.Labels[v1beta2.LabelSubmissionID]]
	p.mu.Unlock()
	return e.Status.StartTime != nil && p.now().Sub(e.Status.StartTime.Time) >= hold
}

// done reports whether driver's work is done: every initial executor of its run made and done
// its part (bound), and play has not ended it yet.
func (p *Player) done(driver *corev1.Pod, bound map[string]int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.played[driver.UID] && !p.ended[driver.UID] && bound[driver.Labels[v1beta2.LabelSubmissionID]] >= p.made[driver.UID]
}

// makeExecutors creates the driver's next executors, as app's spec sizes them, on the executor
// pod template its submitter gave it (its batch scheduler's labels, scheduler name and planned
// nodes included). It waits, to be asked again, while the template's ConfigMap does not exist
// yet (the submitter creates it just after the driver; a real kubelet would not start the
// driver before its volumes can be mounted, kwok marks it Running at once) and while the driver
// has not run for Options.Delay.
func (p *Player) makeExecutors(ctx context.Context, app *v1beta2.SparkApplication, driver *corev1.Pod) error {
	template, err := executors.TemplateOf(ctx, p.c, driver)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if template == nil && !p.opts.TemplateOptional {
		return fmt.Errorf("driver %s has no executor pod template: the nodes its batch scheduler planned cannot reach its executors", driver.Name)
	}
	if started := driver.Status.StartTime; p.opts.Delay > 0 && (started == nil || time.Since(started.Time) < p.opts.Delay) {
		return nil
	}
	memory, err := sparkpod.ParseMiB(ptr.Deref(app.Spec.Executor.Memory, "1g"))
	if err != nil {
		return err
	}
	p.mu.Lock()
	next := p.made[driver.UID] + 1
	p.mu.Unlock()
	annotations, err := p.executorRunTime(app, driver)
	if err != nil {
		return err
	}
	count := InitialExecutors(app)
	last := count
	if p.opts.Batch > 0 {
		last = min(count, next+p.opts.Batch-1)
	}
	for id := next; id <= last; id++ {
		pod, err := executors.Build(driver, id, executors.Options{Cores: int(ptr.Deref(app.Spec.Executor.Cores, 1)), MemoryMiB: int(memory), Template: template,
			Annotations: annotations})
		if err != nil {
			return err
		}
		if err := p.c.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.made[driver.UID] = max(last, p.made[driver.UID])
	p.played[driver.UID] = last >= count
	return nil
}

// executorRunTime is the kwok annotations that end the driver's executors after their run
// time; with EndDriversAfterExecutors none, the run time kept for endDrivers instead.
func (p *Player) executorRunTime(app *v1beta2.SparkApplication, driver *corev1.Pod) (map[string]string, error) {
	runSeconds := fmt.Sprint(p.opts.ExecutorSeconds)
	if s, ok := app.Annotations[AnnotationExecutorSeconds]; ok {
		runSeconds = s
	}
	if !p.opts.EndDriversAfterExecutors {
		return map[string]string{executors.AnnotationRunSeconds: runSeconds}, nil
	}
	seconds, err := strconv.Atoi(runSeconds)
	if err != nil {
		return nil, fmt.Errorf("%s: executors' run time %q: %w", app.Name, runSeconds, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold[driver.Labels[v1beta2.LabelSubmissionID]] = time.Duration(seconds) * time.Second
	return nil, nil
}

// InitialExecutors is how many executors Spark starts app with: its instances, or with dynamic
// allocation the largest of its initial and minimum executors (and instances).
func InitialExecutors(app *v1beta2.SparkApplication) int {
	n := ptr.Deref(app.Spec.Executor.Instances, 0)
	if da := app.Spec.DynamicAllocation; da != nil && da.Enabled {
		n = max(n, ptr.Deref(da.InitialExecutors, 0), ptr.Deref(da.MinExecutors, 0))
	}
	return int(n)
}

// Ended reports whether pod has ended or is on its way out.
func Ended(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// liveRuns are the submission IDs of the drivers that have not ended.
func liveRuns(pods []corev1.Pod) map[string]bool {
	live := map[string]bool{}
	for i := range pods {
		if d := &pods[i]; d.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleDriver && !Ended(d) {
			live[d.Labels[v1beta2.LabelSubmissionID]] = true
		}
	}
	return live
}

// Observe records what one list of the namespace's pods shows, and returns how many drivers
// run (on a node, not ended): an application's executors never outlive its driver, so these
// are the applications running at once.
func (p *Player) Observe(pods []corev1.Pod) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	running := map[string]bool{} // submission IDs of drivers on a node, not ended
	created := 0
	for i := range pods {
		d := &pods[i]
		if d.Labels[v1beta2.SparkRoleLabel] != v1beta2.SparkRoleDriver || Ended(d) {
			continue
		}
		created++
		if d.Spec.NodeName != "" {
			running[d.Labels[v1beta2.LabelSubmissionID]] = true
		}
	}
	p.peakDrivers = max(p.peakDrivers, len(running))
	p.peakCreated = max(p.peakCreated, created)
	present := map[string]bool{}
	for i := range pods {
		pod := &pods[i]
		if pod.Labels[v1beta2.SparkRoleLabel] == "" {
			continue
		}
		p.seen[pod.Name] = *pod.DeepCopy()
		if pod.Labels[v1beta2.SparkRoleLabel] != v1beta2.SparkRoleExecutor {
			continue
		}
		present[pod.Name] = true
		app, run := pod.Labels[v1beta2.LabelAppName], pod.Labels[v1beta2.LabelSubmissionID]
		switch {
		case pod.Spec.NodeName != "":
			if p.bound[app] == nil {
				p.bound[app] = map[string]bool{}
			}
			p.bound[app][pod.Name] = true
			delete(p.waiting, pod.Name)
		case running[run]:
			p.waiting[pod.Name] = true
			if why, ok := unschedulable(pod); ok && p.opts.UnschedulableIsPartial && p.groupMade(pods, run) {
				p.markPartial(app, fmt.Sprintf("its driver ran while executor %s could not be placed: %s", pod.Name, why))
			}
		default:
			// Executors are made for running drivers only: this one's driver ended first.
			p.markPartial(app, fmt.Sprintf("executor %s got no node before its driver ended", pod.Name))
		}
	}
	// An executor's wait ends with its driver: one still without a node then never ran.
	for name := range p.waiting {
		e, ok := p.seen[name]
		if present[name] && running[e.Labels[v1beta2.LabelSubmissionID]] {
			continue
		}
		if !ok || e.Spec.NodeName == "" {
			p.markPartial(e.Labels[v1beta2.LabelAppName], fmt.Sprintf("executor %s got no node before its driver ended", name))
		}
		delete(p.waiting, name)
	}
	return len(running)
}

// groupMade reports whether every initial executor of run was made; called with p.mu held.
func (p *Player) groupMade(pods []corev1.Pod, run string) bool {
	for i := range pods {
		if d := &pods[i]; d.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleDriver && d.Labels[v1beta2.LabelSubmissionID] == run {
			return p.played[d.UID]
		}
	}
	return false
}

// unschedulable is the scheduler's message when pod is marked Unschedulable.
func unschedulable(pod *corev1.Pod) (string, bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.Message, true
		}
	}
	return "", false
}

// markPartial records, once, that app ran in part; called with p.mu held.
func (p *Player) markPartial(app, why string) {
	if _, ok := p.partial[app]; !ok {
		p.partial[app] = why
	}
}

// PeakDrivers is the most drivers seen running at once.
func (p *Player) PeakDrivers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peakDrivers
}

// PeakCreated is the most drivers seen not ended at once, on a node or not: the runs started
// at once, whether their scheduler binds them or not.
func (p *Player) PeakCreated() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peakCreated
}

// Partial says, for each application that ran in part, why: an executor got no node before
// its driver ended, or while its driver ran one could not be placed (UnschedulableIsPartial)
// or had no room on any node (NoRoomIsPartial).
func (p *Player) Partial() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.partial)
}

// Bound is how many of app's executors were ever seen on a node, over all its runs.
func (p *Player) Bound(app string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.bound[app])
}

// Made is how many executors of app were ever seen, over all its runs.
func (p *Player) Made(app string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, pod := range p.seen {
		if pod.Labels[v1beta2.LabelAppName] == app && pod.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleExecutor {
			n++
		}
	}
	return n
}

// Seen is every Spark pod seen, as last seen, by name.
func (p *Player) Seen() []corev1.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	names := slices.Sorted(maps.Keys(p.seen))
	out := make([]corev1.Pod, 0, len(names))
	for _, n := range names {
		out = append(out, p.seen[n])
	}
	return out
}
