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
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
)

// TestEnforcement: an application is admitted on a cluster that is full but for it; right after
// its admission a Deployment asks for the same capacity. With placeholders, and with the plugin
// (on a cluster of its own whose scheduler is spark-scheduler), the application's driver and
// executors all run on their planned nodes and the Deployment's pods wait; the placeholder
// writes are counted (none with the plugin). Advisory keeps nothing from the Deployment, which
// takes the room: the application does not get all of it (the difference
// docs/gang-scheduling.md states).
func TestEnforcement(t *testing.T) {
	for _, enforcement := range []gang.Enforcement{gang.EnforcementPlaceholders, gang.EnforcementPlugin, gang.EnforcementAdvisory} {
		t.Run(string(enforcement), func(t *testing.T) {
			const executorCount = 3
			var f *fixture
			if enforcement == gang.EnforcementPlugin {
				f = newFixtureOn(t, sparkSchedulerCluster(t))
			} else {
				f = newFixture(t)
			}
			// Spark is not played (no executor is created) until the competing pods exist: they
			// ask for the room before the executors, in both modes.
			res, writes := f.fillTwoNodes(enforcement, executorCount)
			f.competingDeployment("competitor", executorCount+1)

			competitors := func() (bound, pending int) {
				for _, p := range f.pods("") {
					if p.Labels["app"] != "competitor" {
						continue
					}
					if p.Spec.NodeName != "" {
						bound++
					} else {
						pending++
					}
				}
				return bound, pending
			}
			cluster.Eventually(t, 60*time.Second, "the competing pods", func() (bool, error) {
				bound, pending := competitors()
				return bound+pending == executorCount+1, nil
			})
			if enforcement == gang.EnforcementAdvisory {
				f.waitFor("a competing pod to take reserved room", func() (bool, error) {
					bound, _ := competitors()
					return bound > 0, nil
				})
				// A member finds its room taken: an executor, created once the driver runs, or
				// the driver itself when a competing pod was placed before it (nothing keeps the
				// driver's room either; which comes first is the machine's timing).
				f.waitFor("a member left unschedulable", func() (bool, error) {
					for _, p := range f.pods("spark") {
						if p.Spec.NodeName == "" && cluster.Unschedulable(&p) {
							return true, nil
						}
					}
					return false, nil
				})
				bound, _ := competitors()
				onPlan := f.membersOnPlan("spark", res)
				t.Logf("advisory: %d competing pods took reserved room; %d of the application's %d members run on their planned node, the others wait unschedulable", bound, onPlan, executorCount+1)
				if onPlan == executorCount+1 {
					t.Errorf("advisory: every member runs on its planned node although %d competing pods took reserved room", bound)
				}
				return
			}

			f.waitFor("every member running on its planned node", func() (bool, error) {
				if bound, _ := competitors(); bound > 0 {
					return false, fmt.Errorf("%d competing pods took reserved room", bound)
				}
				return f.membersOnPlan("spark", res) == executorCount+1, nil
			})
			f.waitFor("the reservation's status: all bound, no placeholder left", func() (bool, error) {
				r := &schedv1alpha1.Reservation{}
				if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(res), r); err != nil {
					return false, err
				}
				return r.Status.Bound == fmt.Sprintf("%d/%d", executorCount+1, executorCount+1) && r.Status.Placeholders == 0, nil
			})
			// The pod scheduler, asked for the same room once more, finds none; and the
			// competing pods still wait: nothing let them in.
			f.requireNoRoom()
			if bound, pending := competitors(); bound > 0 || pending != executorCount+1 {
				t.Errorf("competing pods: %d bound, %d pending; want none bound, %d pending", bound, pending, executorCount+1)
			}
			created, deleted, nominated, preempting := writes()
			if enforcement == gang.EnforcementPlugin {
				if res.Spec.Enforcement != schedv1alpha1.EnforcementPlugin {
					t.Errorf("the reservation says enforcement %q, want %q", res.Spec.Enforcement, schedv1alpha1.EnforcementPlugin)
				}
				if created+deleted+nominated != 0 {
					t.Errorf("placeholder writes with the plugin: %d created, %d deleted, %d nominated; want none", created, deleted, nominated)
				}
				// spark-scheduler said it held the room, and the driver started only then.
				r := &schedv1alpha1.Reservation{}
				if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(res), r); err != nil {
					t.Fatal(err)
				}
				held := meta.FindStatusCondition(r.Status.Conditions, schedv1alpha1.ConditionHeld)
				if held == nil || held.Status != metav1.ConditionTrue || held.ObservedGeneration != r.Generation {
					t.Fatalf("the reservation's Held condition = %+v, want true for generation %d", held, r.Generation)
				}
				driver := &corev1.Pod{}
				if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: f.get("spark").DriverPodName()}, driver); err != nil {
					t.Fatal(err)
				}
				if driver.CreationTimestamp.Before(&held.LastTransitionTime) {
					t.Errorf("the driver was created at %v, before spark-scheduler held the room at %v", driver.CreationTimestamp, held.LastTransitionTime)
				}
				// What a user saw of the competing pods while the members arrived: why they waited
				// (their conditions now say the nodes are full, which they are).
				var events corev1.EventList
				if err := f.c.List(f.ctx, &events, client.InNamespace(f.ns)); err != nil {
					t.Fatal(err)
				}
				if slices.ContainsFunc(events.Items, func(e corev1.Event) bool { return e.Reason == "ReservationNotHeld" }) {
					t.Error("the application was told spark-scheduler did not hold its room")
				}
				if !slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
					return e.Reason == "FailedScheduling" && strings.HasPrefix(e.InvolvedObject.Name, "competitor-") &&
						strings.Contains(e.Message, "reserved for Spark applications' members (Reservation "+f.ns+"/spark)")
				}) {
					t.Error("no competing pod was told that the room is reserved (a FailedScheduling event naming the Reservation)")
				}
				return
			}
			// One placeholder for the driver and one for each node's executors, all of which
			// arrive together; every member nominated in its place.
			nodes := executorNodes(res)
			t.Logf("placeholder writes for 1 driver + %d executors on %d nodes: %d placeholders created, %d deleted, %d members nominated", executorCount, nodes, created, deleted, nominated)
			if created != 1+nodes || deleted != 1+nodes || nominated != executorCount+1 {
				t.Errorf("placeholder writes: %d created, %d deleted, %d nominated; want %d, %d, %d", created, deleted, nominated, 1+nodes, 1+nodes, executorCount+1)
			}
			if preempting > 0 {
				t.Errorf("%d of %d placeholders may preempt; want none (a class that never preempts)", preempting, created)
			}
			// The driver waited gated for its placeholder's place: held by its batch scheduler, a
			// moment, not refused by the pod scheduler; its owner is not warned of it.
			var events corev1.EventList
			if err := f.c.List(f.ctx, &events, client.InNamespace(f.ns)); err != nil {
				t.Fatal(err)
			}
			for _, e := range events.Items {
				if e.Reason == "DriverUnschedulable" {
					t.Errorf("event %s %s: %s; want none for a driver waiting for its gate", e.Type, e.Reason, e.Message)
				}
			}
		})
	}
}

