/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/external"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/sparkpod"
)

// ExternalName is the value of spec.batchScheduler that has an external scheduler decide, through
// the gang scheduler's queues and reservations (core.ScheduleExternal).
const ExternalName = "external"

// ExternalDecider answers the external scheduler's requests: external.Client.
type ExternalDecider interface {
	Decide(ctx context.Context, req *external.Request) (*external.Response, error)
}

// ExternalConfig enables spec.batchScheduler: external.
type ExternalConfig struct {
	Decider ExternalDecider
	// Interval is how often a cycle asks again while its workloads wait, the cluster
	// unchanged: the external scheduler may decide by the clock (an aging rule, a time window).
	// Default 5 seconds.
	Interval time.Duration
}

// External is the scheduler.Interface of spec.batchScheduler: external, served by s (its cycle
// loop, queues and reservations) as a variant whose runs are placed as gang's are: register it
// beside s. Nil when s was made without an ExternalConfig.
func (s *Scheduler) External() scheduler.Interface {
	if s.cfg.External == nil {
		return nil
	}
	return s.Serve(externalPlacement{enforcement: s.cfg.Enforcement})
}

// externalPlacement places the runs the external scheduler admitted as gang places its own: the
// driver on its planned node, each executor gated until released to its planned node (and the
// driver too, swapped in for its placeholder, with placeholders).
type externalPlacement struct{ enforcement Enforcement }

func (externalPlacement) Name() string { return ExternalName }

func (p externalPlacement) Pods(_ scheduler.Workload, r Reservation) (sparkpod.RoleScheduling, error) {
	return r.Pods(p.enforcement), nil
}

func (externalPlacement) placedLikeGang() {}

// isExternal reports whether app's admission is the external scheduler's.
func isExternal(app *v1beta2.SparkApplication) bool {
	b := app.Spec.BatchScheduler
	return b != nil && *b == ExternalName
}

// externalCycles is the loop's side of the external scheduler: the request count, whether its
// workloads wait (so the loop asks again on its interval), and the refusals already told.
type externalCycles struct {
	cycle   atomic.Uint64
	waiting atomic.Bool
	mu      sync.Mutex
	told    map[core.Key]string // the refusal last told in an event, per workload
}

// schedule decides the cycle: by the core alone, or, when workloads of the external scheduler
// wait, by the core and then the external scheduler (ScheduleExternal). It returns how long the
// external scheduler took to answer too.
func (s *Scheduler) schedule(ctx context.Context, snap core.Snapshot, objects map[core.Key]*object) (core.Outcome, time.Duration) {
	outside := func(k core.Key) bool { o := objects[k]; return o != nil && o.external }
	some := false
	if s.cfg.External != nil {
		for k := range objects {
			if outside(k) {
				some = true
				break
			}
		}
	}
	if !some {
		s.ext.waiting.Store(false)
		return core.Schedule(snap, s.cfg.Options), 0
	}
	var took time.Duration
	out, report := core.ScheduleExternal(snap, s.cfg.Options, outside, func(req *external.Request) (*external.Response, error) {
		req.Cycle, req.Time = s.ext.cycle.Add(1), s.cfg.Clock.Now().UTC()
		start := time.Now()
		defer func() { took = time.Since(start) }()
		return s.cfg.External.Decider.Decide(ctx, req)
	})
	if report.Asked {
		externalRequestSeconds.Observe(took.Seconds())
	}
	s.tellExternal(ctx, objects, report)
	waiting := false
	for k := range out.Waiting {
		waiting = waiting || outside(k)
	}
	s.ext.waiting.Store(waiting)
	return out, took
}

// tellExternal logs what the external scheduler's answer came to, and tells each application
// whose admission was refused in a warning event, once per distinct refusal.
func (s *Scheduler) tellExternal(ctx context.Context, objects map[core.Key]*object, r core.ExternalReport) {
	logger := log.FromContext(ctx)
	if r.Err != nil {
		externalAnswersTotal.WithLabelValues("failed").Inc()
		logger.Error(r.Err, "the external scheduler gave no usable answer; its applications stay queued")
		return
	}
	if !r.Asked {
		return
	}
	externalAnswersTotal.WithLabelValues("answered").Inc()
	externalRefusedTotal.Add(float64(len(r.Refused)))
	s.ext.mu.Lock()
	defer s.ext.mu.Unlock()
	if s.ext.told == nil {
		s.ext.told = map[core.Key]string{}
	}
	for k, why := range r.Refused {
		logger.Info("refused the external scheduler's admission", "workload", k.String(), "why", why)
		o := objects[k]
		if o == nil || s.recorder == nil || s.ext.told[k] == why {
			continue
		}
		s.ext.told[k] = why
		s.recorder.Eventf(o.Object, nil, corev1.EventTypeWarning, "ExternalAdmissionRefused", "Admit",
			fmt.Sprintf("the external scheduler's admission was refused: %s", why))
	}
	for k := range s.ext.told {
		if objects[k] == nil {
			delete(s.ext.told, k)
		}
	}
}
