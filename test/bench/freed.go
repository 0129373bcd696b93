/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"slices"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// From capacity freed to the next driver: how soon the room a run gives back at its end is
// taken by a waiting application. A run's end is its driver pod ending, as seen in a watch
// (the stand-in deletes the executors first, and the gang scheduler gives the reservation
// back when the driver ends); the room it frees is on the nodes its pods were bound to. The
// application that takes it is the next one admitted (its Reservation first seen) at or after
// that moment onto one of those nodes, and the wait is from the end to that application's
// driver pod appearing. The scale scenario reports its p50 and p99.

// runSpan is one application's run as the benchmark saw it in its watches.
type runSpan struct {
	app string
	// admitted is when its Reservation was first seen; driver when its driver pod was; freed
	// when its driver pod was seen ended (Succeeded, Failed or deleted). Zero: not seen.
	admitted, driver, freed time.Time
	// nodes are the nodes its pods (driver and executors) were bound to.
	nodes []string
}

// freedWaits is what freedToDriver found.
type freedWaits struct {
	// toDriver and toAdmitted are, sorted, for each run whose end freed capacity while some
	// application still waited for admission (not admitted yet, or never), the time from that
	// end to the driver pod of the next application admitted at or after it onto one of the
	// nodes it freed, and to that application's admission.
	toDriver, toAdmitted []time.Duration
	// unmatched counts those ends no application followed onto their nodes: their room stayed
	// free to the end of what was seen.
	unmatched int
}

// freedToDriver matches the ends of runs to the applications that took their room (see
// freedWaits). The applications are taken as created at once, before any run ended, as the
// scale scenario creates them.
func freedToDriver(runs []runSpan) freedWaits {
	var out freedWaits
	var admissions []time.Time
	never := 0
	// byNode lists, per node, the runs admitted onto it whose driver appeared, by admission.
	byNode := map[string][]*runSpan{}
	for i := range runs {
		r := &runs[i]
		if r.admitted.IsZero() {
			never++
			continue
		}
		admissions = append(admissions, r.admitted)
		if r.driver.IsZero() {
			continue
		}
		for _, n := range r.nodes {
			byNode[n] = append(byNode[n], r)
		}
	}
	slices.SortFunc(admissions, func(a, b time.Time) int { return a.Compare(b) })
	for _, list := range byNode {
		slices.SortStableFunc(list, func(a, b *runSpan) int { return a.admitted.Compare(b.admitted) })
	}
	// waiting reports whether an application waited for admission at t.
	waiting := func(t time.Time) bool {
		return never > 0 || !admissions[len(admissions)-1].Before(t)
	}
	for i := range runs {
		r := &runs[i]
		if r.freed.IsZero() || !waiting(r.freed) {
			continue
		}
		var next *runSpan
		for _, n := range r.nodes {
			list := byNode[n]
			k := sort.Search(len(list), func(k int) bool { return !list[k].admitted.Before(r.freed) })
			if k < len(list) && (next == nil || list[k].admitted.Before(next.admitted)) {
				next = list[k]
			}
		}
		if next == nil {
			out.unmatched++
			continue
		}
		out.toDriver = append(out.toDriver, max(next.driver.Sub(r.freed), 0))
		out.toAdmitted = append(out.toAdmitted, next.admitted.Sub(r.freed))
	}
	slices.Sort(out.toDriver)
	slices.Sort(out.toAdmitted)
	return out
}

// runSpans records runSpans from the stand-in's watches of pods and Reservations.
type runSpans struct {
	mu    sync.Mutex
	byApp map[string]*runRecord
}

type runRecord struct {
	span  runSpan
	nodes map[string]bool
}

func newRunSpans() *runSpans { return &runSpans{byApp: map[string]*runRecord{}} }

func (s *runSpans) record(app string) *runRecord {
	r := s.byApp[app]
	if r == nil {
		r = &runRecord{nodes: map[string]bool{}}
		s.byApp[app] = r
	}
	return r
}

// podHandler records drivers appearing and ending, and the nodes of drivers and executors.
func (s *runSpans) podHandler() toolscache.ResourceEventHandler {
	on := func(obj any, deleted bool) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		app, role := p.Labels[v1beta2.LabelAppName], p.Labels[v1beta2.SparkRoleLabel]
		if app == "" || (role != v1beta2.SparkRoleDriver && role != v1beta2.SparkRoleExecutor) {
			return
		}
		now := time.Now()
		s.mu.Lock()
		defer s.mu.Unlock()
		r := s.record(app)
		if p.Spec.NodeName != "" {
			r.nodes[p.Spec.NodeName] = true
		}
		if role != v1beta2.SparkRoleDriver {
			return
		}
		if r.span.driver.IsZero() {
			r.span.driver = now
		}
		ended := deleted || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
		if ended && r.span.freed.IsZero() {
			r.span.freed = now
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { on(obj, false) },
		UpdateFunc: func(_, obj any) { on(obj, false) },
		DeleteFunc: func(obj any) { on(obj, true) },
	}
}

// reservationHandler records when each application's Reservation was first seen: its
// admission.
func (s *runSpans) reservationHandler() toolscache.ResourceEventHandler {
	on := func(obj any) {
		res, ok := obj.(*schedv1alpha1.Reservation)
		if !ok || res.Spec.Workload.Kind != "SparkApplication" || !res.DeletionTimestamp.IsZero() {
			return
		}
		now := time.Now()
		s.mu.Lock()
		defer s.mu.Unlock()
		if r := s.record(res.Spec.Workload.Name); r.span.admitted.IsZero() {
			r.span.admitted = now
		}
	}
	return toolscache.ResourceEventHandlerFuncs{AddFunc: on, UpdateFunc: func(_, obj any) { on(obj) }}
}

// spans returns what was recorded, one runSpan per application seen, plus one never-admitted
// span for each of apps not seen at all (they waited throughout).
func (s *runSpans) spans(apps int) []runSpan {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]runSpan, 0, max(apps, len(s.byApp)))
	for app, r := range s.byApp {
		sp := r.span
		sp.app = app
		for n := range r.nodes {
			sp.nodes = append(sp.nodes, n)
		}
		slices.Sort(sp.nodes)
		out = append(out, sp)
	}
	for len(out) < apps {
		out = append(out, runSpan{})
	}
	return out
}
