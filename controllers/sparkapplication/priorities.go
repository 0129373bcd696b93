/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// PriorityStateChange is the work-queue priority of an application whose driver pod changed
// its state (or went away), or whose state another writer changed (the submission pool's
// SUBMITTED, when the driver may already run): a change a user, a workflow engine or Kueue
// waits to see in the application's state. Under load the queue holds many applications whose
// executors came or went, or whose own status write came back through the watch; those
// reconciles change no state, and the ones that do go first.
const PriorityStateChange = 10

// podEvents queues an application on every change of the pods it launched, the changes that
// may move its state ahead of the others (PriorityStateChange).
func podEvents() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e ctrlevent.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueuePod(q, e.Object, false)
		},
		UpdateFunc: func(_ context.Context, e ctrlevent.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueuePod(q, e.ObjectNew, movesState(e.ObjectOld, e.ObjectNew))
		},
		DeleteFunc: func(_ context.Context, e ctrlevent.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueuePod(q, e.Object, isDriver(e.Object))
		},
		GenericFunc: func(_ context.Context, e ctrlevent.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueuePod(q, e.Object, false)
		},
	}
}

// stateChanges queues, ahead of the others, an application whose state was changed (the
// controller's For handler queues it for every change; this raises its priority). The change
// that matters is another writer's (the pool's SUBMITTED); the echo of the controller's own
// write goes first too, and costs one reconcile that reads only the cache.
func stateChanges() handler.EventHandler {
	return handler.Funcs{
		UpdateFunc: func(_ context.Context, e ctrlevent.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			before, ok1 := e.ObjectOld.(*v1beta2.SparkApplication)
			after, ok2 := e.ObjectNew.(*v1beta2.SparkApplication)
			if ok1 && ok2 && before.Status.AppState.State != after.Status.AppState.State {
				addUrgent(q, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(after)})
			}
		},
	}
}

// movesState reports whether a pod's update can move its application's state: the pod is a
// driver and its state (as the state machine reads it) changed.
func movesState(old, updated client.Object) bool {
	before, ok1 := old.(*corev1.Pod)
	after, ok2 := updated.(*corev1.Pod)
	return ok1 && ok2 && isDriver(after) && driverState(before) != driverState(after)
}

func isDriver(o client.Object) bool {
	return o.GetLabels()[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleDriver
}

func enqueuePod(q workqueue.TypedRateLimitingInterface[reconcile.Request], pod client.Object, urgent bool) {
	for _, req := range podToApp(context.Background(), pod) {
		if urgent {
			addUrgent(q, req)
		} else {
			q.Add(req)
		}
	}
}

// addUrgent queues req at PriorityStateChange; already queued at a lower priority, it moves up.
func addUrgent(q workqueue.TypedRateLimitingInterface[reconcile.Request], req reconcile.Request) {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(PriorityStateChange)}, req)
		return
	}
	q.Add(req)
}
