/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/sparkpod"
)

// TestQueueStatusesAfterPreemption: a cycle that preempts an application for another shows
// the queue with the preemptor admitted in place of its victim, never both.
func TestQueueStatusesAfterPreemption(t *testing.T) {
	key := func(name string) Key {
		return scheduler.ApplicationKey(types.NamespacedName{Namespace: "ns", Name: name})
	}
	demand := sparkpod.Demand{Driver: sparkpod.PodDemand{Role: sparkpod.RoleDriver, Count: 1,
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}
	admitted := &Admission{Queue: "q", Driver: "n"}
	snap := Snapshot{Queues: map[string]*Queue{"q": {Name: "q"}}, Workloads: []Workload{
		{Key: key("low-1"), Queue: "q", Demand: demand, Admission: admitted},
		{Key: key("low-2"), Queue: "q", Demand: demand, Admission: admitted},
		{Key: key("high"), Queue: "q", Demand: demand, Priority: 10},
	}}
	out := Outcome{
		Admitted:  []Admitted{{Key: key("high"), Admission: *admitted}},
		Preempted: []Preemption{{Key: key("low-2"), By: key("high")}},
		Usage:     map[string]corev1.ResourceList{"q": {corev1.ResourceCPU: resource.MustParse("4")}},
	}
	if got := queueStatuses(snap, out)["q"].AdmittedApplications; got != 2 {
		t.Errorf("admitted applications %d, want 2 (low-1 and high; low-2 was preempted)", got)
	}
}

// TestWriteQueueStatus: the queues whose status changed are written, side by side, those that
// did not are not; a write that fails is reported, and the others are made all the same.
func TestWriteQueueStatus(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := schedv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	names := []string{"a", "b", "c", "d"}
	var objs []client.Object
	for _, n := range names {
		q := &schedv1alpha1.Queue{}
		q.Name = n
		objs = append(objs, q)
	}
	var mu sync.Mutex
	var written []string
	inFlight, together := 0, 0
	failing := ""
	api := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(objs...).
		WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			mu.Lock()
			written = append(written, obj.GetName())
			inFlight++
			together = max(together, inFlight)
			mu.Unlock()
			time.Sleep(50 * time.Millisecond) // a round trip, long enough for the others to start
			mu.Lock()
			inFlight--
			mu.Unlock()
			if obj.GetName() == failing {
				return errors.New("refused")
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		}}).Build()
	s := &Scheduler{client: api, cfg: Config{Clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}}
	snap := Snapshot{Queues: map[string]*Queue{}}
	for _, n := range names {
		snap.Queues[n] = &Queue{Name: n}
	}
	cached := func() world {
		var list schedv1alpha1.QueueList
		if err := api.List(context.Background(), &list); err != nil {
			t.Fatal(err)
		}
		return world{Queues: list.Items}
	}
	waiting := func(queues ...string) Outcome {
		out := Outcome{Order: map[string][]Key{}}
		for _, q := range queues {
			out.Order[q] = []Key{scheduler.ApplicationKey(types.NamespacedName{Namespace: "ns", Name: "app-in-" + q})}
		}
		return out
	}

	if err := s.writeQueueStatus(context.Background(), cached(), snap, waiting()); err != nil {
		t.Fatalf("first write: %v", err)
	}
	written, together = nil, 0
	failing = "d"
	err := s.writeQueueStatus(context.Background(), cached(), snap, waiting("b", "c", "d"))
	slices.Sort(written)
	if !slices.Equal(written, []string{"b", "c", "d"}) {
		t.Errorf("written %v, want the three queues that changed", written)
	}
	if together != 3 {
		t.Errorf("at most %d writes at once, want all three side by side", together)
	}
	if err == nil || !strings.Contains(err.Error(), "queue d") {
		t.Errorf("error %v, want queue d's write reported", err)
	}
	for _, q := range cached().Queues {
		if want := int32(map[string]int{"b": 1, "c": 1}[q.Name]); q.Status.PendingApplications != want {
			t.Errorf("queue %s shows %d waiting, want %d", q.Name, q.Status.PendingApplications, want)
		}
	}
}
