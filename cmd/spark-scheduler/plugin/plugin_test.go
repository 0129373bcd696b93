/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package plugin

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/reservation"
)

var now = time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)

// sparkPod is a pod of app's run "run-1" in role requesting cpu; released onto node when set.
func sparkPod(app, role, cpu, node string) *v1.Pod {
	p := plainPod(app+"-"+role, cpu)
	p.Labels = map[string]string{v1beta2.LabelAppName: app, v1beta2.LabelSubmissionID: "run-1", v1beta2.SparkRoleLabel: role}
	if node != "" {
		p.Annotations = map[string]string{reservation.AnnotationNode: node}
	}
	return p
}

func plainPod(name, cpu string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-" + types.UID(name)},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}}}}
}

// nodeInfo is a node of 8 CPUs with pods on it.
func nodeInfo(name string, pods ...*v1.Pod) fwk.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{
		Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("8"), v1.ResourcePods: resource.MustParse("110")}}})
	return ni
}

// reservationOf app: the driver (1 CPU) on n1, three executors (2 CPUs) on n1, n1, n2.
func reservationOf(app, enforcement string) *unstructured.Unstructured {
	r := &schedv1alpha1.Reservation{
		TypeMeta:   metav1.TypeMeta{APIVersion: schedv1alpha1.GroupVersion.String(), Kind: "Reservation"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: app},
		Spec: schedv1alpha1.ReservationSpec{Workload: schedv1alpha1.WorkloadReference{Kind: "SparkApplication", Name: app},
			Queue: "q", Run: "run-1", Enforcement: enforcement, Admitted: metav1.NewTime(now),
			Members: []schedv1alpha1.ReservationMember{
				{Name: "driver", Role: "driver", Node: "n1", Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}},
				{Name: "executor-1", Role: "executor", Node: "n1", Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}},
				{Name: "executor-2", Role: "executor", Node: "n1", Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}},
				{Name: "executor-3", Role: "executor", Node: "n2", Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}},
			}},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(r)
	if err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

func TestFilter(t *testing.T) {
	cases := []struct {
		name        string
		enforcement string
		pod         *v1.Pod
		node        fwk.NodeInfo
		want        fwk.Code
		wantReason  string
	}{
		// n1: 8 CPUs, 5 held (driver 1 + two executors of 2), 3 free.
		{name: "a pod that fits beside the held room", pod: plainPod("web", "3"), node: nodeInfo("n1"), want: fwk.Success},
		{name: "a pod that needs held room", pod: plainPod("web", "4"), node: nodeInfo("n1"), want: fwk.Unschedulable,
			wantReason: "node(s) had cpu reserved for Spark applications' members (Reservation ns/a)"},
		// 8 - 2 (the executor) - 3 (the driver and the other executor, still held) = 3 free.
		{name: "held room taken by a member's pod is not held again", pod: plainPod("web", "3"),
			node: nodeInfo("n1", sparkPod("a", "executor", "2", "n1")), want: fwk.Success},
		{name: "a member takes its own room", pod: sparkPod("a", "executor", "2", "n1"),
			node: nodeInfo("n1", plainPod("other", "3")), want: fwk.Success},
		// 8 - 6 (another pod) = 2 free, 3 held for its run's others: refused, and explained.
		{name: "a member whose room another pod took", pod: sparkPod("a", "executor", "2", "n1"),
			node: nodeInfo("n1", plainPod("other", "6")), want: fwk.Unschedulable,
			wantReason: "node(s) had cpu reserved for Spark applications' members (Reservation ns/a)"},
		{name: "a member is kept to the node it was released onto", pod: sparkPod("a", "executor", "2", "n1"),
			node: nodeInfo("n2"), want: fwk.UnschedulableAndUnresolvable},
		{name: "the driver is kept to its planned node", pod: sparkPod("a", "driver", "1", ""),
			node: nodeInfo("n2"), want: fwk.UnschedulableAndUnresolvable},
		{name: "an executor beyond the plan gets only free room", pod: sparkPod("a", "executor", "2", ""),
			node: nodeInfo("n2", plainPod("other", "5")), want: fwk.Unschedulable},
		{name: "a node with nothing held is the stock scheduler's", pod: plainPod("web", "8"), node: nodeInfo("n3"), want: fwk.Success},
		{name: "a reservation kept by placeholders is not held twice", enforcement: schedv1alpha1.EnforcementPlaceholders,
			pod: plainPod("web", "8"), node: nodeInfo("n1"), want: fwk.Success},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &Reservations{ledger: &reservation.Ledger{Timeout: time.Minute}, now: func() time.Time { return now }}
			enforcement := tc.enforcement
			if enforcement == "" {
				enforcement = schedv1alpha1.EnforcementPlugin
			}
			p.set(reservationOf("a", enforcement))
			st := p.Filter(context.Background(), nil, tc.pod, tc.node)
			if st.Code() != tc.want {
				t.Fatalf("Filter = %v, want %v", st, tc.want)
			}
			if tc.wantReason != "" && !strings.Contains(strings.Join(st.Reasons(), ";"), tc.wantReason) {
				t.Errorf("reasons %q, want %q", st.Reasons(), tc.wantReason)
			}
		})
	}
}

