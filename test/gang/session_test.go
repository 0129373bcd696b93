/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/test/executors"
)

// session is a SparkConnect on the pool's nodes: a server of 1 CPU and one executor of 1 CPU.
// Sessions name no queue: they go to the default one.
func (f *fixture) session(name string) *v1alpha1.SparkConnect {
	return f.sessionWith(name, nil)
}

// sessionWith is session, changed by change (if any) before it is created.
func (f *fixture) sessionWith(name string, change func(*v1alpha1.SparkConnect)) *v1alpha1.SparkConnect {
	onPool := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		NodeSelector: map[string]string{poolKey: f.ns},
		Tolerations:  []corev1.Toleration{{Key: poolKey, Operator: corev1.TolerationOpEqual, Value: f.ns, Effect: corev1.TaintEffectNoSchedule}},
	}}
	// The server pod requests what its template gives its container, and nothing without: a
	// server that requests nothing takes no node capacity once it runs.
	server := onPool.DeepCopy()
	server.Spec.Containers = []corev1.Container{{Name: v1beta2.SparkDriverContainerName, Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}
	conn := &v1alpha1.SparkConnect{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: v1alpha1.SparkConnectSpec{
			SparkVersion: "4.0.4",
			Image:        ptr.To("docker.io/apache/spark:4.0.4"),
			Server:       v1alpha1.ServerSpec{SparkPodSpec: v1alpha1.SparkPodSpec{Template: server}},
			Executor:     v1alpha1.ExecutorSpec{Instances: ptr.To[int32](1), SparkPodSpec: v1alpha1.SparkPodSpec{Template: onPool.DeepCopy()}},
		},
	}
	if change != nil {
		change(conn)
	}
	if err := f.c.Create(f.ctx, conn); err != nil {
		f.t.Fatal(err)
	}
	return conn
}

func (f *fixture) getSession(name string) *v1alpha1.SparkConnect {
	f.t.Helper()
	conn := &v1alpha1.SparkConnect{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, conn); err != nil {
		f.t.Fatal(err)
	}
	return conn
}

// filler is a pod of no workload, bound straight to node, requesting cpu.
func (f *fixture) filler(name, node, cpu string) {
	f.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
	}
	if err := f.c.Create(f.ctx, p); err != nil {
		f.t.Fatal(err)
	}
}

// defaultQueue is the default queue's status as the operator last wrote it.
func (f *fixture) defaultQueue() schedv1alpha1.QueueStatus {
	return f.queueStatus(schedv1alpha1.DefaultQueueName)
}

// sessionKey is how queue status names a session.
func (f *fixture) sessionKey(name string) string { return f.ns + "/" + name + " (SparkConnect)" }

