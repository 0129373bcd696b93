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
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
)

// labelOwnNode marks (as label and NoSchedule taint) the kwok nodes a test adds for itself,
// with the test's namespace as value: only the test's own pods, which select and tolerate it,
// run there, and the test's applications use no other node.
const labelOwnNode = "gang.test.sparkop.dev/namespace"

// ownNode adds a kwok node of cpu CPUs, 64Gi and pods pod slots for the test in ns, deleted
// when the test ends.
func ownNode(t *testing.T, c client.Client, ns, name, cpu, pods string) *corev1.Node {
	t.Helper()
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse(pods)}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name,
			Labels:      map[string]string{labelOwnNode: ns, "type": "kwok", "kubernetes.io/os": "linux"},
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}},
		Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: labelOwnNode, Value: ns, Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Allocatable: alloc, Capacity: alloc},
	}
	if err := c.Create(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), n) })
	return n
}

// onOwnNodes confines a pod spec to the test's own nodes.
func onOwnNodes(ns string, p *v1beta2.SparkPodSpec) {
	p.NodeSelector = map[string]string{labelOwnNode: ns}
	p.Tolerations = []corev1.Toleration{{Key: labelOwnNode, Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule}}
}

// fillerPod is a pod of no application, bound straight to node, requesting cpu.
func fillerPod(t *testing.T, c client.Client, ns, name, node, cpu string) {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
			Tolerations: []corev1.Toleration{{Key: labelOwnNode, Operator: corev1.TolerationOpExists}}},
	}
	if err := c.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

// gangApp is a gang application on the test's own nodes: a driver of 1 CPU and n executors of
// cores CPUs.
func gangApp(ns, name string, n, cores int32) *v1beta2.SparkApplication {
	app := cluster.SparkPi(ns, name)
	app.Spec.BatchScheduler = ptr.To(gang.Name)
	app.Spec.Driver.CoreRequest = nil
	app.Spec.Executor.Cores = ptr.To(cores)
	app.Spec.Executor.Instances = ptr.To(n)
	onOwnNodes(ns, &app.Spec.Driver.SparkPodSpec)
	onOwnNodes(ns, &app.Spec.Executor.SparkPodSpec)
	return app
}

func startGangOperator(t *testing.T, ns string, extra ...string) *cluster.Operator {
	args := []string{"--kubeconfig", cluster.Kubeconfig(t), "--namespaces", ns, "--enable-gang-scheduler",
		"--enable-spark-connect=false", "-logtostderr", "-v=1"}
	return cluster.StartOperator(t, "operator", append(args, extra...)...)
}

// admission waits until app holds a reservation for its current submission and returns it.
func admission(t *testing.T, c client.Client, ns, name string) gang.Reservation {
	t.Helper()
	var res gang.Reservation
	cluster.Eventually(t, time.Minute, name+" to be admitted", func() (bool, error) {
		app := &v1beta2.SparkApplication{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, app); err != nil {
			return false, err
		}
		if st := app.Status.AppState.State; st == v1beta2.ApplicationStateFailed {
			return false, fmt.Errorf("%s failed: %s", name, app.Status.AppState.ErrorMessage)
		}
		r, ok := gang.ReservationOf(app)
		res = r
		return ok && r.SubmissionID == app.Status.SubmissionID, nil
	})
	return res
}

// TestFullNodeNotChosen: a node whose pod slots are all taken is not planned for any member,
// though its cpu would fit the gang most tightly; the gang is planned, and runs, on the node
// with slots free.
func TestFullNodeNotChosen(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "gang-pods")
	full := ownNode(t, c, ns, "full", "16", "2")
	roomy := ownNode(t, c, ns, "roomy", "16", "110")
	fillerPod(t, c, ns, "filler-1", full.Name, "7")
	fillerPod(t, c, ns, "filler-2", full.Name, "7")
	startGangOperator(t, ns)
	if err := c.Create(ctx, gangApp(ns, "pods", 1, 1)); err != nil {
		t.Fatal(err)
	}
	res := admission(t, c, ns, "pods")
	want := map[string]int32{roomy.Name: 1}
	if res.Driver != roomy.Name || fmt.Sprint(res.Executors) != fmt.Sprint(want) {
		t.Fatalf("planned driver on %s, executors %v; want all on %s (%s has no pod slot left)", res.Driver, res.Executors, roomy.Name, full.Name)
	}
	cluster.Eventually(t, time.Minute, "the driver to run on "+roomy.Name, func() (bool, error) {
		p := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pods-driver"}, p); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return p.Spec.NodeName == roomy.Name && p.Status.Phase == corev1.PodRunning, nil
	})
}