// TestReserveChecksAgain: a reservation the ledger takes between a cycle's Filter and its
// Reserve keeps the pod out of its room (Reserve refuses it, and nothing of it is remembered);
// one that fits beside it is placed, and remembered for the judgements.
func TestReserveChecksAgain(t *testing.T) {
	cases := []struct {
		name string
		pod  *v1.Pod
		want fwk.Code
	}{
		// n1: 8 CPUs; a holds 5 (the driver, two executors) once the ledger has it.
		{name: "a pod placed into room held since Filter", pod: plainPod("web", "4"), want: fwk.Unschedulable},
		{name: "a pod that still fits beside it", pod: plainPod("web", "3"), want: fwk.Success},
		{name: "a member into its own room", pod: sparkPod("a", "executor", "2", "n1"), want: fwk.Success},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &Reservations{ledger: &reservation.Ledger{}, now: func() time.Time { return now },
				nodeInfo: func(string) (fwk.NodeInfo, error) { return nodeInfo("n1"), nil }}
			if st := p.Filter(context.Background(), nil, tc.pod, nodeInfo("n1")); !st.IsSuccess() {
				t.Fatalf("Filter before the reservation = %v, want success", st)
			}
			p.set(reservationOf("a", schedv1alpha1.EnforcementPlugin))
			st := p.Reserve(context.Background(), nil, tc.pod, "n1")
			if st.Code() != tc.want {
				t.Fatalf("Reserve = %v, want %v", st, tc.want)
			}
			placed := len(p.placed.since(now.Add(-time.Second))) == 1
			if placed != (tc.want == fwk.Success) {
				t.Errorf("placement remembered: %t, want %t", placed, tc.want == fwk.Success)
			}
		})
	}
}

func TestReservationsGoWithTheirObjects(t *testing.T) {
	p := &Reservations{ledger: &reservation.Ledger{}, now: func() time.Time { return now }}
	obj := reservationOf("a", schedv1alpha1.EnforcementPlugin)
	p.set(obj)
	if st := p.Filter(context.Background(), nil, plainPod("web", "8"), nodeInfo("n1")); st.IsSuccess() {
		t.Fatal("the reservation holds nothing")
	}
	p.remove(obj)
	if st := p.Filter(context.Background(), nil, plainPod("web", "8"), nodeInfo("n1")); !st.IsSuccess() {
		t.Errorf("after the reservation's deletion: %v", st)
	}
	// Switched to another enforcement: no longer held here.
	p.set(obj)
	p.set(reservationOf("a", schedv1alpha1.EnforcementAdvisory))
	if st := p.Filter(context.Background(), nil, plainPod("web", "8"), nodeInfo("n1")); !st.IsSuccess() {
		t.Errorf("after the reservation turned advisory: %v", st)
	}
}

