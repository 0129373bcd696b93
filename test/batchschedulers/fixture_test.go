/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package batchschedulers runs applications end to end through the real batch schedulers the
// operator integrates with (Volcano and YuniKorn built from their released source in
// ../shared/third_party; coscheduling and Kueue from the module proxy), each started by
// hack/local-cluster.sh on a local control plane of the test's own, sized so that a handful of
// applications fit at once. The tests play Spark (test/sparkplay: each running driver's
// executors from the executor pod template it was given; kwok runs and ends them, and play
// ends each driver once its executors have run) and check that no application runs in part.
package batchschedulers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/sparkplay"
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
		// The schedulers' logs say why a pod waited; the test's output cannot hold them. They
		// are moved out of the state, which stopping the cluster removes (the components write
		// on to the files they have open until they stop).
		kept := filepath.Join(dir, "logs")
		failed := t.Failed()
		if failed {
			if err := os.Rename(filepath.Join(state, "logs"), kept); err != nil {
				t.Logf("keeping the cluster's logs: %v", err)
			}
		}
		if err := cluster.Down(context.Background(), state); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
		if failed {
			t.Logf("the cluster's logs are kept in %s", kept)
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

// fixture plays Spark for the applications of one namespace (test/sparkplay) and checks what
// it saw.
type fixture struct {
	t   *testing.T
	c   client.Client
	ns  string
	ctx context.Context
	*sparkplay.Player
}

// newFixture plays Spark for ns as o says, with every driver running until its executors have
// run (ExecutorSeconds, executorRunSeconds unless o says) and an executor waiting with no node
// that has room for it counted as a partial start: no clock decides what ran in part.
func newFixture(t *testing.T, c client.Client, ns string, o sparkplay.Options) *fixture {
	o.EndDrivers, o.EndDriversAfterExecutors, o.NoRoomIsPartial = true, true, true
	if o.ExecutorSeconds == 0 {
		o.ExecutorSeconds = executorRunSeconds
	}
	return &fixture{t: t, c: c, ns: ns, ctx: context.Background(), Player: sparkplay.New(c, ns, o)}
}

// app is a SparkPi of a 1-CPU driver and executors of 1 CPU.
func (f *fixture) app(name, batchScheduler string, executorCount int32) *v1beta2.SparkApplication {
	app := cluster.SparkPi(f.ns, name)
	app.Spec.BatchScheduler = ptr.To(batchScheduler)
	app.Spec.Driver.CoreRequest = nil
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

// step plays Spark once and returns the applications and how many have finished.
func (f *fixture) step() ([]v1beta2.SparkApplication, int, error) {
	r, err := f.Step(f.ctx)
	return r.Apps, r.Finished, err
}

// checkNoPartialStarts fails t if an application ran in part (an executor of a running driver
// waited with no node that had room for it), or more than fit of them (the cluster's room, by
// nodes) or fewer than 2 ran at once.
func (f *fixture) checkNoPartialStarts(t *testing.T, fit int) {
	t.Helper()
	if peak := f.PeakDrivers(); peak > fit {
		t.Errorf("%d drivers ran at once on a cluster that fits %d applications", peak, fit)
	} else if peak < 2 {
		t.Errorf("at most %d driver ran at once: the applications did not share the cluster", peak)
	}
	for app, why := range f.Partial() {
		t.Errorf("%s ran in part: %s", app, why)
	}
}

// checkExecutorsMade fails t unless every named application's driver got its initial
// executors: a driver that ended before play saw it running ran without them, and its
// application says nothing of the gang.
func (f *fixture) checkExecutorsMade(t *testing.T, names []string) {
	t.Helper()
	for _, name := range names {
		if made, want := f.Made(name), sparkplay.InitialExecutors(f.get(name)); made < want {
			t.Errorf("%s: %d of its %d executors were made: its driver ended before play saw it running", name, made, want)
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
		apps, _, err := f.step()
		if err != nil {
			return false, err
		}
		done := 0
		for _, app := range apps {
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
func (f *fixture) describeOnFailure() { describe(f.t, f.c, f.ns) }

// sparkPods are the Spark pods of the namespace, as last seen (ended executors are deleted).
func (f *fixture) sparkPods() ([]corev1.Pod, error) {
	pods, err := f.pods()
	if err != nil {
		return nil, err
	}
	f.Observe(pods)
	return f.Seen(), nil
}

// driversCreated is when each application's driver pod was made, as play last saw them.
func (f *fixture) driversCreated() map[string]time.Time {
	out := map[string]time.Time{}
	for _, p := range f.Seen() {
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