// TestPlaceholdersForALateExecutor: with placeholders, a run's executors planned onto one node
// share one placeholder. One of them comes late (Spark asks in batches): the others take the
// group's place without it, and it gets a placeholder of its own in the same step, so the
// competing pods waiting for the room never get it. The late executor then takes its own
// placeholder's place.
func TestPlaceholdersForALateExecutor(t *testing.T) {
	const executorCount = 3
	f := newFixture(t)
	res, writes := f.fillTwoNodes(gang.EnforcementPlaceholders, executorCount)
	// The late executor: the last of a node planned for two or more.
	perNode := map[string][]int{}
	for _, m := range res.Spec.Members {
		if m.Role == schedv1alpha1.MemberRoleExecutor {
			var id int
			if _, err := fmt.Sscanf(m.Name, "executor-%d", &id); err != nil {
				t.Fatal(err)
			}
			perNode[m.Node] = append(perNode[m.Node], id)
		}
	}
	late, lateNode := 0, ""
	for node, ids := range perNode {
		if len(ids) > 1 {
			late, lateNode = slices.Max(ids), node
		}
	}
	if late == 0 {
		t.Fatalf("no node is planned for two executors: %v", perNode)
	}
	f.competingDeployment("competitor", executorCount+1)
	competitorsBound := func() int {
		n := 0
		for _, p := range f.pods("") {
			if p.Labels["app"] == "competitor" && p.Spec.NodeName != "" {
				n++
			}
		}
		return n
	}

	// Spark is played by hand (cluster.Eventually, not f.waitFor): every executor but the late one.
	driver := &corev1.Pod{}
	cluster.Eventually(t, 90*time.Second, "the driver running", func() (bool, error) {
		if n := competitorsBound(); n > 0 {
			return false, fmt.Errorf("%d competing pods took reserved room", n)
		}
		err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: f.get("spark").DriverPodName()}, driver)
		return err == nil && driver.Status.Phase == corev1.PodRunning, client.IgnoreNotFound(err)
	})
	var template *corev1.Pod
	cluster.Eventually(t, 30*time.Second, "the executors' pod template", func() (bool, error) {
		var err error
		template, err = executors.TemplateOf(f.ctx, f.c, driver)
		return err == nil && template != nil, client.IgnoreNotFound(err)
	})
	createExecutor := func(id int) {
		pod, err := executors.Build(driver, id, executors.Options{Cores: 1, MemoryMiB: 512, Template: template})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.c.Create(f.ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	for id := 1; id <= executorCount; id++ {
		if id != late {
			createExecutor(id)
		}
	}
	lateHolder := client.ObjectKey{Namespace: f.ns, Name: "spark-ph-executor-" + fmt.Sprint(late)}
	cluster.Eventually(t, 60*time.Second, "the others running on their planned nodes, the late one's room held by a placeholder of its own", func() (bool, error) {
		if n := competitorsBound(); n > 0 {
			return false, fmt.Errorf("%d competing pods took reserved room", n)
		}
		holder := &corev1.Pod{}
		if err := f.c.Get(f.ctx, lateHolder, holder); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return holder.Spec.NodeName == lateNode && f.membersOnPlan("spark", res) == executorCount, nil
	})
	createExecutor(late)
	cluster.Eventually(t, 60*time.Second, "every member running on its planned node, no placeholder left", func() (bool, error) {
		if n := competitorsBound(); n > 0 {
			return false, fmt.Errorf("%d competing pods took reserved room", n)
		}
		if f.membersOnPlan("spark", res) != executorCount+1 {
			return false, nil
		}
		r := &schedv1alpha1.Reservation{}
		if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(res), r); err != nil {
			return false, err
		}
		return r.Status.Bound == fmt.Sprintf("%d/%d", executorCount+1, executorCount+1) && r.Status.Placeholders == 0, nil
	})
	f.requireNoRoom()
	if n := competitorsBound(); n > 0 {
		t.Errorf("%d competing pods took reserved room", n)
	}
	// The driver's, one per node, and the late executor's own.
	created, deleted, nominated, _ := writes()
	if want := 1 + len(perNode) + 1; created != want || deleted != want {
		t.Errorf("placeholders: %d created, %d deleted; want %d of each", created, deleted, want)
	}
	if nominated != executorCount+1 {
		t.Errorf("%d members nominated; want %d", nominated, executorCount+1)
	}
}