func TestArgs(t *testing.T) {
	cases := []struct {
		raw     string
		want    time.Duration
		wantErr string
	}{
		{raw: `{}`, want: reservation.DefaultTimeout},
		{raw: `{"reservationTimeout":"90s"}`, want: 90 * time.Second},
		{raw: `{"reservationTimeout":"0s"}`, want: reservation.DefaultTimeout},
		{raw: `{"reservationTimeout":300}`, wantErr: `cannot unmarshal number`},
		{raw: `{"reservationTimeout":"soon"}`, wantErr: `invalid duration "soon"`},
	}
	for _, tc := range cases {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := timeoutOf(&runtime.Unknown{Raw: []byte(tc.raw), ContentType: runtime.ContentTypeJSON})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("timeoutOf = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// stored is reservation a of the plugin's enforcement at generation, and a fake API server
// holding it.
func stored(t *testing.T, generation int64) (*unstructured.Unstructured, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	obj := reservationOf("a", schedv1alpha1.EnforcementPlugin)
	obj.SetUID("uid-a")
	obj.SetGeneration(generation)
	scheme := runtime.NewScheme()
	if err := schedv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return obj, dynamicfake.NewSimpleDynamicClient(scheme, obj.DeepCopy())
}

// delayedQueue hands on at once what the acknowledger adds after a delay, and records the
// delays it asked for: what it queued, and for when, is known as soon as it has asked, without
// waiting for the delay to pass.
type delayedQueue struct {
	workqueue.TypedRateLimitingInterface[heldGeneration]
	mu     sync.Mutex
	delays []time.Duration
}

func (q *delayedQueue) AddAfter(g heldGeneration, d time.Duration) {
	q.mu.Lock()
	q.delays = append(q.delays, d)
	q.mu.Unlock()
	q.Add(g)
}

// wantQueued checks the delays asked for since the last check.
func (q *delayedQueue) wantQueued(t *testing.T, what string, want ...time.Duration) {
	t.Helper()
	q.mu.Lock()
	got := q.delays
	q.delays = nil
	q.mu.Unlock()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: judgements queued after %v, want %v", what, got, want)
	}
}

// heldOf reads the Held condition of reservation ns/a.
func heldOf(t *testing.T, client *dynamicfake.FakeDynamicClient) *metav1.Condition {
	t.Helper()
	got, err := client.Resource(reservations).Namespace("ns").Get(context.Background(), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var r schedv1alpha1.Reservation
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, &r); err != nil {
		t.Fatal(err)
	}
	return apimeta.FindStatusCondition(r.Status.Conditions, schedv1alpha1.ConditionHeld)
}

// saying is obj at generation, its Held condition saying status (with reason) of generation
// said, as the watch brings the acknowledger's write back.
func saying(t *testing.T, obj *unstructured.Unstructured, generation int64, status, reason string, said int64) *unstructured.Unstructured {
	t.Helper()
	out := obj.DeepCopy()
	out.SetGeneration(generation)
	cond := map[string]any{"type": schedv1alpha1.ConditionHeld, "status": status, "observedGeneration": said}
	if reason != "" {
		cond["reason"] = reason
	}
	if err := unstructured.SetNestedSlice(out.Object, []any{cond}, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHeldIsSaidOncePerGeneration: a generation of a reservation is judged ackDelay after the
// ledger takes it, and said held (or taken) once; one that says so already is not queued again;
// one waiting for pods ending on its nodes is judged again every endingRecheck. Each add to the
// queue is seen as the acknowledger makes it (delayedQueue), so nothing waits for the delays.
func TestHeldIsSaidOncePerGeneration(t *testing.T) {
	ctx := context.Background()
	obj, client := stored(t, 2)
	taken := ""
	waiting := false // pods ending on its nodes
	judge := func(types.NamespacedName) (verdict, error) { return verdict{taken: taken, ending: waiting}, nil }
	p := &Reservations{ledger: &reservation.Ledger{}, now: func() time.Time { return now },
		acks: newAcknowledger(client.Resource(reservations), judge, nil, nil, func() time.Time { return now })}
	q := &delayedQueue{TypedRateLimitingInterface: p.acks.queue}
	p.acks.queue = q
	defer q.ShutDown()

	p.set(obj)
	q.wantQueued(t, "a reservation the ledger took", ackDelay)
	p.acks.next(ctx)
	if c := heldOf(t, client); c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != 2 || c.Reason != heldReason {
		t.Fatalf("Held condition = %+v, want true for generation 2", c)
	}

	// Its own write comes back through the watch: nothing more to say.
	p.set(saying(t, obj, 2, "True", "", 2))
	q.wantQueued(t, "a reservation that says it is held")

	// A new plan (a generation the condition is not for) is said held again.
	p.set(saying(t, obj, 3, "True", "", 2))
	q.wantQueued(t, "generation 3", ackDelay)

	// Not said of another enforcement's reservation, nor retried for one that is gone.
	gone := heldGeneration{name: types.NamespacedName{Namespace: "ns", Name: "gone"}, uid: "uid-gone", generation: 1}
	q.Add(gone)
	p.acks.next(ctx) // generation 3 of a
	p.acks.next(ctx) // gone: not found
	if n := q.NumRequeues(gone); n != 0 {
		t.Errorf("a reservation that is gone was retried %d times", n)
	}
	if c := heldOf(t, client); c == nil || c.ObservedGeneration != 3 {
		t.Errorf("Held condition = %+v, want it for generation 3", c)
	}

	// Room taken before it was held: said, not held, naming the node; and said once.
	taken = "n1"
	p.set(saying(t, obj, 4, "True", "", 2))
	q.wantQueued(t, "generation 4", ackDelay)
	p.acks.next(ctx)
	c := heldOf(t, client)
	r := &schedv1alpha1.Reservation{ObjectMeta: metav1.ObjectMeta{Generation: 4}, Status: schedv1alpha1.ReservationStatus{Conditions: []metav1.Condition{*c}}}
	if node, ok := reservation.TakenOn(r); !ok || node != "n1" || c.Status != metav1.ConditionFalse {
		t.Fatalf("Held condition = %+v, want false, room taken on n1", c)
	}
	p.set(saying(t, obj, 4, "False", reservation.ReasonRoomTaken, 4))
	q.wantQueued(t, "a generation said taken already")

	// Pods ending in the planned room: nothing said until they are gone, judged again meanwhile.
	taken, waiting = "", true
	p.set(saying(t, obj, 5, "False", reservation.ReasonRoomTaken, 4))
	q.wantQueued(t, "generation 5", ackDelay)
	p.acks.next(ctx)
	if c := heldOf(t, client); c.ObservedGeneration != 4 {
		t.Errorf("Held condition = %+v written while pods are ending", c)
	}
	q.wantQueued(t, "generation 5 while pods end", endingRecheck)
	waiting = false
	p.acks.next(ctx)
	if c := heldOf(t, client); c.ObservedGeneration != 5 || c.Status != metav1.ConditionTrue {
		t.Errorf("Held condition = %+v once the pods are gone, want true for generation 5", c)
	}
	p.set(reservationOf("b", schedv1alpha1.EnforcementPlaceholders))
	q.wantQueued(t, "a reservation of placeholders")
}

// TestNotJudgedBeforeTheInformersSync: a reservation the ledger holds before the scheduler's
// informers of pods and nodes have synced (a restarted scheduler's, read in New, before the
// scheduler starts them) is not judged, which against empty informers would say every plan
// held, but judged again every endingRecheck, and said once they have synced.
func TestNotJudgedBeforeTheInformersSync(t *testing.T) {
	ctx := context.Background()
	obj, client := stored(t, 2)
	judged := 0
	judge := func(types.NamespacedName) (verdict, error) { judged++; return verdict{taken: "n1"}, nil }
	p := &Reservations{ledger: &reservation.Ledger{}, now: func() time.Time { return now },
		acks: newAcknowledger(client.Resource(reservations), judge, nil, nil, func() time.Time { return now })}
	synced := false
	p.acks.synced = func() bool { return synced }
	q := &delayedQueue{TypedRateLimitingInterface: p.acks.queue}
	p.acks.queue = q
	defer q.ShutDown()

	p.set(obj)
	q.wantQueued(t, "a reservation the ledger took", ackDelay)
	for range 2 {
		p.acks.next(ctx)
		if judged != 0 || heldOf(t, client) != nil {
			t.Fatalf("judged %d times, Held condition %+v, before the informers synced", judged, heldOf(t, client))
		}
		q.wantQueued(t, "a reservation while the informers sync", endingRecheck)
	}
	synced = true
	p.acks.next(ctx)
	if c := heldOf(t, client); judged != 1 || c == nil || c.Reason != reservation.ReasonRoomTaken {
		t.Errorf("once synced: judged %d times, Held condition %+v, want the judgement (room taken) said", judged, c)
	}
}

// TestJudgedOncePerGeneration: a Held write queued for a generation the ledger no longer holds
// (a new plan came meanwhile) writes nothing: judged, it would speak of the new plan under the
// old generation and replace the new plan's condition. One queued again for a generation already
// judged (an update that came before the verdict's echo) is not judged again: a plan held may
// have started its run, and must not be found taken beside plans made since.
func TestJudgedOncePerGeneration(t *testing.T) {
	ctx := context.Background()
	obj, client := stored(t, 3)
	ledger := &reservation.Ledger{}
	judged := 0
	judge := func(types.NamespacedName) (verdict, error) { judged++; return verdict{}, nil }
	acks := newAcknowledger(client.Resource(reservations), judge, ledger.Judge, ledger.Judged, func() time.Time { return now })
	defer acks.queue.ShutDown()
	var r schedv1alpha1.Reservation
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &r); err != nil {
		t.Fatal(err)
	}
	ledger.Set(&r)
	name := types.NamespacedName{Namespace: "ns", Name: "a"}
	for _, tc := range []struct {
		generation int64
		written    bool
	}{{generation: 2}, {generation: 3, written: true}, {generation: 3, written: true}} {
		if err := acks.write(ctx, heldGeneration{name: name, uid: "uid-a", generation: tc.generation}); err != nil {
			t.Fatal(err)
		}
		got, err := client.Resource(reservations).Namespace("ns").Get(ctx, "a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		if written := len(conds) > 0; written != tc.written {
			t.Errorf("generation %d (the ledger holds 3): written %t, want %t", tc.generation, written, tc.written)
		}
	}
	if judged != 1 {
		t.Errorf("judged %d times, want once (generation 3, the first time)", judged)
	}
	if _, j, _ := ledger.Judged(name); j != reservation.JudgedHeld {
		t.Errorf("the ledger's judgement of generation 3: %v, want held", j)
	}
}

// TestTakenOn: a reservation is judged against the pods on its planned nodes as this scheduler
// knows them: bound ones, and ones it placed whose binding its informer does not show yet; not
// ending ones.
func TestTakenOn(t *testing.T) {
	bound := func(name, cpu, node string) *v1.Pod {
		p := plainPod(name, cpu)
		p.Spec.NodeName = node
		return p
	}
	ending := bound("leaving", "4", "n1")
	ending.DeletionTimestamp = &metav1.Time{Time: now}
	ended := bound("done", "4", "n1")
	ended.Status.Phase = v1.PodSucceeded
	cases := []struct {
		name   string
		pods   []*v1.Pod // in the informer
		placed []*v1.Pod // placed on n1 by this scheduler, ago
		ago    time.Duration
		want   verdict
	}{
		// n1: 8 CPUs; a holds 5 (the driver, two executors).
		{name: "nothing else on the nodes"},
		{name: "a bound pod that fits beside the plan", pods: []*v1.Pod{bound("web", "3", "n1")}},
		{name: "a bound pod that took planned room", pods: []*v1.Pod{bound("web", "4", "n1")}, want: verdict{taken: "n1"}},
		{name: "a pod placed, its binding not seen yet", pods: []*v1.Pod{plainPod("web", "4")}, placed: []*v1.Pod{plainPod("web", "4")}, want: verdict{taken: "n1"}},
		{name: "a pod placed and gone since", placed: []*v1.Pod{plainPod("web", "4")}},
		{name: "a pod placed and ended since", pods: []*v1.Pod{ended}, placed: []*v1.Pod{ended}},
		{name: "a placement long since forgotten", pods: []*v1.Pod{plainPod("web", "4")}, placed: []*v1.Pod{plainPod("web", "4")}, ago: placedFor + time.Second},
		{name: "a pod ending in the planned room: waited for", pods: []*v1.Pod{ending}, want: verdict{ending: true}},
		{name: "a pod ending beside room taken: taken", pods: []*v1.Pod{ending, bound("web", "4", "n1")}, want: verdict{taken: "n1"}},
		{name: "a member on its node takes its own place", pods: []*v1.Pod{bound("web", "3", "n1"), sparkPodOn("a", "executor", "2", "n1")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			for _, pod := range tc.pods {
				if err := pods.Add(pod); err != nil {
					t.Fatal(err)
				}
			}
			nodes := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			for _, n := range []string{"n1", "n2"} {
				if err := nodes.Add(nodeInfo(n).Node()); err != nil {
					t.Fatal(err)
				}
			}
			p := &Reservations{ledger: &reservation.Ledger{}, now: func() time.Time { return now },
				pods: listersv1.NewPodLister(pods), nodes: listersv1.NewNodeLister(nodes)}
			for _, pod := range tc.placed {
				p.placed.add(pod, "n1", now.Add(-tc.ago))
			}
			p.set(reservationOf("a", schedv1alpha1.EnforcementPlugin))
			got, err := p.takenOn(types.NamespacedName{Namespace: "ns", Name: "a"})
			if err != nil || got != tc.want {
				t.Errorf("takenOn = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// sparkPodOn is sparkPod bound to node.
func sparkPodOn(app, role, cpu, node string) *v1.Pod {
	p := sparkPod(app, role, cpu, node)
	p.Spec.NodeName = node
	return p
}

// TestPlacementsForgetOldOnes: placements older than placedFor are dropped as new ones come,
// and are never listed.
func TestPlacementsForgetOldOnes(t *testing.T) {
	var ps placements
	ps.add(plainPod("old", "1"), "n1", now)
	ps.add(plainPod("new", "1"), "n1", now.Add(placedFor+2*time.Second))
	if n := len(ps.byUID); n != 1 {
		t.Errorf("%d placements kept, want only the new one", n)
	}
	got := ps.since(now.Add(placedFor))
	if len(got) != 1 || got[0].pod.Name != "new" {
		t.Errorf("since = %v, want the new one", got)
	}
}
