/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package gang runs the embedded gang scheduler end to end on the local cluster's kwok nodes
// (4 nodes of 16 CPU): 20 applications of a 1-CPU driver and 8 executors of 2 CPU created at
// once, executors made by test/executors once a driver runs (as Spark would, on the executor
// nodes the admission planned) and ended by kwok. The same load runs without the gang
// scheduler to show the partial starts it prevents.
package gang

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
	"github.com/sparkop/spark-operator/test/sparkplay"
)

const (
	apps          = 20
	executorCount = 8
	// At most 3 applications of 17 CPU fit on 4 nodes of 16 CPU (4 × 16 / 17 < 4).
	fitAtOnce = 3
	// Executors outlive their driver's run: play ends them as Spark's driver does when it
	// stops, so an application takes its capacity exactly while its driver runs. With the gang
	// scheduler a driver runs until play ends it, once its executors have all been placed;
	// without, it runs driverRunSeconds whatever its executors do, which ends a partial start.
	driverRunSeconds   = "10"
	executorRunSeconds = 120
)

func newApp(ns string, i int) *v1beta2.SparkApplication {
	app := cluster.SparkPi(ns, fmt.Sprintf("gang-%02d", i))
	// A queue of the test's own (named as its namespace), so queue status is this test's.
	app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To(ns)}
	app.Spec.Driver.CoreRequest = nil
	app.Spec.Driver.Annotations = map[string]string{executors.AnnotationRunSeconds: driverRunSeconds}
	app.Spec.Executor.Cores = ptr.To[int32](2)
	app.Spec.Executor.Memory = ptr.To("1024m")
	app.Spec.Executor.Instances = ptr.To[int32](executorCount)
	return app
}

// observation is what the test saw of the gang scheduler's objects over a run.
type observation struct {
	maxQueueAdmitted int32
	// reservations seen per application and submission: more than one is a double admission.
	reservations  map[string]map[string]string
	firstAdmitted map[string]time.Time
}

// run plays Spark (test/sparkplay: executors for every running driver) and records what it
// sees, step by step, until all applications are COMPLETED or FAILED.
type run struct {
	t    *testing.T
	c    client.Client
	ns   string
	gang bool
	play *sparkplay.Player
	obs  observation
}

func (r *run) step(ctx context.Context) (done bool, err error) {
	round, err := r.play.Step(ctx)
	if err != nil {
		return false, err
	}
	for i := range round.Apps {
		if err := r.observeReservation(&round.Apps[i]); err != nil {
			return false, err
		}
	}
	if r.gang {
		if err := r.checkQueue(ctx, round); err != nil {
			return false, err
		}
	}
	return round.Finished == apps, nil
}

// observeReservation records app's reservation, and fails when a submission was admitted twice.
func (r *run) observeReservation(app *v1beta2.SparkApplication) error {
	res, ok := reservationOf(r.c, app)
	if !ok {
		return nil
	}
	seen := r.obs.reservations[app.Name]
	if seen == nil {
		seen = map[string]string{}
		r.obs.reservations[app.Name] = seen
	}
	enc := fmt.Sprintf("%s %v %s", res.Driver, res.Executors, res.Admitted)
	if prev, ok := seen[res.SubmissionID]; ok && prev != enc {
		return fmt.Errorf("%s admitted twice for submission %s: %s, then %s", app.Name, res.SubmissionID, prev, enc)
	}
	seen[res.SubmissionID] = enc
	if _, ok := r.obs.firstAdmitted[app.Name]; !ok {
		r.obs.firstAdmitted[app.Name] = res.Admitted
	}
	return nil
}

// checkQueue fails when the queue's status or the round shows more admitted or running than
// fit, or an application ran in part.
func (r *run) checkQueue(ctx context.Context, round sparkplay.Round) error {
	q := &schedv1alpha1.Queue{}
	if err := r.c.Get(ctx, client.ObjectKey{Name: r.ns}, q); err != nil {
		return err
	}
	r.obs.maxQueueAdmitted = max(r.obs.maxQueueAdmitted, q.Status.AdmittedApplications)
	if q.Status.AdmittedApplications > fitAtOnce {
		var holding []string
		for i := range round.Apps {
			app := &round.Apps[i]
			if res, ok := reservationOf(r.c, app); ok && res.SubmissionID == app.Status.SubmissionID {
				holding = append(holding, fmt.Sprintf("%s (%s, driver on %s, executors %v)", app.Name, app.Status.AppState.State, res.Driver, res.Executors))
			}
		}
		return fmt.Errorf("queue status says %d applications admitted; only %d fit; holding reservations: %v", q.Status.AdmittedApplications, fitAtOnce, holding)
	}
	if total := q.Status.AdmittedApplications + q.Status.PendingApplications; total > apps {
		return fmt.Errorf("queue status counts %d applications, there are %d", total, apps)
	}
	if round.Running > fitAtOnce {
		return fmt.Errorf("%d applications running; only %d fit", round.Running, fitAtOnce)
	}
	if partial := r.play.Partial(); len(partial) > 0 {
		return fmt.Errorf("applications ran in part: %v", partial)
	}
	return nil
}

