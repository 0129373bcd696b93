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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
)

const (
	apps          = 20
	executorCount = 8
	// At most 3 applications of 17 CPU fit on 4 nodes of 16 CPU (4 × 16 / 17 < 4).
	fitAtOnce = 3
	// Executors outlive their driver's run: the test ends them as Spark's driver does when it
	// stops, so an application takes its capacity exactly while its driver runs.
	driverRunSeconds   = "10"
	executorRunSeconds = "120"
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

// observation is what the test saw over a run.
type observation struct {
	maxRunning, partialStarts, stuckDrivers int
	maxQueueAdmitted                        int32
	// reservations seen per application and submission: more than one is a double admission.
	reservations  map[string]map[string]string
	firstAdmitted map[string]time.Time
}

// run plays Spark (executors for every running driver) and records what it sees, step by
// step, until all applications are COMPLETED or FAILED.
type run struct {
	t       *testing.T
	c       client.Client
	ns      string
	gang    bool
	started map[string]bool // drivers whose executors exist
	stopped map[string]bool // drivers that ended and whose executors were deleted
	partial map[string]bool
	obs     observation
}

func (r *run) step(ctx context.Context) (done bool, err error) {
	var list v1beta2.SparkApplicationList
	if err := r.c.List(ctx, &list, client.InNamespace(r.ns)); err != nil {
		return false, err
	}
	var pods corev1.PodList
	if err := r.c.List(ctx, &pods, client.InNamespace(r.ns)); err != nil {
		return false, err
	}
	byName := map[string]*corev1.Pod{}
	unschedulable := map[string]int{} // app → executors the scheduler could not place
	unplaced := map[string]int{}      // app → executors not on a node
	for i := range pods.Items {
		p := &pods.Items[i]
		byName[p.Name] = p
		if p.Labels[v1beta2.SparkRoleLabel] != v1beta2.SparkRoleExecutor || p.Spec.NodeName != "" {
			continue
		}
		unplaced[p.Labels[v1beta2.LabelAppName]]++
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				unschedulable[p.Labels[v1beta2.LabelAppName]]++
			}
		}
	}
	running, finished := 0, 0
	for i := range list.Items {
		app := &list.Items[i]
		if st := app.Status.AppState.State; st == v1beta2.ApplicationStateCompleted || st == v1beta2.ApplicationStateFailed {
			finished++
		}
		if res, ok := reservationOf(r.c, app); ok {
			seen := r.obs.reservations[app.Name]
			if seen == nil {
				seen = map[string]string{}
				r.obs.reservations[app.Name] = seen
			}
			enc := fmt.Sprintf("%s %v %s", res.Driver, res.Executors, res.Admitted)
			if prev, ok := seen[res.SubmissionID]; ok && prev != enc {
				return false, fmt.Errorf("%s admitted twice for submission %s: %s, then %s", app.Name, res.SubmissionID, prev, enc)
			}
			seen[res.SubmissionID] = enc
			if _, ok := r.obs.firstAdmitted[app.Name]; !ok {
				r.obs.firstAdmitted[app.Name] = res.Admitted
			}
		}
		driver := byName[app.DriverPodName()]
		if driver != nil && (driver.Status.Phase == corev1.PodSucceeded || driver.Status.Phase == corev1.PodFailed) && !r.stopped[driver.Name] {
			// The driver's whole run is over: had any of its executors never been placed, it
			// ran only in part.
			if n := unplaced[app.Name]; n > 0 && !r.partial[app.Name] {
				r.partial[app.Name] = true
				r.obs.partialStarts++
				if n == executorCount {
					r.obs.stuckDrivers++
				}
			}
			if err := r.c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(r.ns), client.MatchingLabels{
				v1beta2.LabelAppName: app.Name, v1beta2.SparkRoleLabel: v1beta2.SparkRoleExecutor,
			}); err != nil {
				return false, err
			}
			r.stopped[driver.Name] = true
		}
		if driver == nil || driver.Status.Phase != corev1.PodRunning {
			continue
		}
		running++
		if n := unschedulable[app.Name]; n > 0 && !r.partial[app.Name] {
			r.partial[app.Name] = true
			r.obs.partialStarts++
			if n == executorCount {
				r.obs.stuckDrivers++
			}
		}
		if r.started[driver.Name] {
			continue
		}
		started, err := r.startExecutors(ctx, driver)
		if err != nil {
			return false, err
		}
		r.started[driver.Name] = started
	}
	r.obs.maxRunning = max(r.obs.maxRunning, running)
	if r.gang {
		q := &schedv1alpha1.Queue{}
		if err := r.c.Get(ctx, client.ObjectKey{Name: r.ns}, q); err != nil {
			return false, err
		}
		r.obs.maxQueueAdmitted = max(r.obs.maxQueueAdmitted, q.Status.AdmittedApplications)
		if q.Status.AdmittedApplications > fitAtOnce {
			var holding []string
			for i := range list.Items {
				if res, ok := reservationOf(r.c, &list.Items[i]); ok && res.SubmissionID == list.Items[i].Status.SubmissionID {
					holding = append(holding, fmt.Sprintf("%s (%s, driver on %s, executors %v)", list.Items[i].Name,
						list.Items[i].Status.AppState.State, res.Driver, res.Executors))
				}
			}
			return false, fmt.Errorf("queue status says %d applications admitted; only %d fit; holding reservations: %v", q.Status.AdmittedApplications, fitAtOnce, holding)
		}
		if total := q.Status.AdmittedApplications + q.Status.PendingApplications; total > apps {
			return false, fmt.Errorf("queue status counts %d applications, there are %d", total, apps)
		}
		if running > fitAtOnce {
			return false, fmt.Errorf("%d applications running; only %d fit", running, fitAtOnce)
		}
		for name, n := range unschedulable {
			if d := byName[name+"-driver"]; d != nil && d.Status.Phase == corev1.PodRunning {
				return false, fmt.Errorf("%s has a running driver and %d unschedulable executors", name, n)
			}
		}
	}
	return finished == apps, nil
}