// TestPluginEnforcementWithoutSparkScheduler: the operator runs with the plugin enforcement on a
// cluster whose scheduler is the stock kube-scheduler, which never says it holds a reservation.
// The application is not held for ever: it starts once the wait for the pod scheduler is over,
// and its owner is told why its room may not be held.
func TestPluginEnforcementWithoutSparkScheduler(t *testing.T) {
	f := newFixture(t)
	f.node("a", "2", nil)
	f.startOperator("--gang-enforcement=" + string(gang.EnforcementPlugin))
	f.create(f.app("spark", "default", 1))
	// Admitted, it waits for the pod scheduler first: its status says so before it is submitted
	// (how long it waits, the scheduler's unit tests check on a clock of their own).
	f.waitFor("spark to wait for the pod scheduler", func() (bool, error) {
		app := f.get("spark")
		why := waiting(app)
		if s := app.Status.AppState.State; s != "" && s != v1beta2.ApplicationStateNew {
			return false, fmt.Errorf("spark is %s without having shown that it waits for the pod scheduler (it shows %q)", s, why)
		}
		return strings.Contains(why, "starting once the pod scheduler holds the room planned for it"), nil
	})
	app, _ := f.waitRunning("spark")
	r := &schedv1alpha1.Reservation{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "spark"}, r); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(r.Status.Conditions, schedv1alpha1.ConditionHeld); c != nil {
		t.Errorf("the stock kube-scheduler's reservation says %+v", c)
	}
	f.waitFor("the warning that the room is not held", func() (bool, error) {
		var events corev1.EventList
		if err := f.c.List(f.ctx, &events, client.InNamespace(f.ns)); err != nil {
			return false, err
		}
		return slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
			return e.Reason == "ReservationNotHeld" && e.InvolvedObject.Name == app.Name && e.Type == corev1.EventTypeWarning &&
				strings.Contains(e.Message, "spark-scheduler")
		}), nil
	})
}