// TestSessions: a SparkConnect session goes through the gang scheduler like an application.
// On a full node it waits, queued with a reason in its status, an event and the queue's
// pending list; once capacity frees it is admitted (its reservation on the SparkConnect, its
// server on the planned node, its executors released from the gang's gate onto planned nodes)
// and becomes Ready. A session and an application of the same name are two workloads. Deleting
// a running or a queued session releases what it held, as the queue's status shows.
func TestSessions(t *testing.T) {
	f := newFixture(t)
	node := f.node("n1", "8", nil)
	f.filler("filler", node, "7")
	f.startOperator("--enable-spark-connect=true", "--default-batch-scheduler=gang")

	// A full node: the session (2 CPU) waits, and says why.
	f.session("notebook")
	var why string
	f.waitFor("the session to be queued", func() (bool, error) {
		conn := f.getSession("notebook")
		c := meta.FindStatusCondition(conn.Status.Conditions, v1alpha1.ConditionServerPodReady)
		if c == nil || c.Reason != v1alpha1.ReasonQueued || conn.Status.State != v1alpha1.SparkConnectStateProvisioning ||
			strings.Contains(c.Message, "next cycle") {
			return false, nil
		}
		why = c.Message
		return conn.Status.Server.SubmissionID != "", nil
	})
	t.Logf("queued: %s", why)
	if !strings.Contains(why, "cpu") && !strings.Contains(why, "node") {
		t.Errorf("the queued reason %q says nothing of what the session lacks", why)
	}
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "notebook-server"}, &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("a queued session's server pod exists (or cannot be read: %v)", err)
	}
	f.waitFor("a Queued event", func() (bool, error) {
		var events eventsv1.EventList
		if err := f.c.List(f.ctx, &events, client.InNamespace(f.ns)); err != nil {
			return false, err
		}
		return slices.ContainsFunc(events.Items, func(e eventsv1.Event) bool {
			return e.Regarding.Kind == "SparkConnect" && e.Regarding.Name == "notebook" && e.Reason == v1alpha1.ReasonQueued
		}), nil
	})
	f.waitFor("the queue to list the session as pending", func() (bool, error) {
		return slices.Contains(f.defaultQueue().Pending, f.sessionKey("notebook")), nil
	})

	// Capacity frees: admitted, its server on the planned node, Ready.
	if err := f.c.Delete(f.ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "filler"}}); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the session to be Ready", func() (bool, error) {
		return f.getSession("notebook").Status.State == v1alpha1.SparkConnectStateReady, nil
	})
	conn := f.getSession("notebook")
	res, ok := reservationOf(f.c, conn)
	if !ok || res.SubmissionID != conn.Status.Server.SubmissionID || res.Driver != node || res.Executors[node] != 1 {
		t.Fatalf("reservation %+v (found %v) is not for submission %s with server and executor on %s", res, ok, conn.Status.Server.SubmissionID, node)
	}
	server := &corev1.Pod{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: conn.ServerPodName()}, server); err != nil {
		t.Fatal(err)
	}
	if server.Spec.NodeName != node || server.Labels[v1beta2.LabelSubmissionID] != res.SubmissionID || server.Labels[gang.LabelQueue] != schedv1alpha1.DefaultQueueName {
		t.Errorf("server on %q with labels %v; want it on %s, labelled with its submission and queue", server.Spec.NodeName, server.Labels, node)
	}

	// Its executor, made from the template the server was given as Spark would, is gated and
	// then released onto its planned node.
	cm := &corev1.ConfigMap{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: conn.ExecutorTemplateConfigMapName()}, cm); err != nil {
		t.Fatal(err)
	}
	template := &corev1.Pod{}
	if err := yaml.Unmarshal([]byte(cm.Data["executor-pod-template.yaml"]), template); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(template.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == gang.GateExecutor }) {
		t.Errorf("the executor template has no gang gate: %+v", template.Spec.SchedulingGates)
	}
	execs, err := executors.Create(f.ctx, f.c, server, 1, executors.Options{PodNamePrefix: conn.Name, Template: template})
	if err != nil {
		t.Fatal(err)
	}
	f.waitFor("the executor to be released onto its planned node", func() (bool, error) {
		p := &corev1.Pod{}
		if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(execs[0]), p); err != nil {
			return false, err
		}
		return len(p.Spec.SchedulingGates) == 0 && p.Spec.NodeName == node, nil
	})

	// An application and a session of one name: two workloads, each with its own reservation.
	twin := f.app("twin", schedv1alpha1.DefaultQueueName, 1)
	f.create(twin)
	f.session("twin")
	f.waitFor("the application twin to run and the session twin to be Ready", func() (bool, error) {
		return f.get("twin").Status.AppState.State == v1beta2.ApplicationStateRunning &&
			f.getSession("twin").Status.State == v1alpha1.SparkConnectStateReady, nil
	})
	app, sess := f.get("twin"), f.getSession("twin")
	appRes, okA := reservationOf(f.c, app)
	sessRes, okS := reservationOf(f.c, sess)
	if !okA || !okS || appRes.SubmissionID != app.Status.SubmissionID || sessRes.SubmissionID != sess.Status.Server.SubmissionID {
		t.Fatalf("reservations: application %+v (%v) for %s, session %+v (%v) for %s",
			appRes, okA, app.Status.SubmissionID, sessRes, okS, sess.Status.Server.SubmissionID)
	}
	f.waitFor("the queue to count three admitted workloads", func() (bool, error) {
		st := f.defaultQueue()
		return st.AdmittedApplications == 3 && st.PendingApplications == 0, nil
	})

	// Deleting a running session releases it; the application of its name keeps its own.
	if err := f.c.Delete(f.ctx, sess); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the queue to count two admitted workloads", func() (bool, error) {
		return f.defaultQueue().AdmittedApplications == 2, nil
	})
	if _, ok := reservationOf(f.c, f.get("twin")); !ok || f.get("twin").Status.AppState.State != v1beta2.ApplicationStateRunning {
		t.Error("deleting the session twin took the application twin's reservation or run")
	}

	// Deleting a queued session takes it off the queue.
	f.filler("filler-2", node, "3") // 8 CPU: 2 (notebook) + 2 (twin) + 3
	f.session("late")
	f.waitFor("the session late to be pending", func() (bool, error) {
		st := f.defaultQueue()
		return slices.Contains(st.Pending, f.sessionKey("late")) && st.PendingApplications == 1, nil
	})
	if err := f.c.Delete(f.ctx, f.getSession("late")); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the queue to list nothing pending", func() (bool, error) {
		st := f.defaultQueue()
		return st.PendingApplications == 0 && !slices.Contains(st.Pending, f.sessionKey("late")), nil
	})
	st := f.defaultQueue()
	if st.AdmittedApplications != 2 {
		t.Errorf("%d admitted after the queued session's deletion, want 2", st.AdmittedApplications)
	}
}

