/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/controllers/sparkapplication"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
)

// poolKey labels and taints the kwok nodes of one scenario: its applications select the label
// and tolerate the taint, so they use only those nodes and no other test's pod lands there.
const poolKey = "test.sparkop.dev/pool"

// fixture is one scenario's own slice of the shared local cluster: a namespace, kwok nodes
// only its applications use, its queues and PriorityClasses, and an operator running the gang
// scheduler. It plays Spark for the applications: executors for every running driver (from
// the executor pod template the driver was given) and their end when the driver ends.
type fixture struct {
	t *testing.T
	// kubeconfig is the cluster's: the shared one, or one the scenario started for itself.
	kubeconfig string
	c          client.Client
	ns         string
	op         *cluster.Operator
	ctx        context.Context
	// played holds the drivers (by UID) whose executors the fixture created.
	played map[types.UID]bool
}

func newFixture(t *testing.T) *fixture { return newFixtureOn(t, cluster.Kubeconfig(t)) }

// newFixtureOn is newFixture on the cluster of kubeconfig.
func newFixtureOn(t *testing.T, kubeconfig string) *fixture {
	c, _ := cluster.Clients(t, kubeconfig)
	f := &fixture{t: t, kubeconfig: kubeconfig, c: c, ns: cluster.Namespace(t, c, "gang"), ctx: context.Background(), played: map[types.UID]bool{}}
	t.Cleanup(f.describeOnFailure)
	return f
}

// describeOnFailure logs where each application was when the test failed.
func (f *fixture) describeOnFailure() {
	if !f.t.Failed() {
		return
	}
	var apps v1beta2.SparkApplicationList
	if err := f.c.List(context.Background(), &apps, client.InNamespace(f.ns)); err != nil {
		return
	}
	for _, app := range apps.Items {
		res, _ := reservationOf(f.c, &app)
		f.t.Logf("%s: state %q, submission %s, waiting %q, reservation %+v, preempted %q", app.Name, app.Status.AppState.State,
			app.Status.SubmissionID, waiting(&app), res, app.Annotations[scheduler.AnnotationPreempted])
	}
	var pods corev1.PodList
	if err := f.c.List(context.Background(), &pods, client.InNamespace(f.ns)); err != nil {
		return
	}
	for _, p := range pods.Items {
		f.t.Logf("pod %s: submission %s, %s on %q, owners %v", p.Name, p.Labels[v1beta2.LabelSubmissionID], p.Status.Phase, p.Spec.NodeName, p.OwnerReferences)
	}
}

// startOperator runs the operator with the gang scheduler and extra flags; a running one is
// stopped first, as a rollout with changed flags would.
func (f *fixture) startOperator(extra ...string) {
	f.t.Helper()
	if f.op != nil {
		f.op.Stop()
	}
	args := []string{"--kubeconfig", f.kubeconfig, "--namespaces", f.ns, "--enable-gang-scheduler",
		"--enable-spark-connect=false", "-logtostderr", "-v=1"}
	// GANG_TEST_ENFORCEMENT runs the scenarios that name no enforcement with the one given
	// (advisory, the operator's default, otherwise): every scenario holds with placeholders too.
	if e := os.Getenv("GANG_TEST_ENFORCEMENT"); e != "" && !slices.ContainsFunc(extra, func(a string) bool { return strings.HasPrefix(a, "--gang-enforcement") }) {
		args = append(args, "--gang-enforcement="+e)
	}
	f.op = cluster.StartOperator(f.t, "operator", append(args, extra...)...)
}

// node creates a Ready kwok node of the scenario's pool with cpu CPUs and more labels; it is
// deleted when the test ends.
func (f *fixture) node(name, cpu string, labels map[string]string) string {
	f.t.Helper()
	return f.nodeWith(name, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}, labels)
}

