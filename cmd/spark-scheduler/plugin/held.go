/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/scheduler/reservation"
)

// Saying a reservation is held. The gang scheduler checks a run's planned room against the pods
// its own cache shows, and this plugin learns of the reservation through a watch of its own,
// which may lag behind: a pod placed in between takes room the plan counted on, and a member
// then waits beside its running driver. So once the ledger holds a reservation, the plugin sets
// its Held condition, for the generation it read, and the gang scheduler starts the run's driver
// only when it sees that: from then on no pod is placed into the room but its members.
//
// Every replica of spark-scheduler writes it, the standbys of a leader election too: they hold
// the same ledger from the same watch, and the leader's lags theirs by moments at most.

// heldReason and heldMessage are the Held condition's.
const (
	heldReason  = "RoomHeld"
	heldMessage = "spark-scheduler's " + Name + " plugin holds the room planned for the members"
)

// ackWorkers is how many Held writes are in flight at most.
const ackWorkers = 4

// heldGeneration is a generation of a reservation the ledger holds.
type heldGeneration struct {
	name       types.NamespacedName
	uid        types.UID
	generation int64
}

// acknowledger writes the Held condition of the reservation generations it is given.
type acknowledger struct {
	queue  workqueue.TypedRateLimitingInterface[heldGeneration]
	client dynamic.NamespaceableResourceInterface
	now    func() time.Time
}

func newAcknowledger(client dynamic.NamespaceableResourceInterface, now func() time.Time) *acknowledger {
	return &acknowledger{
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[heldGeneration](),
			workqueue.TypedRateLimitingQueueConfig[heldGeneration]{Name: "spark-reservations-held"}),
		client: client, now: now}
}

// held asks for r's Held condition to be written, unless it says so already.
func (a *acknowledger) held(r *schedv1alpha1.Reservation) {
	if reservation.Held(r) {
		return
	}
	a.queue.Add(heldGeneration{name: types.NamespacedName{Namespace: r.Namespace, Name: r.Name}, uid: r.UID, generation: r.Generation})
}

// run writes Held conditions until ctx ends.
func (a *acknowledger) run(ctx context.Context) {
	for range ackWorkers {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for a.next(ctx) {
			}
		}, time.Second)
	}
	<-ctx.Done()
	a.queue.ShutDown()
}

// next writes one Held condition; false once the queue is shut down.
func (a *acknowledger) next(ctx context.Context) bool {
	g, quit := a.queue.Get()
	if quit {
		return false
	}
	defer a.queue.Done(g)
	switch err := a.write(ctx, g); {
	case err == nil, apierrors.IsNotFound(err), apierrors.IsConflict(err), apierrors.IsInvalid(err):
		// Written; or the reservation is gone, or replaced by another (the uid in the patch
		// no longer matches), which has its own generation to say held.
		a.queue.Forget(g)
	default:
		klog.FromContext(ctx).Error(err, "could not say a reservation is held; retrying", "reservation", g.name)
		a.queue.AddRateLimited(g)
	}
	return true
}

// write sets g's Held condition. The patch names the uid the ledger read, so that it cannot land
// on another reservation stored since under the same name. The condition is the only one, so a
// merge patch of the list is whole.
func (a *acknowledger) write(ctx context.Context, g heldGeneration) error {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": g.uid},
		"status": map[string]any{"conditions": []metav1.Condition{{
			Type: schedv1alpha1.ConditionHeld, Status: metav1.ConditionTrue, ObservedGeneration: g.generation,
			LastTransitionTime: metav1.NewTime(a.now()), Reason: heldReason, Message: heldMessage,
		}}},
	})
	if err != nil {
		return err
	}
	_, err = a.client.Namespace(g.name.Namespace).Patch(ctx, g.name.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: "spark-scheduler"}, "status")
	if err != nil {
		return fmt.Errorf("writing the Held condition of %s: %w", g.name, err)
	}
	return nil
}