// startExecutors creates the driver's executors as Spark would: from the executor pod template
// the submitter gave the driver, which carries the nodes its batch scheduler planned. It reports
// false, to be asked again, while the template's ConfigMap does not exist yet: the submitter
// creates it just after the driver pod, and a real kubelet would not start the driver before
// its volumes can be mounted (kwok marks it Running at once).
func (r *run) startExecutors(ctx context.Context, driver *corev1.Pod) (bool, error) {
	template, err := executors.TemplateOf(ctx, r.c, driver)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if r.gang && template == nil {
		return false, fmt.Errorf("driver %s has no executor pod template: the planned executor nodes cannot reach its executors", driver.Name)
	}
	for id := 1; id <= executorCount; id++ {
		pod, err := executors.Build(driver, id, executors.Options{Cores: 2, MemoryMiB: 1024, Template: template,
			Annotations: map[string]string{executors.AnnotationRunSeconds: executorRunSeconds}})
		if err != nil {
			return false, err
		}
		if err := r.c.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			return false, err
		}
	}
	return true, nil
}

func newRun(t *testing.T, gangOn bool) *run {
	c := cluster.Client(t)
	return &run{t: t, c: c, ns: cluster.Namespace(t, c, "gang"), gang: gangOn,
		started: map[string]bool{}, stopped: map[string]bool{}, partial: map[string]bool{},
		obs: observation{reservations: map[string]map[string]string{}, firstAdmitted: map[string]time.Time{}}}
}

func (r *run) startOperator(extra ...string) *cluster.Operator {
	args := []string{"--kubeconfig", cluster.Kubeconfig(r.t), "--namespaces", r.ns, "--submission-workers", "8",
		"--enable-spark-connect=false", "-logtostderr", "-v=1"}
	return cluster.StartOperator(r.t, "operator", append(args, extra...)...)
}

func (r *run) createApps(ctx context.Context) {
	for i := range apps {
		if err := r.c.Create(ctx, newApp(r.ns, i)); err != nil {
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
	if r.obs.partialStarts != 0 {
		t.Errorf("%d partial starts under the gang scheduler", r.obs.partialStarts)
	}
	if r.obs.maxRunning == 0 || r.obs.maxQueueAdmitted == 0 {
		t.Errorf("nothing seen running (%d) or admitted in the queue status (%d)", r.obs.maxRunning, r.obs.maxQueueAdmitted)
	}
	t.Logf("gang: at most %d running, queue status at most %d admitted, %d partial starts", r.obs.maxRunning, r.obs.maxQueueAdmitted, r.obs.partialStarts)
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
	t.Logf("without gang: at most %d drivers running at once, %d partial starts, %d drivers with no executor placed",
		r.obs.maxRunning, r.obs.partialStarts, r.obs.stuckDrivers)
	if r.obs.partialStarts == 0 {
		t.Errorf("no partial start without the gang scheduler: the scenario does not show what it should (at most %d running)", r.obs.maxRunning)
	}
}