// nodeWith is node with the allocatable resources given; memory (16Gi) and pods (110) unless
// given.
func (f *fixture) nodeWith(name string, capacity corev1.ResourceList, labels map[string]string) string {
	f.t.Helper()
	name = f.ns + "-" + name
	l := map[string]string{poolKey: f.ns, "type": "kwok", corev1.LabelHostname: name}
	for k, v := range labels {
		l[k] = v
	}
	capacity = capacity.DeepCopy()
	for r, q := range map[corev1.ResourceName]string{corev1.ResourceMemory: "16Gi", corev1.ResourcePods: "110"} {
		if _, ok := capacity[r]; !ok {
			capacity[r] = resource.MustParse(q)
		}
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: poolKey, Value: f.ns, Effect: corev1.TaintEffectNoSchedule}}},
		Status:     corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
	if err := f.c.Create(f.ctx, n); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = f.c.Delete(context.Background(), n) })
	cluster.Eventually(f.t, 60*time.Second, "node "+name+" to be Ready", func() (bool, error) {
		if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(n), n); err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	return name
}

// cordon marks a node of the pool (un)schedulable.
func (f *fixture) cordon(name string, unschedulable bool) {
	f.t.Helper()
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, unschedulable)
	if err := f.c.Patch(f.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		f.t.Fatal(err)
	}
}

// queue creates the queue named name (prefixed with the namespace, queues being cluster-wide)
// and returns its name.
func (f *fixture) queue(name string, spec schedv1alpha1.QueueSpec) string {
	f.t.Helper()
	q := &schedv1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: f.ns + "-" + name}, Spec: spec}
	if q.Spec.Parent != "" {
		q.Spec.Parent = f.ns + "-" + q.Spec.Parent
	}
	if err := f.c.Create(f.ctx, q); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = f.c.Delete(context.Background(), q) })
	return q.Name
}

// priorityClass creates a PriorityClass of value and returns its name.
func (f *fixture) priorityClass(name string, value int32) string {
	f.t.Helper()
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: f.ns + "-" + name}, Value: value}
	if err := f.c.Create(f.ctx, pc); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = f.c.Delete(context.Background(), pc) })
	return pc.Name
}

// app is a gang application of queue on the pool's nodes: a driver of 1 CPU and executors of
// 1 CPU each, running until deleted unless runSeconds is set on it.
func (f *fixture) app(name, queue string, executorCount int32) *v1beta2.SparkApplication {
	app := cluster.SparkPi(f.ns, name)
	app.Spec.BatchScheduler = ptr.To(gang.Name)
	app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To(queue)}
	app.Spec.NodeSelector = map[string]string{poolKey: f.ns}
	toleration := []corev1.Toleration{{Key: poolKey, Operator: corev1.TolerationOpEqual, Value: f.ns, Effect: corev1.TaintEffectNoSchedule}}
	app.Spec.Driver.CoreRequest = nil
	app.Spec.Driver.Tolerations = toleration
	app.Spec.Executor.Tolerations = toleration
	app.Spec.Executor.Instances = ptr.To(executorCount)
	return app
}

// runFor makes the application's driver end after seconds (kwok), as a finished job does.
func runFor(app *v1beta2.SparkApplication, seconds int) *v1beta2.SparkApplication {
	app.Spec.Driver.Annotations = map[string]string{executors.AnnotationRunSeconds: fmt.Sprint(seconds)}
	return app
}

func (f *fixture) create(apps ...*v1beta2.SparkApplication) {
	f.t.Helper()
	for _, app := range apps {
		if err := f.c.Create(f.ctx, app); err != nil {
			f.t.Fatal(err)
		}
	}
}

func (f *fixture) get(name string) *v1beta2.SparkApplication {
	f.t.Helper()
	app := &v1beta2.SparkApplication{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, app); err != nil {
		f.t.Fatal(err)
	}
	return app
}

func (f *fixture) update(name string, change func(*v1beta2.SparkApplication)) {
	f.t.Helper()
	cluster.Eventually(f.t, 30*time.Second, "updating "+name, func() (bool, error) {
		app := f.get(name)
		change(app)
		err := f.c.Update(f.ctx, app)
		return err == nil, client.IgnoreAlreadyExists(ignoreConflict(err))
	})
}