// requireNoRoom fails unless the pod scheduler, asked now for 1 CPU on the scenario's nodes by
// a probe pod like the competing ones, finds no room for it: the event after which a test
// checks that its competing pods were not let in either.
func (f *fixture) requireNoRoom() {
	f.t.Helper()
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "probe"},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{poolKey: f.ns},
			Tolerations:  []corev1.Toleration{{Key: poolKey, Operator: corev1.TolerationOpEqual, Value: f.ns, Effect: corev1.TaintEffectNoSchedule}},
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("64Mi")}}}},
		},
	}
	if got := cluster.Probe(f.t, f.c, probe); got.Spec.NodeName != "" {
		f.t.Errorf("a probe pod of 1 CPU was bound to %s: room the application's members should fill was free", got.Spec.NodeName)
	}
}

// sparkSchedulerCluster starts a cluster of the test's own whose scheduler is spark-scheduler
// (hack/local-cluster.sh up --spark-scheduler), stopped when the test ends; the scenario's
// nodes are its own pool, as on the shared cluster.
func sparkSchedulerCluster(t *testing.T) string {
	t.Helper()
	state := filepath.Join(t.TempDir(), "cluster")
	kubeconfig, err := cluster.Up(context.Background(), state, "--spark-scheduler", "--nodes", "1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Down(context.Background(), state) })
	return kubeconfig
}

// fillTwoNodes adds two nodes of 2 CPU, starts the operator with enforcement and creates
// application "spark" of 1 + executorCount × 1 CPU, which fills them at 3. It returns the
// application's Reservation once stored, and what countPlaceholderWrites counts from before
// the operator started.
func (f *fixture) fillTwoNodes(enforcement gang.Enforcement, executorCount int32) (*schedv1alpha1.Reservation, func() (created, deleted, nominated, preempting int)) {
	f.t.Helper()
	f.node("a", "2", nil)
	f.node("b", "2", nil)
	writes := f.countPlaceholderWrites()
	f.startOperator("--gang-enforcement=" + string(enforcement))
	f.create(f.app("spark", "default", executorCount))
	var res *schedv1alpha1.Reservation
	cluster.Eventually(f.t, 60*time.Second, "the application's Reservation", func() (bool, error) {
		r := &schedv1alpha1.Reservation{}
		err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "spark"}, r)
		res = r
		return err == nil, client.IgnoreNotFound(err)
	})
	if enforcement == gang.EnforcementPlaceholders {
		// The placeholders are created just after the Reservation is stored; the competing pods
		// the tests create next queue behind them only once they exist (a pod made in between
		// may take the room first, and the run is then planned again: not what these test).
		// Every executor asks for one CPU here; a placeholder may hold the room of several. The
		// driver's room is held by its placeholder until the driver takes its place, which on an
		// idle machine can be before a look sees the placeholder: either holds it.
		cluster.Eventually(f.t, 60*time.Second, "placeholders for every member", func() (bool, error) {
			var executorsHeld resource.Quantity
			driverHeld := false
			for _, p := range f.pods("") {
				switch {
				case p.Name == "spark-ph-"+schedv1alpha1.MemberRoleDriver:
					driverHeld = true
				case strings.HasPrefix(p.Name, "spark-ph-"):
					for _, c := range p.Spec.Containers {
						executorsHeld.Add(c.Resources.Requests[corev1.ResourceCPU])
					}
				case p.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleDriver && p.Spec.NodeName != "":
					driverHeld = true
				}
			}
			return driverHeld && executorsHeld.Cmp(*resource.NewQuantity(int64(executorCount), resource.DecimalSI)) >= 0, nil
		})
	}
	return res, writes
}

