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
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
)

// Enforcement is how the gang scheduler keeps reserved capacity (--gang-enforcement).
type Enforcement string

const (
	// EnforcementAdvisory keeps nothing from pods it did not admit.
	EnforcementAdvisory Enforcement = schedv1alpha1.EnforcementAdvisory
	// EnforcementPlaceholders holds room with placeholder pods.
	EnforcementPlaceholders Enforcement = schedv1alpha1.EnforcementPlaceholders
	// EnforcementPlugin leaves holding room to the scheduler that places pods: spark-scheduler
	// (cmd/spark-scheduler), kube-scheduler with the SparkReservations plugin, which reads the
	// Reservation objects. The gang scheduler itself then acts as with advisory: it writes
	// reservations, gates executors and lets them go onto their planned nodes.
	EnforcementPlugin Enforcement = schedv1alpha1.EnforcementPlugin
)

// ParseEnforcement reads an enforcement's name.
func ParseEnforcement(s string) (Enforcement, error) {
	switch e := Enforcement(s); e {
	case EnforcementAdvisory, EnforcementPlaceholders, EnforcementPlugin:
		return e, nil
	}
	return "", fmt.Errorf("unknown enforcement %q; use %q, %q or %q", s, EnforcementPlaceholders, EnforcementPlugin, EnforcementAdvisory)
}

// enforcer is what one enforcement mode does in the cycle: the steps at which the modes
// differ, each implemented once per mode. What holds the room itself (placeholders.go,
// plugin.go) stays with its mode.
type enforcer interface {
	// beforeDecide runs before the cycle stores anything.
	beforeDecide(ctx context.Context, l *loop, w world)
	// holdStarts holds in r's start gate the workloads admitted earlier whose room is not
	// held yet, and asks for a later cycle when that may change.
	holdStarts(l *loop, r *round)
	// heldAtAdmission is why a workload admitted by this cycle may not start at once ("": it
	// may, as far as the start gate allows).
	heldAtAdmission() string
	// storeRoom is the free room the cycle's reservation writes share to make what holds
	// their room (nil: they make nothing).
	storeRoom(w world) *sharedRoom
	// reconcile brings what holds room up to date with the reservations, once the cycle's
	// are stored; what fails is logged and tried again by the next cycle.
	reconcile(ctx context.Context, l *loop, r *round)
}

// enforcer is the loop's enforcement mode's.
func (l *loop) enforcer() enforcer {
	switch l.s.cfg.Enforcement {
	case EnforcementPlaceholders:
		return placeholderEnforcer{}
	case EnforcementPlugin:
		return pluginEnforcer{}
	}
	return advisoryEnforcer{}
}

// advisoryEnforcer holds nothing: an admitted workload starts as soon as the start gate lets
// it.
type advisoryEnforcer struct{}

func (advisoryEnforcer) beforeDecide(context.Context, *loop, world) {}
func (advisoryEnforcer) holdStarts(*loop, *round)                   {}
func (advisoryEnforcer) heldAtAdmission() string                    { return "" }
func (advisoryEnforcer) storeRoom(world) *sharedRoom                { return nil }
func (advisoryEnforcer) reconcile(context.Context, *loop, *round)   {}

// placeholderEnforcer holds room with placeholder pods (placeholders.go): a workload starts once
// its placeholders hold its nodes.
type placeholderEnforcer struct{}

func (placeholderEnforcer) beforeDecide(context.Context, *loop, world) {}

func (placeholderEnforcer) holdStarts(l *loop, r *round) {
	if recheck := r.gate.holdForPlaceholders(r.w, r.opts); recheck > 0 {
		time.AfterFunc(recheck, l.s.trigger)
	}
}

// heldAtAdmission: not before its placeholders, created as it is stored, hold its room.
func (placeholderEnforcer) heldAtAdmission() string { return placeholderReason }

func (placeholderEnforcer) storeRoom(w world) *sharedRoom {
	return &sharedRoom{room: podRoom(w)}
}

func (placeholderEnforcer) reconcile(ctx context.Context, l *loop, r *round) {
	logPlaceholderError(ctx, l.s.reconcilePlaceholders(ctx, r.w, r.opts))
}

// pluginEnforcer leaves holding room to the pod scheduler's plug-in, which reads the
// Reservation objects (plugin.go): a workload starts once the plug-in says it holds its room.
type pluginEnforcer struct{}

// beforeDecide deletes, before any reservation is stored, those that hold nothing here any
// more, so that the pod scheduler lets go of their room first. A deletion that failed is tried
// again by the next cycle.
func (pluginEnforcer) beforeDecide(ctx context.Context, l *loop, w world) {
	if err := l.dropStale(ctx, w); err != nil {
		log.FromContext(ctx).Error(err, "deleting stale reservations")
	}
}

func (pluginEnforcer) holdStarts(l *loop, r *round) {
	recheck, unheld := r.gate.holdForPlugin(r.w, r.snap, r.now)
	if recheck > 0 {
		time.AfterFunc(recheck, l.s.trigger)
	}
	l.warnUnheld(r.objects, unheld)
}

// heldAtAdmission: not before the pod scheduler holds its room, a later cycle.
func (pluginEnforcer) heldAtAdmission() string { return pluginReason }

func (pluginEnforcer) storeRoom(world) *sharedRoom { return nil }

// reconcile: the pod scheduler's plug-in holds the room, from the Reservation objects.
func (pluginEnforcer) reconcile(context.Context, *loop, *round) {}