func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// waitFor polls cond, playing Spark before each poll, until it holds.
func (f *fixture) waitFor(what string, cond func() (bool, error)) {
	f.t.Helper()
	cluster.Eventually(f.t, 90*time.Second, what, func() (bool, error) {
		if err := f.play(); err != nil {
			return false, err
		}
		return cond()
	})
}

// pods lists the scenario's pods of app (all of them with app "").
func (f *fixture) pods(app string) []corev1.Pod {
	f.t.Helper()
	var list corev1.PodList
	opts := []client.ListOption{client.InNamespace(f.ns)}
	if app != "" {
		opts = append(opts, client.MatchingLabels{v1beta2.LabelAppName: app})
	}
	if err := f.c.List(f.ctx, &list, opts...); err != nil {
		f.t.Fatal(err)
	}
	return list.Items
}

// play does what Spark's drivers and executors would: a running driver gets its executors (as
// many as the application asks for, built on the executor pod template it was given), and an
// executor whose driver has ended or is gone exits (the kwok nodes run no JVM to notice).
func (f *fixture) play() error {
	var pods corev1.PodList
	if err := f.c.List(f.ctx, &pods, client.InNamespace(f.ns)); err != nil {
		return err
	}
	type run struct{ app, submission string }
	live := map[run]bool{}
	for _, p := range pods.Items {
		if p.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleDriver && p.DeletionTimestamp == nil &&
			p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			live[run{p.Labels[v1beta2.LabelAppName], p.Labels[v1beta2.LabelSubmissionID]}] = true
		}
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Labels[v1beta2.SparkRoleLabel] != v1beta2.SparkRoleExecutor || live[run{p.Labels[v1beta2.LabelAppName], p.Labels[v1beta2.LabelSubmissionID]}] ||
			p.Labels[v1alpha1.LabelConnectName] != "" { // a session's: the test plays its server
			continue
		}
		if err := f.c.Delete(f.ctx, p); client.IgnoreNotFound(err) != nil {
			return err
		}
	}

	var apps v1beta2.SparkApplicationList
	if err := f.c.List(f.ctx, &apps, client.InNamespace(f.ns)); err != nil {
		return err
	}
	for i := range apps.Items {
		app := &apps.Items[i]
		driver := &corev1.Pod{}
		err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: app.DriverPodName()}, driver)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if driver.Status.Phase != corev1.PodRunning || f.played[driver.UID] {
			continue
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
		for id := 1; id <= int(ptr.Deref(app.Spec.Executor.Instances, 0)); id++ {
			pod, err := executors.Build(driver, id, executors.Options{Cores: 1, MemoryMiB: 512, Template: template})
			if err != nil {
				return err
			}
			if err := f.c.Create(f.ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
		}
		f.played[driver.UID] = true
	}
	return nil
}

// waiting is why app's batch scheduler holds it ("" when it is not held).
func waiting(app *v1beta2.SparkApplication) string {
	c := meta.FindStatusCondition(app.Status.Conditions, sparkapplication.ConditionQueued)
	if c == nil || c.Status != metav1.ConditionTrue {
		return ""
	}
	return c.Message
}

// waitWaiting waits until the gang scheduler holds app with a reason containing every part.
func (f *fixture) waitWaiting(name string, parts ...string) *v1beta2.SparkApplication {
	f.t.Helper()
	var app *v1beta2.SparkApplication
	f.waitFor(fmt.Sprintf("%s to wait with %q", name, parts), func() (bool, error) {
		app = f.get(name)
		if r, ok := reservationOf(f.c, app); ok {
			return false, fmt.Errorf("%s was admitted (%+v), expected it to wait with %q", name, r, parts)
		}
		why := waiting(app)
		for _, p := range parts {
			if !strings.Contains(why, p) {
				return false, nil
			}
		}
		return true, nil
	})
	return app
}