// executorNodes counts the nodes res plans executors on.
func executorNodes(res *schedv1alpha1.Reservation) int {
	nodes := map[string]bool{}
	for _, m := range res.Spec.Members {
		if m.Role == schedv1alpha1.MemberRoleExecutor {
			nodes[m.Node] = true
		}
	}
	return len(nodes)
}

// membersOnPlan counts app's driver and executors that run on the node res planned for them.
func (f *fixture) membersOnPlan(app string, res *schedv1alpha1.Reservation) int {
	planned := map[string]string{}
	for _, m := range res.Spec.Members {
		planned[m.Name] = m.Node
	}
	n := 0
	for _, p := range f.pods(app) {
		member := schedv1alpha1.MemberRoleDriver
		if p.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleExecutor {
			member = schedv1alpha1.MemberRoleExecutor + "-" + p.Labels[v1beta2.SparkExecutorIDLabel]
		}
		if p.Labels[v1beta2.LabelSubmissionID] == res.Spec.Run && p.Status.Phase == corev1.PodRunning && p.Spec.NodeName == planned[member] {
			n++
		}
	}
	return n
}

// competingDeployment creates a Deployment of replicas pods of 1 CPU on the scenario's nodes.
func (f *fixture) competingDeployment(name string, replicas int32) {
	f.t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{poolKey: f.ns},
					Tolerations:  []corev1.Toleration{{Key: poolKey, Operator: corev1.TolerationOpEqual, Value: f.ns, Effect: corev1.TaintEffectNoSchedule}},
					Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("64Mi")}}}},
				},
			},
		},
	}
	if err := f.c.Create(f.ctx, d); err != nil {
		f.t.Fatal(err)
	}
}

// countPlaceholderWrites watches the scenario's pods and returns what it counted so far: the
// placeholder pods created and deleted, the members nominated to a node, and the placeholders
// created that may preempt (their PriorityClass's preemption policy is not Never).
func (f *fixture) countPlaceholderWrites() func() (created, deleted, nominated, preempting int) {
	f.t.Helper()
	_, cs := cluster.Clients(f.t, f.kubeconfig)
	ctx, cancel := context.WithCancel(context.Background())
	f.t.Cleanup(cancel)
	w, err := cs.CoreV1().Pods(f.ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var mu sync.Mutex
	var created, deleted, preempting int
	nominated := map[string]bool{}
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			mu.Lock()
			switch {
			case p.Labels[gang.LabelPlaceholder] != "" && ev.Type == watch.Added:
				created++
				if ptr.Deref(p.Spec.PreemptionPolicy, corev1.PreemptLowerPriority) != corev1.PreemptNever {
					preempting++
				}
			case p.Labels[gang.LabelPlaceholder] != "" && ev.Type == watch.Deleted:
				deleted++
			case p.Labels[v1beta2.LabelAppName] != "" && p.Status.NominatedNodeName != "":
				nominated[p.Name] = true
			}
			mu.Unlock()
		}
	}()
	return func() (int, int, int, int) {
		mu.Lock()
		defer mu.Unlock()
		return created, deleted, len(nominated), preempting
	}
}
