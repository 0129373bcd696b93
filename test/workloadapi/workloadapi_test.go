/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package workloadapi runs spec.batchScheduler: kubernetes end to end: the gang scheduler's
// admission, with executors placed by the real kube-scheduler's GangScheduling plugin through
// the Workload API of Kubernetes 1.37. Its own local cluster serves that API (local-cluster.sh
// up --workload-api; the shared test cluster does not, which the last test relies on): 4 kwok
// nodes of 16 CPU, on which 4 applications of a 1-CPU driver and 7 executors of 2 CPU fit at
// once, never 5. Executors are made by test/executors once a driver runs, from the executor
// pod template the driver was given, as Spark would.
package workloadapi

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/scheduler/workloadapi"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
	"github.com/sparkop/spark-operator/test/sparkplay"
)

const (
	apps          = 20
	executorCount = 7
	// 4 applications of 15 CPU fit on 4 nodes of 16 CPU, 5 never do (75 > 64).
	fitAtOnce = 4
	// An application takes its capacity while its driver runs: the test ends its executors
	// when the driver ends, as Spark's driver does. Under our admission a load's driver runs
	// until play ends it, once its executors have all been placed; otherwise it runs
	// driverRunSeconds whatever its executors do, which ends a partial start.
	driverRunSeconds   = "10"
	executorRunSeconds = 300
)

// workloadAPI is the package's cluster with the Workload API (4 nodes of 16 CPU), started on
// first use and stopped by TestMain; its kubeconfig, and the state folder to stop it.
var workloadAPI struct {
	once              sync.Once
	state, kubeconfig string
	err               error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if workloadAPI.state != "" {
		_ = cluster.Down(context.Background(), workloadAPI.state)
		_ = os.RemoveAll(filepath.Dir(workloadAPI.state))
	}
	os.Exit(code)
}

// workloadCluster returns the kubeconfig of the package's cluster with the Workload API,
// starting it the first time. The tests that use it run one after the other, each in its own
// namespace.
func workloadCluster(t *testing.T) string {
	t.Helper()
	workloadAPI.once.Do(func() {
		dir, err := os.MkdirTemp("", "workloadapi-")
		if err != nil {
			workloadAPI.err = err
			return
		}
		workloadAPI.state = filepath.Join(dir, "cluster")
		workloadAPI.kubeconfig, workloadAPI.err = cluster.Up(context.Background(), workloadAPI.state,
			"--workload-api", "--nodes", "4", "--node-cpu", "16")
	})
	if workloadAPI.err != nil {
		t.Fatalf("local cluster with the Workload API: %v", workloadAPI.err)
	}
	return workloadAPI.kubeconfig
}

// env is one test's operator, namespace and clients on a cluster.
type env struct {
	t          *testing.T
	ctx        context.Context
	c          client.Client
	ns         string
	kubeconfig string
	op         *cluster.Operator
}

func newEnv(t *testing.T, kubeconfig string) *env {
	c, _ := cluster.Clients(t, kubeconfig)
	e := &env{t: t, ctx: context.Background(), c: c, kubeconfig: kubeconfig}
	e.ns = cluster.Namespace(t, c, "kubernetes")
	t.Cleanup(e.describeOnFailure)
	return e
}

// startOperator runs the operator with the kubernetes batch scheduler (and more flags) and its
// webhooks (registered by URL), which place each executor on its planned node as it is created.
func (e *env) startOperator(extra ...string) {
	configName := "kubernetes-" + e.ns
	e.t.Cleanup(func() {
		_ = e.c.Delete(context.Background(), &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configName}})
		_ = e.c.Delete(context.Background(), &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configName}})
	})
	args := []string{"--kubeconfig", e.kubeconfig, "--namespaces", e.ns,
		"--enable-kubernetes-scheduler", "--submission-workers", "8", "--enable-spark-connect=false",
		"--enable-webhook", "--webhook-url-host", "localhost", "--webhook-port", strconv.Itoa(cluster.FreePort(e.t)),
		"--webhook-secret-namespace", e.ns, "--webhook-config-name", configName, "--webhook-cert-dir", e.t.TempDir(),
		"-logtostderr", "-v=1"}
	e.op = cluster.StartOperator(e.t, "operator", append(args, extra...)...)
}

