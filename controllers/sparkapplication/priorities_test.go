/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// TestPodEventsPutStateChangesFirst: an application whose driver changed state is handed to
// a worker before applications queued earlier for their executors, and one queued for its
// executors moves up when its driver then changes.
func TestPodEventsPutStateChangesFirst(t *testing.T) {
	pod := func(app, role string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: app + "-" + role, Labels: map[string]string{
				v1beta2.LabelAppName: app, v1beta2.SparkRoleLabel: role}},
			Status: corev1.PodStatus{Phase: phase},
		}
	}
	update := func(old, updated *corev1.Pod) func(q pq) {
		return func(q pq) {
			// Watches bring a new resource version; a resync (the same) is not urgent anyway.
			old.ResourceVersion, updated.ResourceVersion = "1", "2"
			podEvents().Update(context.Background(), ctrlevent.UpdateEvent{ObjectOld: old, ObjectNew: updated}, q)
		}
	}
	remove := func(p *corev1.Pod) func(q pq) {
		return func(q pq) { podEvents().Delete(context.Background(), ctrlevent.DeleteEvent{Object: p}, q) }
	}
	create := func(p *corev1.Pod) func(q pq) {
		return func(q pq) { podEvents().Create(context.Background(), ctrlevent.CreateEvent{Object: p}, q) }
	}
	tests := []struct {
		name   string
		events []func(q pq)
		want   []string // applications in the order workers get them
	}{
		{
			name: "a driver that starts goes ahead of executors that start",
			events: []func(q pq){
				update(pod("a", "executor", corev1.PodPending), pod("a", "executor", corev1.PodRunning)),
				create(pod("b", "executor", corev1.PodPending)),
				update(pod("c", "driver", corev1.PodPending), pod("c", "driver", corev1.PodRunning)),
			},
			want: []string{"c", "a", "b"},
		},
		{
			name: "a driver that ends or goes away goes first",
			events: []func(q pq){
				update(pod("a", "executor", corev1.PodRunning), pod("a", "executor", corev1.PodSucceeded)),
				update(pod("b", "driver", corev1.PodRunning), pod("b", "driver", corev1.PodSucceeded)),
				remove(pod("c", "driver", corev1.PodRunning)),
			},
			want: []string{"b", "c", "a"},
		},
		{
			name: "a driver's update that keeps its state is not urgent",
			events: []func(q pq){
				update(pod("a", "executor", corev1.PodPending), pod("a", "executor", corev1.PodRunning)),
				update(pod("b", "driver", corev1.PodRunning), pod("b", "driver", corev1.PodRunning)),
				create(pod("c", "driver", corev1.PodPending)),
			},
			want: []string{"a", "b", "c"},
		},
		{
			name: "an application queued for an executor moves up when its driver ends",
			events: []func(q pq){
				update(pod("a", "executor", corev1.PodRunning), pod("a", "executor", corev1.PodSucceeded)),
				update(pod("b", "executor", corev1.PodRunning), pod("b", "executor", corev1.PodSucceeded)),
				update(pod("b", "driver", corev1.PodRunning), pod("b", "driver", corev1.PodFailed)),
			},
			want: []string{"b", "a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := priorityqueue.New[reconcile.Request]("test")
			defer q.ShutDown()
			for _, e := range tt.events {
				e(q)
			}
			var got []string
			for range tt.want {
				req, _, _ := q.GetWithPriority()
				got = append(got, req.Name)
				q.Done(req)
			}
			if len(got) != len(tt.want) || q.Len() != 0 {
				t.Fatalf("got %v with %d left, want %v", got, q.Len(), tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("order %v, want %v", got, tt.want)
				}
			}
		})
	}
}

type pq = priorityqueue.PriorityQueue[reconcile.Request]

// TestStateChangesGoFirst: an application whose state another writer changed (the pool's
// SUBMITTED) moves ahead of applications queued for other changes of theirs.
func TestStateChangesGoFirst(t *testing.T) {
	app := func(name string, state v1beta2.ApplicationStateType, rv string) *v1beta2.SparkApplication {
		a := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
		a.Status.AppState.State = state
		return a
	}
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	for _, e := range []ctrlevent.UpdateEvent{
		{ObjectOld: app("queued", v1beta2.ApplicationStateNew, "1"), ObjectNew: app("queued", v1beta2.ApplicationStateNew, "2")},
		{ObjectOld: app("running", v1beta2.ApplicationStateRunning, "1"), ObjectNew: app("running", v1beta2.ApplicationStateRunning, "2")},
		{ObjectOld: app("submitted", v1beta2.ApplicationStateNew, "1"), ObjectNew: app("submitted", v1beta2.ApplicationStateSubmitted, "2")},
	} {
		// As the controller's For handler and this one both see each update.
		q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.ObjectNew)})
		stateChanges().Update(context.Background(), e, q)
	}
	var got []string
	for range 3 {
		req, _, _ := q.GetWithPriority()
		got = append(got, req.Name)
		q.Done(req)
	}
	if want := []string{"submitted", "queued", "running"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
