/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package batchschedulers tests the operator's integrations with real batch schedulers
// (Volcano, YuniKorn) built from their released source (../shared/third_party) and run beside
// a local control plane of their own, sized so that a handful of applications fit at once.
package batchschedulers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
	"github.com/sparkop/spark-operator/test/testenv"
)

// thirdPartyDir is where the schedulers' released source is kept beside the repository
// (SPARKOP_SHARED overrides ../shared), as hack/batch-schedulers.sh reads it.
func thirdPartyDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SPARKOP_SHARED")
	if dir == "" {
		root, err := cluster.RepoRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, "..", "shared")
	}
	return filepath.Join(dir, "third_party")
}

// requireThirdParty skips the test, saying how to get them, when the tarballs are missing; under
// CI it fails instead.
func requireThirdParty(t *testing.T, tarballs ...string) {
	t.Helper()
	dir := thirdPartyDir(t)
	for _, f := range tarballs {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			testenv.Missing(t, "%s is not in %s: these tests build the scheduler from its released source, which the Go module proxy does not serve. "+
				"Put the upstream release there (git clone --depth 1 --branch TAG of its repository, then tar czf %s of the clone; "+
				"the tags are in hack/batch-schedulers.sh) or point SPARKOP_SHARED at a folder whose third_party holds it.", f, dir, f)
		}
	}
}

// ownCluster starts a local control plane of its own for the test, nodes × cpu CPUs, and runs
// `hack/local-cluster.sh SCHEDULER` on it; both stop when the test ends. Its own, because a
// batch scheduler counts the whole cluster: other tests' pods on a shared one would change
// what fits.
func ownCluster(t *testing.T, scheduler string, nodes, cpu int) (kubeconfig, state string) {
	t.Helper()
	ctx := context.Background()
	// Short: the state path is in every component's command line, and in unix socket paths.
	dir, err := os.MkdirTemp("", "sparkop-"+scheduler+"-")
	if err != nil {
		t.Fatal(err)
	}
	state = filepath.Join(dir, "cluster")
	t.Cleanup(func() {
		if err := cluster.Down(context.Background(), state); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
		if t.Failed() {
			// The schedulers' logs say why a pod waited; the test's output cannot hold them.
			t.Logf("the cluster's logs are kept in %s", filepath.Join(state, "logs"))
			return
		}
		_ = os.RemoveAll(dir)
	})
	kubeconfig, err = cluster.Up(ctx, state, "--nodes", fmt.Sprint(nodes), "--node-cpu", fmt.Sprint(cpu), "--node-memory", "16Gi")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := cluster.Script(ctx, state, scheduler); err != nil {
		t.Fatal(err)
	}
	t.Logf("hack/local-cluster.sh %s took %s", scheduler, time.Since(start).Round(time.Second))
	return kubeconfig, state
}

// fixture plays Spark for the applications of one namespace: executors for each running
// driver, from the executor pod template it was given, and it watches for partial starts.
type fixture struct {
	t   *testing.T
	c   client.Client
	ns  string
	ctx context.Context
	// executorSeconds is how long each executor runs (kwok) before it Succeeds, unless its
	// driver ends first.
	executorSeconds int
	// executorDelay is how long a driver runs before it asks for executors, and batch how many
	// it asks for at a time (0: all at once), as a Spark driver does (spark.kubernetes.
	// allocation.batch.size); each batch comes a round of play after the one before.
	executorDelay time.Duration
	batch         int

	mu sync.Mutex
	// played holds the drivers (by UID) all of whose executors were created; made counts
	// those created so far.
	played map[types.UID]bool
	made   map[types.UID]int
	// pending is, per executor (namespace/name), when it was first seen not bound to a node
	// while its driver ran; waited is the longest any executor waited so.
	pending map[string]time.Time
	waited  time.Duration
	slowest string
	// unplaced are the executors whose driver ended (or that were gone) before they were
	// bound: their application ran in part.
	unplaced []string
	// peakDrivers is the most drivers seen bound and not ended at once; peakCreated the most
	// seen not ended, bound or not (runs started, whether their scheduler binds them or not).
	peakDrivers, peakCreated int
	// seen holds every Spark pod as last seen (executors are deleted when their driver ends).
	seen map[string]corev1.Pod
}

