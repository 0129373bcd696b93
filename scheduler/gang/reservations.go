/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
)

// migrate moves the reservations that releases before the Reservation API kept in an annotation
// (AnnotationAdmission) into Reservation objects, each read once: a live one (for the current
// run, which may still hold it) is written as the object, then the annotation is removed; one
// that no longer holds is only removed. Until both are done the annotation keeps counting (the
// world reads it when there is no object), so a restart in between loses nothing.
func (s *Scheduler) migrate(ctx context.Context, workloads []object) error {
	var errs []error
	for i := range workloads {
		o := &workloads[i]
		if _, ok := o.Object.GetAnnotations()[AnnotationAdmission]; !ok {
			continue
		}
		if o.legacy {
			if r, live := o.liveReservation(); live {
				if err := s.migrateOne(ctx, o, r); err != nil {
					errs = append(errs, err)
					continue
				}
			}
		}
		if err := s.dropLegacy(ctx, o.Object); err != nil {
			errs = append(errs, fmt.Errorf("removing the migrated reservation annotation of %s: %w", o.Key, err))
			continue
		}
		log.FromContext(ctx).Info("migrated the reservation annotation to a Reservation", "workload", o.Key.String())
	}
	return errors.Join(errs...)
}

func (s *Scheduler) migrateOne(ctx context.Context, o *object, r Reservation) error {
	d, err := o.demand()
	if err != nil {
		return fmt.Errorf("migrating the reservation of %s: %w", o.Key, err)
	}
	r.PriorityClassName, r.DriverRequests, r.ExecutorRequests = o.PriorityClassName, d.Driver.Requests.DeepCopy(), d.Executor.Requests.DeepCopy()
	obj, err := reservationObject(o, r, s.cfg.Enforcement)
	if err != nil {
		return err
	}
	if err := s.client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("migrating the reservation of %s: %w", o.Key, err)
	}
	if obj.UID != "" {
		r.UID = obj.UID
		s.mu.Lock()
		s.stored[o.Key] = r
		s.mu.Unlock()
		stored := r
		o.res, o.legacy = &stored, false
	}
	return nil
}

// reservationStatus is what r's status should read in w: the nodes planned, and which members
// are bound (a driver placed on a node; executor i when its pod is placed; without readable
// ids, as many executors as are placed, in plan order).
func reservationStatus(key Key, r Reservation, pods []corev1.Pod, existing map[types.NamespacedName]*corev1.Pod) schedv1alpha1.ReservationStatus {
	total := 1 + len(plannedSlots(r))
	var bound []string
	var unnumbered int
	for i := range pods {
		p := &pods[i]
		m, ok := memberOf(p)
		if !ok || m.app != key || m.submission != r.SubmissionID || placedOn(p) == "" {
			continue
		}
		if m.role == v1beta2.SparkRoleDriver {
			bound = append(bound, schedv1alpha1.MemberRoleDriver)
			continue
		}
		if id, numbered := sparkpod.ExecutorID(p.Name, p.Labels); !numbered {
			unnumbered++
		} else if id <= total-1 {
			bound = append(bound, executorMember(id))
		}
	}
	for i := 1; unnumbered > 0 && i < total; i++ {
		if !slices.Contains(bound, executorMember(i)) {
			bound = append(bound, executorMember(i))
			unnumbered--
		}
	}
	slices.Sort(bound)
	bound = slices.Compact(bound)
	var placeholders int32
	resName := ReservationName(key)
	for _, p := range existing {
		if p.Labels[LabelPlaceholder] == resName && p.Namespace == key.Namespace && p.Labels[LabelRun] == r.SubmissionID {
			placeholders++
		}
	}
	return schedv1alpha1.ReservationStatus{Nodes: nodesOf(r), Bound: strconv.Itoa(len(bound)) + "/" + strconv.Itoa(total),
		BoundMembers: bound, Placeholders: placeholders}
}

// writeReservationStatus brings the status of the live reservations the cluster cache shows up
// to date, side by side; a write that fails is tried again by the next cycle, which finds the
// status out of date still.
func (s *Scheduler) writeReservationStatus(ctx context.Context, w world) {
	existing := existingPlaceholders(w)
	type write struct {
		key    Key
		status schedv1alpha1.ReservationStatus
	}
	var writes []write
	for i := range w.Workloads {
		o := &w.Workloads[i]
		r, ok := o.liveReservation()
		if !ok || r.UID == "" || o.legacy {
			continue
		}
		st := reservationStatus(o.Key, r, w.Pods, existing)
		if st.Nodes == r.Status.Nodes && st.Bound == r.Status.Bound && st.Placeholders == r.Status.Placeholders && slices.Equal(st.BoundMembers, r.Status.BoundMembers) {
			continue
		}
		writes = append(writes, write{o.Key, st})
	}
	var wg sync.WaitGroup
	calls := make(chan struct{}, storeCalls)
	for _, wr := range writes {
		wg.Add(1)
		calls <- struct{}{}
		go func() {
			defer func() { <-calls; wg.Done() }()
			// Every field, a cleared one as null: a merge patch leaves out what it omits.
			patch, _ := json.Marshal(map[string]any{"status": map[string]any{"nodes": wr.status.Nodes, "bound": wr.status.Bound,
				"boundMembers": wr.status.BoundMembers, "placeholders": wr.status.Placeholders}})
			obj := &schedv1alpha1.Reservation{}
			obj.Namespace, obj.Name = wr.key.Namespace, ReservationName(wr.key)
			err := s.client.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
			if err != nil && !apierrors.IsNotFound(err) {
				log.FromContext(ctx).V(1).Info("could not write a reservation's status; retrying on the next cycle", "workload", wr.key.String(), "error", err.Error())
			}
		}()
	}
	wg.Wait()
}
