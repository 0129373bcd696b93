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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
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
func reservationStatus(key core.Key, r Reservation, pods []corev1.Pod, existing map[types.NamespacedName]*corev1.Pod) schedv1alpha1.ReservationStatus {
	total := r.members()
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

// A reservation's status (its nodes, which members are bound) is for people and other programs
// to read; no decision here depends on it. Cycles follow every pod event and a run's members
// bind one after the other, so writing each change cost four to seven writes an application
// (docs/benchmarks.md). Its writes are paced:
//
//   - The complete status (every member bound, no placeholder left), the one a user waits for,
//     is written at once, and so is a reservation's first.
//   - Other changes wait until reservationStatusEvery has passed since the last write, and are
//     then written as they stand: members binding within it cost one write together.
//   - A change that only loses members (they end, or went) waits until it has been out of date
//     for membersGoneShownWithin: a run's executors go as it ends, and its reservation goes with
//     it moments later, so writing them gone is rarely worth it; a member lost in mid-run is
//     shown within that time.
const (
	reservationStatusEvery = 5 * time.Second
	membersGoneShownWithin = 30 * time.Second
)

// statusPacing keeps, per reservation, its status last written and when, and since when a
// change that only loses members has waited.
type statusPacing struct {
	mu        sync.Mutex
	written   map[core.Key]writtenStatus
	goneSince map[core.Key]time.Time
	// followUp is the cycle asked for to make held-back writes.
	followUp followUp
}

// writtenStatus is a reservation's status as last written (of the object uid: a new run's
// replaces it under the same name), and when.
type writtenStatus struct {
	at     time.Time
	uid    types.UID
	status schedv1alpha1.ReservationStatus
}

// statusChange is how a reservation's wanted status differs from the one shown.
type statusChange int

const (
	statusComplete    statusChange = iota // the wanted status is complete
	statusMembersGone                     // members gone, nothing else changed
	statusOther
)

// equalStatus reports whether a and b read the same (conditions aside: spark-scheduler writes
// those).
func equalStatus(a, b schedv1alpha1.ReservationStatus) bool {
	return a.Nodes == b.Nodes && a.Bound == b.Bound && a.Placeholders == b.Placeholders && slices.Equal(a.BoundMembers, b.BoundMembers)
}

// changeOf says how want differs from shown (which it does).
func changeOf(want, shown schedv1alpha1.ReservationStatus, total int) statusChange {
	switch {
	case len(want.BoundMembers) == total && want.Placeholders == 0:
		return statusComplete
	case want.Nodes == shown.Nodes && want.Placeholders == shown.Placeholders && len(want.BoundMembers) < len(shown.BoundMembers) &&
		!slices.ContainsFunc(want.BoundMembers, func(m string) bool { return !slices.Contains(shown.BoundMembers, m) }):
		return statusMembersGone
	}
	return statusOther
}

// due reports whether want, a change of the status of key's reservation uid, may be written at
// now, and if not, how long until it may (0: it need not be, the cluster cache has not shown
// the write of it yet). The caller calls it for every reservation whose status is out of date,
// in every pass (see forget).
func (p *statusPacing) due(key core.Key, uid types.UID, now time.Time, want schedv1alpha1.ReservationStatus, change statusChange) (bool, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	last, written := p.written[key]
	if written && last.uid != uid {
		delete(p.written, key)
		delete(p.goneSince, key)
		written = false
	}
	if written && equalStatus(last.status, want) {
		return false, 0
	}
	if change != statusMembersGone {
		delete(p.goneSince, key)
	}
	switch change {
	case statusComplete:
		return true, 0
	case statusMembersGone:
		if p.goneSince == nil {
			p.goneSince = map[core.Key]time.Time{}
		}
		since, ok := p.goneSince[key]
		if !ok || now.Before(since) {
			p.goneSince[key] = now
			return false, membersGoneShownWithin
		}
		if wait := membersGoneShownWithin - now.Sub(since); wait > 0 {
			return false, wait
		}
		return true, 0
	}
	if !written || now.Before(last.at) {
		return true, 0
	}
	if wait := reservationStatusEvery - now.Sub(last.at); wait > 0 {
		return false, wait
	}
	return true, 0
}

// wrote records the status of key's reservation uid written at now; a write that failed is
// forgotten, so that the next cycle tries again at once.
func (p *statusPacing) wrote(key core.Key, uid types.UID, now time.Time, status schedv1alpha1.ReservationStatus, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !ok {
		delete(p.written, key)
		return
	}
	if p.written == nil {
		p.written = map[core.Key]writtenStatus{}
	}
	p.written[key] = writtenStatus{at: now, uid: uid, status: status}
	delete(p.goneSince, key)
}

// forget drops, before a pass at now, the writes that no longer hold any change back and the
// waits of members gone that are not out of date any more (stale: those the pass finds so).
func (p *statusPacing) forget(now time.Time, stale map[core.Key]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, last := range p.written {
		if now.Sub(last.at) >= reservationStatusEvery {
			delete(p.written, key)
		}
	}
	for key := range p.goneSince {
		if !stale[key] {
			delete(p.goneSince, key)
		}
	}
}

// writeReservationStatus brings the status of the live reservations the cluster cache shows up
// to date, side by side, paced as said above; a write that fails, or is held back, is made by a
// later cycle, which finds the status out of date still.
func (s *Scheduler) writeReservationStatus(ctx context.Context, w world) {
	existing := existingPlaceholders(w)
	now := s.cfg.Clock.Now()
	type write struct {
		key    core.Key
		uid    types.UID
		status schedv1alpha1.ReservationStatus
		change statusChange
	}
	var stale []write
	for i := range w.Workloads {
		o := &w.Workloads[i]
		r, ok := o.liveReservation()
		if !ok || r.UID == "" || o.legacy {
			continue
		}
		st := reservationStatus(o.Key, r, w.Pods, existing)
		if equalStatus(st, r.Status) {
			continue
		}
		stale = append(stale, write{o.Key, r.UID, st, changeOf(st, r.Status, r.members())})
	}
	staleKeys := make(map[core.Key]bool, len(stale))
	for _, wr := range stale {
		staleKeys[wr.key] = true
	}
	s.statusWrites.forget(now, staleKeys)
	var writes []write
	var heldBack time.Duration
	for _, wr := range stale {
		if due, wait := s.statusWrites.due(wr.key, wr.uid, now, wr.status, wr.change); !due {
			if wait > 0 && (heldBack == 0 || wait < heldBack) {
				heldBack = wait
			}
			continue
		}
		writes = append(writes, wr)
	}
	if heldBack > 0 {
		s.statusWrites.followUp.after(now, heldBack, s.trigger)
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
			s.statusWrites.wrote(wr.key, wr.uid, now, wr.status, err == nil)
			if err != nil && !apierrors.IsNotFound(err) {
				log.FromContext(ctx).V(1).Info("could not write a reservation's status; retrying on the next cycle", "workload", wr.key.String(), "error", err.Error())
			}
		}()
	}
	wg.Wait()
}