func newFixture(t *testing.T, c client.Client, ns string) *fixture {
	return &fixture{t: t, c: c, ns: ns, ctx: context.Background(), executorSeconds: 60,
		played: map[types.UID]bool{}, made: map[types.UID]int{}, pending: map[string]time.Time{}, seen: map[string]corev1.Pod{}}
}

// app is a SparkPi of a 1-CPU driver that runs for driverSeconds and executors of 1 CPU.
func (f *fixture) app(name, batchScheduler string, executorCount int32, driverSeconds int) *v1beta2.SparkApplication {
	app := cluster.SparkPi(f.ns, name)
	app.Spec.BatchScheduler = ptr.To(batchScheduler)
	app.Spec.Driver.CoreRequest = nil
	app.Spec.Driver.Annotations = map[string]string{executors.AnnotationRunSeconds: fmt.Sprint(driverSeconds)}
	app.Spec.Executor.Instances = ptr.To(executorCount)
	return app
}

func (f *fixture) get(name string) *v1beta2.SparkApplication {
	f.t.Helper()
	app := &v1beta2.SparkApplication{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, app); err != nil {
		f.t.Fatal(err)
	}
	return app
}

func (f *fixture) pods() ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := f.c.List(f.ctx, &list, client.InNamespace(f.ns)); err != nil {
		return nil, err
	}
	return list.Items, nil
}