// ownQueue creates a queue named as the test's namespace with a cpu quota, deleted when the
// test ends.
func ownQueue(t *testing.T, c client.Client, ns, cpu string) {
	t.Helper()
	q := &schedv1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec: schedv1alpha1.QueueSpec{Quota: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}
	if err := c.Create(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), q) })
}

// TestRejectedThenEdited: an application rejected because its gang exceeds its queue's quota
// fails with the reason; edited to fit, it is judged again as it now is, admitted and run.
func TestRejectedThenEdited(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "gang-reject")
	ownNode(t, c, ns, "n", "16", "110")
	ownQueue(t, c, ns, "4")
	startGangOperator(t, ns)
	app := gangApp(ns, "big", 2, 2) // 1 + 2×2 = 5 cpu > 4
	app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To(ns)}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(app)
	var rejected string
	cluster.Eventually(t, time.Minute, "big to be rejected", func() (bool, error) {
		if err := c.Get(ctx, key, app); err != nil {
			return false, err
		}
		rejected = app.Status.AppState.ErrorMessage
		return app.Status.AppState.State == v1beta2.ApplicationStateFailed, nil
	})
	if msg := app.Status.AppState.ErrorMessage; !strings.Contains(msg, "more than queue "+ns+" ever allows") {
		t.Fatalf("rejected with %q; want the queue's quota named", msg)
	}
	firstSubmission := app.Status.SubmissionID
	app.Spec.Executor.Instances = ptr.To[int32](1) // 1 + 2 = 3 cpu: fits
	if err := c.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, time.Minute, "the edit to start a new submission", func() (bool, error) {
		if err := c.Get(ctx, key, app); err != nil {
			return false, err
		}
		return app.Status.SubmissionID != firstSubmission && app.Status.SubmissionID != "", nil
	})
	admission(t, c, ns, "big")
	cluster.Eventually(t, time.Minute, "the edited application to run", func() (bool, error) {
		if err := c.Get(ctx, key, app); err != nil {
			return false, err
		}
		if app.Status.AppState.State == v1beta2.ApplicationStateFailed && app.Status.SubmissionID != firstSubmission {
			return false, fmt.Errorf("rejected again after the edit (first for %q): %s", rejected, app.Status.AppState.ErrorMessage)
		}
		return app.Status.AppState.State == v1beta2.ApplicationStateRunning, nil
	})
}

// runningDriver waits until app's driver runs and returns it.
func runningDriver(t *testing.T, c client.Client, ns, app string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{}
	cluster.Eventually(t, time.Minute, app+"'s driver to run", func() (bool, error) {
		err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: app + "-driver"}, p)
		return err == nil && p.Status.Phase == corev1.PodRunning, client.IgnoreNotFound(err)
	})
	return p
}

