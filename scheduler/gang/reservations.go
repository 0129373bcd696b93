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
	"sync/atomic"
	"time"

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

// reservationStatusEvery is the least time between two status writes of one reservation that
// is not complete yet. A run's members bind within moments of each other, and cycles follow
// every pod event: a write for each member bound cost the API server about six writes an
// application (docs/benchmarks.md), to show counts a user reads seconds later anyway.
const reservationStatusEvery = 2 * time.Second

// statusPacing keeps when each reservation's status was last written, so that a reservation's
// status is written at most once per reservationStatusEvery until it is complete.
type statusPacing struct {
	mu       sync.Mutex
	written  map[Key]time.Time
	followUp atomic.Bool
}

// due reports whether key's status may be written at now, and if not, how long until it may.
// A complete status (every member bound, no placeholder left) is always due: it is the one a
// user waits for, and it is the last.
func (p *statusPacing) due(key Key, now time.Time, complete bool) (bool, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.written[key]
	if !ok || complete || now.Before(at) {
		return true, 0
	}
	if wait := reservationStatusEvery - now.Sub(at); wait > 0 {
		return false, wait
	}
	return true, 0
}

// wrote records key's status written at now; a write that failed is forgotten, so that the
// next cycle tries again at once.
func (p *statusPacing) wrote(key Key, now time.Time, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.written == nil {
		p.written = map[Key]time.Time{}
	}
	if ok {
		p.written[key] = now
	} else {
		delete(p.written, key)
	}
}

// forgetBefore drops what was written before cutoff: it no longer holds any write back.
func (p *statusPacing) forgetBefore(cutoff time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, at := range p.written {
		if at.Before(cutoff) {
			delete(p.written, key)
		}
	}
}

// followUpAfter asks for a cycle after wait, unless one is asked for already: the writes held
// back are made by it, with or without an event between.
func (p *statusPacing) followUpAfter(wait time.Duration, trigger func()) {
	if p.followUp.Swap(true) {
		return
	}
	time.AfterFunc(wait, func() {
		p.followUp.Store(false)
		trigger()
	})
}

// writeReservationStatus brings the status of the live reservations the cluster cache shows up
// to date, side by side, each at most once per reservationStatusEvery until it is complete; a
// write that fails, or is held back, is made by a later cycle, which finds the status out of
// date still.
func (s *Scheduler) writeReservationStatus(ctx context.Context, w world) {
	existing := existingPlaceholders(w)
	now := s.cfg.Clock.Now()
	s.statusWrites.forgetBefore(now.Add(-reservationStatusEvery))
	type write struct {
		key    Key
		status schedv1alpha1.ReservationStatus
	}
	var writes []write
	var heldBack time.Duration
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
		complete := len(st.BoundMembers) == 1+len(plannedSlots(r)) && st.Placeholders == 0
		if due, wait := s.statusWrites.due(o.Key, now, complete); !due {
			if heldBack == 0 || wait < heldBack {
				heldBack = wait
			}
			continue
		}
		writes = append(writes, write{o.Key, st})
	}
	if heldBack > 0 {
		s.statusWrites.followUpAfter(heldBack, s.trigger)
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
			s.statusWrites.wrote(wr.key, now, err == nil)
			if err != nil && !apierrors.IsNotFound(err) {
				log.FromContext(ctx).V(1).Info("could not write a reservation's status; retrying on the next cycle", "workload", wr.key.String(), "error", err.Error())
			}
		}()
	}
	wg.Wait()
}