func newRun(t *testing.T, gangOn bool) *run {
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "gang")
	play := sparkplay.New(c, ns, sparkplay.Options{ExecutorSeconds: executorRunSeconds, UnschedulableIsPartial: true,
		TemplateOptional: !gangOn, EndDrivers: gangOn})
	return &run{t: t, c: c, ns: ns, gang: gangOn, play: play,
		obs: observation{reservations: map[string]map[string]string{}, firstAdmitted: map[string]time.Time{}}}
}

func (r *run) startOperator(extra ...string) *cluster.Operator {
	args := []string{"--kubeconfig", cluster.Kubeconfig(r.t), "--namespaces", r.ns, "--submission-workers", "8",
		"--enable-spark-connect=false", "-logtostderr", "-v=1"}
	return cluster.StartOperator(r.t, "operator", append(args, extra...)...)
}

// app is application i of the load, its driver run as the gang scheduler's presence says (see
// driverRunSeconds).
func (r *run) app(i int) *v1beta2.SparkApplication {
	app := newApp(r.ns, i)
	if r.gang {
		delete(app.Spec.Driver.Annotations, executors.AnnotationRunSeconds)
	}
	return app
}

func (r *run) createApps(ctx context.Context) {
	for i := range apps {
		if err := r.c.Create(ctx, r.app(i)); err != nil {
			r.t.Fatal(err)
		}
	}
}

// TestGangScheduling: never more applications running than fit, no running driver with
// unschedulable executors, all complete; the operator is killed midway and restarted, and
// reservations and queue order survive it with nothing admitted twice.
func TestGangScheduling(t *testing.T) {
	ctx := context.Background()
	r := newRun(t, true)
	queue := &schedv1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: r.ns}}
	if err := r.c.Create(ctx, queue); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.c.Delete(context.Background(), queue) })
	gangArgs := []string{"--enable-gang-scheduler", "--default-batch-scheduler=gang"}
	op := r.startOperator(gangArgs...)
	r.createApps(ctx)

	restarted := false
	cluster.Eventually(t, 5*time.Minute, "all applications to finish", func() (bool, error) {
		done, err := r.step(ctx)
		if err != nil || done {
			return done, err
		}
		if !restarted && len(r.obs.firstAdmitted) >= apps/2 {
			// Midway, with applications admitted, running and waiting: a crash.
			op.Kill()
			op = r.startOperator(gangArgs...)
			restarted = true
		}
		return false, nil
	})
	if !restarted {
		t.Error("the operator was never restarted")
	}

	var list v1beta2.SparkApplicationList
	if err := r.c.List(ctx, &list, client.InNamespace(r.ns)); err != nil {
		t.Fatal(err)
	}
	for _, app := range list.Items {
		if app.Status.AppState.State != v1beta2.ApplicationStateCompleted {
			t.Errorf("%s: %s %s", app.Name, app.Status.AppState.State, app.Status.AppState.ErrorMessage)
		}
		if app.Status.ExecutionAttempts != 1 {
			t.Errorf("%s ran %d times", app.Name, app.Status.ExecutionAttempts)
		}
	}
	// Strict queue order: an application created earlier is never admitted after a later one.
	for _, a := range list.Items {
		for _, b := range list.Items {
			ta, tb := r.obs.firstAdmitted[a.Name], r.obs.firstAdmitted[b.Name]
			if a.CreationTimestamp.Before(&b.CreationTimestamp) && ta.After(tb) {
				t.Errorf("%s (created %s) admitted at %s, after %s (created %s) at %s", a.Name, a.CreationTimestamp, ta, b.Name, b.CreationTimestamp, tb)
			}
		}
	}
	for app, why := range r.play.Partial() {
		t.Errorf("%s ran in part under the gang scheduler: %s", app, why)
	}
	if r.play.PeakDrivers() == 0 || r.obs.maxQueueAdmitted == 0 {
		t.Errorf("nothing seen running (%d) or admitted in the queue status (%d)", r.play.PeakDrivers(), r.obs.maxQueueAdmitted)
	}
	t.Logf("gang: at most %d running, queue status at most %d admitted", r.play.PeakDrivers(), r.obs.maxQueueAdmitted)
}

// TestWithoutGangScheduling runs the same load with every application let through: drivers
// take the capacity and executors wait. It records the partial starts the gang scheduler
// prevents, and requires at least one, so that the scenario is known to provoke them.
func TestWithoutGangScheduling(t *testing.T) {
	ctx := context.Background()
	r := newRun(t, false)
	r.startOperator()
	r.createApps(ctx)
	cluster.Eventually(t, 5*time.Minute, "all applications to finish", func() (bool, error) {
		return r.step(ctx)
	})
	t.Logf("without gang: at most %d drivers running at once, %d applications in part", r.play.PeakDrivers(), len(r.play.Partial()))
	if len(r.play.Partial()) == 0 {
		t.Errorf("no partial start without the gang scheduler: the scenario does not show what it should (at most %d running)", r.play.PeakDrivers())
	}
}