func ended(p *corev1.Pod) bool {
	return p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// play does what Spark would: each running driver not yet played gets its initial executors,
// which run executorSeconds, and the executors of a driver that has ended exit (are deleted,
// as Spark's driver deletes them); and it records how long executors of running drivers wait
// for a node, and how many drivers run at once. An application's executors never outlive its
// driver, so the drivers running at once are the applications running at once.
func (f *fixture) play() error {
	pods, err := f.pods()
	if err != nil {
		return err
	}
	f.observe(pods)
	live := map[string]bool{} // submission IDs of drivers not ended
	for i := range pods {
		if p := &pods[i]; p.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleDriver && !ended(p) {
			live[p.Labels[v1beta2.LabelSubmissionID]] = true
		}
	}
	for i := range pods {
		p := &pods[i]
		if p.Labels[v1beta2.SparkRoleLabel] != v1beta2.SparkRoleExecutor || live[p.Labels[v1beta2.LabelSubmissionID]] || p.DeletionTimestamp != nil {
			continue
		}
		if err := f.c.Delete(f.ctx, p); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	for i := range pods {
		driver := &pods[i]
		if driver.Labels[v1beta2.SparkRoleLabel] != v1beta2.SparkRoleDriver || driver.Status.Phase != corev1.PodRunning || f.played[driver.UID] {
			continue
		}
		app := &v1beta2.SparkApplication{}
		if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: driver.Labels[v1beta2.LabelAppName]}, app); err != nil {
			return err
		}
		template, err := executors.TemplateOf(f.ctx, f.c, driver)
		if apierrors.IsNotFound(err) {
			continue // the submitter creates the template just after the driver
		}
		if err != nil {
			return err
		}
		if template == nil {
			return fmt.Errorf("driver %s has no executor pod template", driver.Name)
		}
		if started := driver.Status.StartTime; f.executorDelay > 0 && (started == nil || time.Since(started.Time) < f.executorDelay) {
			continue
		}
		count := initialExecutors(app)
		next := f.made[driver.UID] + 1
		last := count
		if f.batch > 0 {
			last = min(count, next+f.batch-1)
		}
		for id := next; id <= last; id++ {
			pod, err := executors.Build(driver, id, executors.Options{Cores: int(ptr.Deref(app.Spec.Executor.Cores, 1)), MemoryMiB: 512, Template: template,
				Annotations: map[string]string{executors.AnnotationRunSeconds: fmt.Sprint(f.executorSeconds)}})
			if err != nil {
				return err
			}
			if err := f.c.Create(f.ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
		}
		f.made[driver.UID] = last
		f.played[driver.UID] = last >= count
	}
	return nil
}

// initialExecutors is how many executors Spark starts app with: its instances, or with dynamic
// allocation the largest of its initial and minimum executors (and instances).
func initialExecutors(app *v1beta2.SparkApplication) int {
	n := ptr.Deref(app.Spec.Executor.Instances, 0)
	if da := app.Spec.DynamicAllocation; da != nil && da.Enabled {
		n = max(n, ptr.Deref(da.InitialExecutors, 0), ptr.Deref(da.MinExecutors, 0))
	}
	return int(n)
}

// observe records, from one list of the namespace's pods, the drivers running at once and the
// executors of running drivers still waiting for a node.
func (f *fixture) observe(pods []corev1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	running := map[string]bool{} // submission IDs of drivers bound and not ended
	drivers, created := 0, 0
	for i := range pods {
		p := &pods[i]
		if p.Labels[v1beta2.SparkRoleLabel] != v1beta2.SparkRoleDriver || ended(p) {
			continue
		}
		created++
		if p.Spec.NodeName != "" {
			drivers++
			running[p.Labels[v1beta2.LabelSubmissionID]] = true
		}
	}
	f.peakDrivers = max(f.peakDrivers, drivers)
	f.peakCreated = max(f.peakCreated, created)
	for _, p := range pods {
		if p.Labels[v1beta2.SparkRoleLabel] != "" {
			f.seen[p.Name] = p
		}
	}
	for i := range pods {
		p := &pods[i]
		if p.Labels[v1beta2.SparkRoleLabel] != v1beta2.SparkRoleExecutor {
			continue
		}
		key := p.Namespace + "/" + p.Name
		since, seen := f.pending[key]
		switch {
		case p.Spec.NodeName == "" && running[p.Labels[v1beta2.LabelSubmissionID]] && !seen:
			f.pending[key] = now
		case seen && p.Spec.NodeName != "":
			if d := now.Sub(since); d > f.waited {
				f.waited, f.slowest = d, p.Name
			}
			delete(f.pending, key)
		}
	}
	executors := map[string]*corev1.Pod{}
	for i := range pods {
		if p := &pods[i]; p.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleExecutor {
			executors[p.Namespace+"/"+p.Name] = p
		}
	}
	for key, since := range f.pending {
		if d := now.Sub(since); d > f.waited {
			f.waited, f.slowest = d, key
		}
		// Its wait ends with its driver: an executor still unbound then never ran.
		if p, ok := executors[key]; !ok || !running[p.Labels[v1beta2.LabelSubmissionID]] {
			f.unplaced = append(f.unplaced, key)
			delete(f.pending, key)
		}
	}
}

// fixtureDriverSeconds is how long the fixture's drivers run. An executor not bound by then never
// runs: long enough for a batch scheduler slowed by the tests beside it, short enough for 20
// applications to pass through a cluster that fits 4 in about a minute. (At 4 s, a Volcano run
// failed once with an executor unbound for 16 s, taken then for CPU starvation; a failure at
// 10 s since was traced to Volcano's queue shares instead, see TestVolcano.)
const fixtureDriverSeconds = 10

// maxExecutorWait is the longest an executor of a running driver may wait for its node: the
// batch schedulers here bind a pod whose room they reserved within a scheduling period (0.5–1 s).
const maxExecutorWait = 10 * time.Second

// checkNoPartialStarts fails t if an application ran in part: at most fit of them (the
// cluster's room, by nodes) and at least 2 ran at once, and every executor got its node while
// its driver ran, within maxExecutorWait.
func (f *fixture) checkNoPartialStarts(t *testing.T, fit int) {
	t.Helper()
	if f.peakDrivers > fit {
		t.Errorf("%d drivers ran at once on a cluster that fits %d applications", f.peakDrivers, fit)
	}
	if f.peakDrivers < 2 {
		t.Errorf("at most %d driver ran at once: the applications did not share the cluster", f.peakDrivers)
	}
	if len(f.unplaced) > 0 {
		t.Errorf("executors %v got no node before their driver ended: their applications ran in part", f.unplaced)
	}
	if f.waited > maxExecutorWait {
		t.Errorf("executor %s of a running driver waited %s for a node: its application started in part", f.slowest, f.waited.Round(time.Millisecond))
	}
}

// checkExecutorsMade fails t unless every named application's driver got its initial
// executors: a driver that ended before play saw it running ran without them, and its
// application says nothing of the gang.
func (f *fixture) checkExecutorsMade(t *testing.T, names []string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	made := map[string]int{}
	for _, p := range f.seen {
		if p.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleExecutor {
			made[p.Labels[v1beta2.LabelAppName]]++
		}
	}
	for _, name := range names {
		if want := initialExecutors(f.get(name)); made[name] < want {
			t.Errorf("%s: %d of its %d executors were made: its driver ended before play saw it running", name, made[name], want)
		}
	}
}

// runToCompletion plays Spark until every named application is COMPLETED, failing the test
// if one fails or the time runs out; each, if set, is called before each round.
func (f *fixture) runToCompletion(timeout time.Duration, names []string, each func() error) {
	f.t.Helper()
	cluster.Eventually(f.t, timeout, fmt.Sprintf("%d applications to complete", len(names)), func() (bool, error) {
		if each != nil {
			if err := each(); err != nil {
				return false, err
			}
		}
		if err := f.play(); err != nil {
			return false, err
		}
		var apps v1beta2.SparkApplicationList
		if err := f.c.List(f.ctx, &apps, client.InNamespace(f.ns)); err != nil {
			return false, err
		}
		done := 0
		for _, app := range apps.Items {
			if !slices.Contains(names, app.Name) {
				continue
			}
			switch app.Status.AppState.State {
			case v1beta2.ApplicationStateCompleted:
				done++
			case v1beta2.ApplicationStateFailed, v1beta2.ApplicationStateFailedSubmission:
				return false, fmt.Errorf("%s failed: %s", app.Name, app.Status.AppState.ErrorMessage)
			}
		}
		return done == len(names), nil
	})
}

// describeOnFailure logs where each application and pod was when the test failed.
func (f *fixture) describeOnFailure() {
	if !f.t.Failed() {
		return
	}
	var apps v1beta2.SparkApplicationList
	if err := f.c.List(context.Background(), &apps, client.InNamespace(f.ns)); err == nil {
		for _, app := range apps.Items {
			f.t.Logf("%s: state %q (%s), submission %s", app.Name, app.Status.AppState.State, app.Status.AppState.ErrorMessage, app.Status.SubmissionID)
		}
	}
	pods, err := f.pods()
	if err != nil {
		return
	}
	for _, p := range pods {
		var why []string
		for _, c := range p.Status.Conditions {
			if c.Status != corev1.ConditionTrue && c.Message != "" {
				why = append(why, c.Message)
			}
		}
		f.t.Logf("pod %s: %s on %q %s", p.Name, p.Status.Phase, p.Spec.NodeName, strings.Join(why, "; "))
	}
}

// sparkPods are the Spark pods of the namespace, as last seen by play (ended executors are
// deleted) or listed now.
func (f *fixture) sparkPods() ([]corev1.Pod, error) {
	pods, err := f.pods()
	if err != nil {
		return nil, err
	}
	f.observe(pods)
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]corev1.Pod, 0, len(f.seen))
	for _, p := range f.seen {
		out = append(out, p)
	}
	return out, nil
}

// driversCreated is when each application's driver pod was made, as play last saw them.
func (f *fixture) driversCreated() map[string]time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]time.Time{}
	for _, p := range f.seen {
		if p.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleDriver {
			out[p.Labels[v1beta2.LabelAppName]] = p.CreationTimestamp.Time
		}
	}
	return out
}

// createAtOnce creates the applications build makes of names, all at once (side by side, as a
// burst of users would), and fails the test if any creation fails.
func (f *fixture) createAtOnce(names []string, build func(name string) *v1beta2.SparkApplication) {
	f.t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(names))
	for _, name := range names {
		app := build(name)
		wg.Go(func() { errs <- f.c.Create(f.ctx, app) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			f.t.Fatal(err)
		}
	}
}

// names are the applications prefix-0 … prefix-(n-1).
func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}