// queue creates a Queue named after the namespace, so that its status is the test's.
func (e *env) queue() string {
	q := &schedv1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}
	if err := e.c.Create(e.ctx, q); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = e.c.Delete(context.Background(), q) })
	return q.Name
}

func newApp(ns, name string) *v1beta2.SparkApplication {
	app := cluster.SparkPi(ns, name)
	app.Spec.BatchScheduler = ptr.To(workloadapi.Name)
	app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To(ns)}
	app.Spec.Driver.CoreRequest = nil
	app.Spec.Driver.Annotations = map[string]string{executors.AnnotationRunSeconds: driverRunSeconds}
	app.Spec.Executor.Cores = ptr.To[int32](2)
	app.Spec.Executor.Memory = ptr.To("1024m")
	app.Spec.Executor.Instances = ptr.To[int32](executorCount)
	return app
}

func (e *env) describeOnFailure() {
	if !e.t.Failed() {
		return
	}
	var list v1beta2.SparkApplicationList
	if err := e.c.List(context.Background(), &list, client.InNamespace(e.ns)); err == nil {
		for _, app := range list.Items {
			res, _, _ := gang.GetReservation(context.Background(), e.c, &app)
			e.t.Logf("%s: %s %q, submission %s, reservation %+v", app.Name, app.Status.AppState.State, app.Status.AppState.ErrorMessage,
				app.Status.SubmissionID, res)
		}
	}
	var pods corev1.PodList
	if err := e.c.List(context.Background(), &pods, client.InNamespace(e.ns)); err == nil {
		for _, p := range pods.Items {
			var why string
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue {
					why = c.Reason + ": " + c.Message
				}
			}
			e.t.Logf("pod %s: %s on %q %s", p.Name, p.Status.Phase, p.Spec.NodeName, why)
		}
	}
}

// startExecutors creates the driver's executors ids from..to as Spark would: from the executor
// pod template the submitter gave the driver. It reports false, to be asked again, while the
// template's ConfigMap does not exist yet (the submitter creates it just after the driver).
func (e *env) startExecutors(driver *corev1.Pod, from, to int) (bool, error) {
	template, err := executors.TemplateOf(e.ctx, e.c, driver)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if template == nil {
		return false, fmt.Errorf("driver %s has no executor pod template", driver.Name)
	}
	for id := from; id <= to; id++ {
		pod, err := executors.Build(driver, id, executors.Options{Cores: 2, MemoryMiB: 1024, Template: template,
			Annotations: map[string]string{executors.AnnotationRunSeconds: fmt.Sprint(executorRunSeconds)}})
		if err != nil {
			return false, err
		}
		if err := e.c.Create(e.ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			return false, err
		}
	}
	return true, nil
}

// run plays Spark for every application (test/sparkplay) and records what the admission is
// judged by.
type run struct {
	*env
	play *sparkplay.Player
	// admitted: the applications go through our admission (kubernetes), so never more run or
	// are admitted than fit; not with the naive mapping.
	admitted bool
	maxAdmit int32
	runs     map[string]string // application → its run (submission ID)
}

func (r *run) step() (bool, error) {
	round, err := r.play.Step(r.ctx)
	if err != nil {
		return false, err
	}
	for _, app := range round.Apps {
		if app.Status.SubmissionID != "" {
			r.runs[app.Name] = app.Status.SubmissionID
		}
	}
	if !r.admitted {
		return round.Finished == apps, nil
	}
	if round.Running > fitAtOnce {
		return false, fmt.Errorf("%d applications running; only %d fit", round.Running, fitAtOnce)
	}
	q := &schedv1alpha1.Queue{}
	if err := r.c.Get(r.ctx, client.ObjectKey{Name: r.ns}, q); err != nil {
		return false, err
	}
	r.maxAdmit = max(r.maxAdmit, q.Status.AdmittedApplications)
	if q.Status.AdmittedApplications > fitAtOnce {
		return false, fmt.Errorf("queue status says %d applications admitted; only %d fit", q.Status.AdmittedApplications, fitAtOnce)
	}
	return round.Finished == apps, nil
}