// addExecutors creates executors first..first+n-1 of driver's application as Spark does, from
// the executor pod template the submitter gave the driver.
func addExecutors(t *testing.T, c client.Client, driver *corev1.Pod, first, n int) []*corev1.Pod {
	t.Helper()
	ctx := context.Background()
	var template *corev1.Pod
	cluster.Eventually(t, time.Minute, "the executor pod template", func() (bool, error) {
		var err error
		template, err = executors.TemplateOf(ctx, c, driver)
		return template != nil, client.IgnoreNotFound(err)
	})
	pods, err := executors.Create(ctx, c, driver, n, executors.Options{FirstID: first, Cores: 2, MemoryMiB: 512, Template: template})
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

// executorOn reads pod and reports whether it runs on node, released there by the gang
// scheduler.
func executorOn(ctx context.Context, c client.Client, pod *corev1.Pod, node string) (bool, error) {
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		return false, err
	}
	if n := pod.Annotations[gang.AnnotationNode]; n != "" && n != node {
		return false, fmt.Errorf("%s released to %s, want %s", pod.Name, n, node)
	}
	return pod.Spec.NodeName == node && pod.Status.Phase == corev1.PodRunning, nil
}

// TestDynamicAllocationWithinQuota: executors Spark adds beyond the gang start only within
// the queue's quota, onto free capacity of any node they may use (here a node the plan did
// not name, as the planned one is full); once running they count in the queue's admitted
// usage, so the next gang waits over quota; when one ends, the next waiting executor starts.
func TestDynamicAllocationWithinQuota(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "gang-dyn")
	small := ownNode(t, c, ns, "a-small", "6", "110") // the gang (5 cpu) fits here, tightest
	big := ownNode(t, c, ns, "b-big", "16", "110")
	ownQueue(t, c, ns, "7") // the gang and one extra executor of 2 cpu
	startGangOperator(t, ns)

	app := gangApp(ns, "dyn", 2, 2)
	app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To(ns)}
	app.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, InitialExecutors: ptr.To[int32](2), MaxExecutors: ptr.To[int32](6)}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	res := admission(t, c, ns, "dyn")
	if res.Driver != small.Name || res.Executors[small.Name] != 2 {
		t.Fatalf("planned driver on %s, executors %v; want the whole gang on %s", res.Driver, res.Executors, small.Name)
	}
	driver := runningDriver(t, c, ns, "dyn")
	initial := addExecutors(t, c, driver, 1, 2)
	for _, p := range initial {
		cluster.Eventually(t, time.Minute, p.Name+" to run on its planned node", func() (bool, error) { return executorOn(ctx, c, p, small.Name) })
	}

	extra := addExecutors(t, c, driver, 3, 2)
	cluster.Eventually(t, time.Minute, extra[0].Name+" to run on the free node", func() (bool, error) { return executorOn(ctx, c, extra[0], big.Name) })
	queue := &schedv1alpha1.Queue{}
	cluster.Eventually(t, time.Minute, "the queue to count the extra executor", func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: ns}, queue); err != nil {
			return false, err
		}
		cpu := queue.Status.Admitted[corev1.ResourceCPU]
		return cpu.Cmp(resource.MustParse("7")) == 0, nil
	})

	next := gangApp(ns, "next", 1, 2)
	next.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To(ns)}
	if err := c.Create(ctx, next); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, time.Minute, "next to wait over quota", func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(next), next); err != nil {
			return false, err
		}
		for _, cond := range next.Status.Conditions {
			if cond.Type == "Queued" && cond.Status == metav1.ConditionTrue {
				return strings.HasPrefix(cond.Message, "over quota in queue "+ns), nil
			}
		}
		return false, nil
	})
	if err := c.Get(ctx, client.ObjectKeyFromObject(extra[1]), extra[1]); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(extra[1].Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == gang.GateExecutor }) {
		t.Fatalf("%s released beyond the queue's quota (to %q)", extra[1].Name, extra[1].Annotations[gang.AnnotationNode])
	}

	// Spark removes the extra executor: the waiting one may start in its place.
	if err := executors.Delete(ctx, c, extra[0]); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, time.Minute, extra[1].Name+" to run once the first extra ended", func() (bool, error) { return executorOn(ctx, c, extra[1], big.Name) })
	if err := c.Get(ctx, client.ObjectKeyFromObject(next), next); err != nil {
		t.Fatal(err)
	}
	if _, admitted := gang.ReservationOf(next); admitted {
		t.Fatal("next admitted while the queue's quota is taken by dyn's gang and extra executor")
	}
}