// TestSessionPreempted: with --gang-preemption, an application of higher priority in the
// default queue evicts a running session whole: its server pod is deleted, a Preempted event
// says why, and the session queues again as a new submission, to be Ready again once the
// application has run.
func TestSessionPreempted(t *testing.T) {
	f := newFixture(t)
	node := f.node("n1", "4", nil)
	f.filler("filler", node, "1")
	high := f.priorityClass("high", 100)
	f.startOperator("--enable-spark-connect=true", "--default-batch-scheduler=gang", "--gang-preemption")

	f.session("notebook")
	f.waitFor("the session to be Ready", func() (bool, error) {
		return f.getSession("notebook").Status.State == v1alpha1.SparkConnectStateReady, nil
	})
	first := f.getSession("notebook")
	server := &corev1.Pod{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: first.ServerPodName()}, server); err != nil {
		t.Fatal(err)
	}

	// 4 CPU: the filler 1, the session 2; the application needs 2.
	app := runFor(f.app("urgent", schedv1alpha1.DefaultQueueName, 1), 3)
	app.Spec.Driver.PriorityClassName = ptr.To(high)
	f.create(app)
	f.waitFor("the session's server to be stopped and the session queued again", func() (bool, error) {
		conn := f.getSession("notebook")
		p := &corev1.Pod{}
		err := f.c.Get(f.ctx, client.ObjectKeyFromObject(server), p)
		gone := apierrors.IsNotFound(err) || (err == nil && p.UID != server.UID)
		return gone && conn.Status.Server.SubmissionID != first.Status.Server.SubmissionID, client.IgnoreNotFound(err)
	})
	var events eventsv1.EventList
	if err := f.c.List(f.ctx, &events, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(events.Items, func(e eventsv1.Event) bool {
		return e.Regarding.Kind == "SparkConnect" && e.Regarding.Name == "notebook" && e.Reason == "Preempted" &&
			strings.Contains(e.Note, "urgent")
	}) {
		t.Error("no Preempted event on the session naming the application it made room for")
	}
	f.waitState("urgent", v1beta2.ApplicationStateCompleted)
	f.waitFor("the session to be Ready again", func() (bool, error) {
		return f.getSession("notebook").Status.State == v1alpha1.SparkConnectStateReady, nil
	})
	again := f.getSession("notebook")
	if res, ok := reservationOf(f.c, again); !ok || res.SubmissionID != again.Status.Server.SubmissionID || res.SubmissionID == first.Status.Server.SubmissionID {
		t.Errorf("reservation %+v (found %v): want one for the new submission %s", res, ok, again.Status.Server.SubmissionID)
	}
}

// TestSessionNamesQueue: a session naming a queue (spec.batchSchedulerOptions.queue) is queued
// and admitted there, not in the default queue: its reservation and its server's queue label
// name that queue, and the queue's status counts it. While that queue's quota is taken the
// session waits, though the nodes and the default queue have room.
func TestSessionNamesQueue(t *testing.T) {
	f := newFixture(t)
	node := f.node("n1", "8", nil)
	q := f.queue("sessions", schedv1alpha1.QueueSpec{Quota: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}})
	f.startOperator("--enable-spark-connect=true", "--default-batch-scheduler=gang")

	inQueue := func(c *v1alpha1.SparkConnect) {
		c.Spec.BatchSchedulerOptions = &v1alpha1.BatchSchedulerOptions{Queue: ptr.To(q)}
	}
	f.sessionWith("first", inQueue)
	f.waitFor("the session to be Ready", func() (bool, error) {
		return f.getSession("first").Status.State == v1alpha1.SparkConnectStateReady, nil
	})
	conn := f.getSession("first")
	res, ok := reservationOf(f.c, conn)
	if !ok || res.Queue != q || res.Driver != node {
		t.Fatalf("reservation %+v (found %v); want one from queue %s on %s", res, ok, q, node)
	}
	server := &corev1.Pod{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: conn.ServerPodName()}, server); err != nil {
		t.Fatal(err)
	}
	if got := server.Labels[gang.LabelQueue]; got != q {
		t.Errorf("server labelled with queue %q, want %q", got, q)
	}
	f.waitFor("the queue to count the session", func() (bool, error) {
		return f.queueStatus(q).AdmittedApplications == 1, nil
	})

	// The queue's quota (2 cpu) is taken: a second session of it waits, over quota in it.
	f.sessionWith("second", inQueue)
	f.waitFor("the second session to wait over quota in its queue", func() (bool, error) {
		c := meta.FindStatusCondition(f.getSession("second").Status.Conditions, v1alpha1.ConditionServerPodReady)
		return c != nil && c.Reason == v1alpha1.ReasonQueued && strings.Contains(c.Message, "quota in queue "+q), nil
	})
	if st := f.defaultQueue(); slices.Contains(st.Pending, f.sessionKey("second")) {
		t.Errorf("the default queue lists the session of queue %s as pending: %v", q, st.Pending)
	}
}