// TestKubernetesScheduler: 20 applications naming kubernetes on a cluster that fits 4, created
// at once, all complete, with no partial start: never more running or admitted than fit, no
// driver running while its executors cannot be placed, no run ending with an executor never
// placed. Each run's Workload and PodGroups exist, owned by the application, the executors'
// group a gang of the initial executors; the driver and the executors carry their group, and
// kube-scheduler's gang plugin placed the executors (it marks the group scheduled).
func TestKubernetesScheduler(t *testing.T) {
	e := newEnv(t, workloadCluster(t))
	e.queue()
	e.startOperator()

	t.Run("the executors wait for their whole group", func(t *testing.T) {
		app := newApp(e.ns, "held")
		if err := e.c.Create(e.ctx, app); err != nil {
			t.Fatal(err)
		}
		driver := e.waitDriverRunning(app.Name)
		e.checkTemplate(driver)
		// All but one executor: the gang plugin binds none of them.
		cluster.Eventually(t, 30*time.Second, "executors 1 to 6", func() (bool, error) {
			return e.startExecutors(driver, 1, executorCount-1)
		})
		// A pod of no group, created after them, is bound: the scheduler has taken them in,
		// and held them back rather than try them.
		if probe := cluster.Probe(t, e.c, probePod(e.ns)); probe.Spec.NodeName == "" {
			t.Fatalf("the probe pod, which fits anywhere, was not bound: %+v", probe.Status.Conditions)
		}
		for _, p := range e.executors(app.Name) {
			if p.Spec.NodeName != "" || cluster.Unschedulable(&p) {
				t.Fatalf("executor %s was tried with %d of %d executors of its group created: bound to %q, conditions %+v",
					p.Name, executorCount-1, executorCount, p.Spec.NodeName, p.Status.Conditions)
			}
		}
		if _, err := e.startExecutors(driver, executorCount, executorCount); err != nil {
			t.Fatal(err)
		}
		cluster.Eventually(t, 60*time.Second, "the whole group bound", func() (bool, error) {
			pods := e.executors(app.Name)
			for _, p := range pods {
				if p.Spec.NodeName == "" {
					return false, nil
				}
			}
			return len(pods) == executorCount, nil
		})
		e.checkRun(app.Name, true)
		// Done with it: its capacity goes back before the load starts.
		if err := e.c.Delete(e.ctx, app); err != nil {
			t.Fatal(err)
		}
		cluster.Eventually(t, 60*time.Second, "its pods gone", func() (bool, error) {
			var pods corev1.PodList
			err := e.c.List(e.ctx, &pods, client.InNamespace(e.ns), client.MatchingLabels{v1beta2.LabelAppName: app.Name})
			return err == nil && len(pods.Items) == 0, err
		})
	})
	if t.Failed() {
		return
	}

	t.Run("20 applications on a cluster that fits 4", func(t *testing.T) {
		r := e.load(workloadapi.Name)
		var list v1beta2.SparkApplicationList
		if err := e.c.List(e.ctx, &list, client.InNamespace(e.ns)); err != nil {
			t.Fatal(err)
		}
		for _, app := range list.Items {
			if app.Status.AppState.State != v1beta2.ApplicationStateCompleted {
				t.Errorf("%s: %s %s", app.Name, app.Status.AppState.State, app.Status.AppState.ErrorMessage)
			}
			if app.Status.ExecutionAttempts != 1 {
				t.Errorf("%s ran %d times", app.Name, app.Status.ExecutionAttempts)
			}
			if n := r.play.Bound(app.Name); n != executorCount {
				t.Errorf("%s: %d executors placed, want %d", app.Name, n, executorCount)
			}
			e.checkObjects(&app, r.runs[app.Name])
		}
		for name, why := range r.play.Partial() {
			t.Errorf("%s started in part: %s", name, why)
		}
		if r.play.PeakDrivers() == 0 || r.maxAdmit == 0 {
			t.Errorf("nothing seen running (%d) or admitted (%d)", r.play.PeakDrivers(), r.maxAdmit)
		}
		t.Logf("kubernetes: %d applications, at most %d running, queue status at most %d admitted",
			apps, r.play.PeakDrivers(), r.maxAdmit)
	})
}