// waitRunning waits until app's driver of its current submission and all its executors run,
// and returns the application and its pods.
func (f *fixture) waitRunning(name string) (*v1beta2.SparkApplication, []corev1.Pod) {
	f.t.Helper()
	var app *v1beta2.SparkApplication
	var pods []corev1.Pod
	f.waitFor(name+" to run with all its executors", func() (bool, error) {
		app = f.get(name)
		if app.Status.AppState.State != v1beta2.ApplicationStateRunning {
			return false, nil
		}
		pods = f.pods(name)
		running := 0
		for _, p := range pods {
			if p.Labels[v1beta2.LabelSubmissionID] == app.Status.SubmissionID && p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == 1+int(ptr.Deref(app.Spec.Executor.Instances, 0)), nil
	})
	return app, pods
}

// waitState waits until app reaches state.
func (f *fixture) waitState(name string, state v1beta2.ApplicationStateType) *v1beta2.SparkApplication {
	f.t.Helper()
	var app *v1beta2.SparkApplication
	f.waitFor(fmt.Sprintf("%s to be %s", name, state), func() (bool, error) {
		app = f.get(name)
		if s := app.Status.AppState.State; s == v1beta2.ApplicationStateFailed && state != s {
			return false, fmt.Errorf("%s failed: %s", name, app.Status.AppState.ErrorMessage)
		}
		return app.Status.AppState.State == state, nil
	})
	return app
}

// requireNotAdmitted fails unless app holds no reservation.
func (f *fixture) requireNotAdmitted(name string) {
	f.t.Helper()
	if r, ok := reservationOf(f.c, f.get(name)); ok {
		f.t.Fatalf("%s was admitted: %+v", name, r)
	}
}

// queueStatus reads the status of queue.
func (f *fixture) queueStatus(name string) schedv1alpha1.QueueStatus {
	f.t.Helper()
	q := &schedv1alpha1.Queue{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Name: name}, q); err != nil {
		f.t.Fatal(err)
	}
	return q.Status
}

// watchQueue records, from every status the queue is written with until the test ends, the
// most CPU and applications it ever showed admitted. A watch sees every write, however brief.
func (f *fixture) watchQueue(name string) (peak func() (cpu resource.Quantity, apps int32)) {
	f.t.Helper()
	cfg, err := cluster.RESTConfig(f.kubeconfig)
	if err != nil {
		f.t.Fatal(err)
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: cluster.Scheme})
	if err != nil {
		f.t.Fatal(err)
	}
	w, err := c.Watch(f.ctx, &schedv1alpha1.QueueList{}, client.MatchingFields{"metadata.name": name})
	if err != nil {
		f.t.Fatal(err)
	}
	var mu sync.Mutex
	var maxCPU resource.Quantity
	var maxApps int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range w.ResultChan() {
			q, ok := e.Object.(*schedv1alpha1.Queue)
			if !ok {
				continue
			}
			mu.Lock()
			if c := q.Status.Admitted[corev1.ResourceCPU]; c.Cmp(maxCPU) > 0 {
				maxCPU = c
			}
			maxApps = max(maxApps, q.Status.AdmittedApplications)
			mu.Unlock()
		}
	}()
	f.t.Cleanup(func() { w.Stop(); <-done })
	return func() (resource.Quantity, int32) {
		mu.Lock()
		defer mu.Unlock()
		return maxCPU.DeepCopy(), maxApps
	}
}

// recordPods records, from now until the test ends, every state of the scenario's pods that a
// watch sees, in the order the API server wrote them (a watch of one resource delivers its
// events in that order); seen returns them so far.
func (f *fixture) recordPods() (seen func() []corev1.Pod) {
	f.t.Helper()
	_, cs := cluster.Clients(f.t, f.kubeconfig)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := cs.CoreV1().Pods(f.ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		f.t.Fatal(err)
	}
	var mu sync.Mutex
	var states []corev1.Pod
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range w.ResultChan() {
			if p, ok := e.Object.(*corev1.Pod); ok {
				mu.Lock()
				states = append(states, *p)
				mu.Unlock()
			}
		}
	}()
	f.t.Cleanup(func() { cancel(); w.Stop(); <-done })
	return func() []corev1.Pod {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(states)
	}
}

// reservationOf reads the reservation of obj, an application or session: false when it has
// none (or it cannot be read now; callers poll).
func reservationOf(c client.Reader, obj client.Object) (gang.Reservation, bool) {
	r, ok, err := gang.GetReservation(context.Background(), c, obj)
	return r, ok && err == nil
}