// TestKubernetesSchedulerSparkSubmit: through spark-submit (a real Spark builds the driver pod
// from the template the operator writes) and with no webhook to fill anything in, the driver
// and the executors built on the executor template Spark mounts are in the run's groups, and
// kube-scheduler's gang plugin places the executors on the planned nodes.
func TestKubernetesSchedulerSparkSubmit(t *testing.T) {
	e := newEnv(t, workloadCluster(t))
	e.queue()
	e.startOperator("--enable-webhook=false", "--submission-mode", "spark-submit", "--spark-home", sparkHome(t))
	app := newApp(e.ns, "submitted")
	if err := e.c.Create(e.ctx, app); err != nil {
		t.Fatal(err)
	}
	driver := e.waitDriverRunning(app.Name)
	e.checkTemplate(driver)
	cluster.Eventually(t, 30*time.Second, "the executors created", func() (bool, error) {
		return e.startExecutors(driver, 1, executorCount)
	})
	cluster.Eventually(t, 60*time.Second, "the whole group bound", func() (bool, error) {
		pods := e.executors(app.Name)
		for _, p := range pods {
			if p.Spec.NodeName == "" {
				return false, nil
			}
		}
		return len(pods) == executorCount, nil
	})
	e.checkRun(app.Name, false)
}

// sparkHome installs Spark for spark-submit, once (hack/install-spark.sh), and returns its home.
func sparkHome(t *testing.T) string {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(root, "hack", "install-spark.sh")).Output()
	if err != nil {
		t.Fatalf("hack/install-spark.sh: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// TestKubernetesNaive runs the same load through the naive mapping (kubernetes-naive: the
// same Workload and PodGroups, no admission): drivers take the room their executors need, and
// applications start in part. It requires at least one partial start, so that the scenario is
// known to show what the admission prevents.
func TestKubernetesNaive(t *testing.T) {
	e := newEnv(t, workloadCluster(t))
	e.startOperator("--enable-kubernetes-naive-scheduler")
	r := e.load(workloadapi.NaiveName)
	t.Logf("kubernetes-naive: %d applications, at most %d drivers running at once, %d partial starts",
		apps, r.play.PeakDrivers(), len(r.play.Partial()))
	if len(r.play.Partial()) == 0 {
		t.Errorf("no partial start with the naive mapping: the scenario does not show what it should (at most %d running)", r.play.PeakDrivers())
	}
}

// TestKubernetesSchedulerWithoutAPI: on a cluster without the Workload API (the shared test
// cluster), the operator asked for the kubernetes scheduler starts and says why it refused it,
// naming the feature gate; an application naming kubernetes fails with that message.
func TestKubernetesSchedulerWithoutAPI(t *testing.T) {
	kubeconfig := cluster.Kubeconfig(t)
	e := newEnv(t, kubeconfig)
	var probe schedulingv1beta1.WorkloadList
	if err := e.c.List(e.ctx, &probe, client.InNamespace(e.ns)); err == nil {
		t.Fatal("the shared test cluster serves the Workload API: this test needs one without it (hack/local-cluster.sh up without --workload-api)")
	}
	e.op = cluster.StartOperator(t, "operator", "--kubeconfig", kubeconfig, "--namespaces", e.ns,
		"--enable-kubernetes-scheduler", "--enable-spark-connect=false", "-logtostderr", "-v=1")
	log, err := os.ReadFile(e.op.Log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "GenericWorkload") {
		t.Errorf("the operator's log does not say which feature gate the kubernetes scheduler needs:\n%s", log)
	}
	app := newApp(e.ns, "refused")
	app.Spec.BatchSchedulerOptions = nil
	if err := e.c.Create(e.ctx, app); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 60*time.Second, "the application to fail", func() (bool, error) {
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return false, err
		}
		return app.Status.AppState.State == v1beta2.ApplicationStateFailed, nil
	})
	if msg := app.Status.AppState.ErrorMessage; msg != workloadapi.Unserved {
		t.Errorf("failed with %q, want %q", msg, workloadapi.Unserved)
	}
	if e.op.Exited() {
		t.Error("the operator exited")
	}
}
