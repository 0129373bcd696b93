/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"fmt"

	"github.com/sparkop/spark-operator/sparkpod"

	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/webhook/validation"
)

// buildSchedulers enables the batch schedulers the flags ask for. The same registry serves the
// controller (admission) and the validating webhook (unknown schedulers and queues refused).
func buildSchedulers(o *options, mgr manager.Manager) (*scheduler.Registry, error) {
	schedulers := scheduler.NewRegistry(scheduler.AdmitAll{})
	if o.gangEnabled {
		enforcement, err := gang.ParseEnforcement(o.gangEnforcement)
		if err != nil {
			return nil, fmt.Errorf("--gang-enforcement: %w", err)
		}
		schedulers.Register(gang.New(gang.Config{
			Enforcement:        enforcement,
			PlaceholderImage:   o.gangPlaceholderImage,
			Options:            gang.Options{Backfill: o.gangBackfill, Preemption: o.gangPreemption},
			ReservationTimeout: o.gangReservationTimeout,
			PreemptionWait:     o.gangPreemptionWait,
			StartBacklog:       o.gangStartBacklog,
			Default:            o.defaultBatchSched == gang.Name,
			Reader:             mgr.GetAPIReader(),
			SessionDemand:      sessionDemand(o),
		}))
	}
	if o.defaultBatchSched != "" {
		if _, err := schedulers.Get(o.defaultBatchSched); err != nil {
			return nil, fmt.Errorf("--default-batch-scheduler: %w", err)
		}
	}
	return schedulers, nil
}

// sessionDemand makes SparkConnect sessions gang workloads when their controller runs.
func sessionDemand(o *options) gang.SessionDemand {
	if !o.sparkConnectEnabled {
		return nil
	}
	return sparkpod.ConnectDemand
}

// webhookSchedulers is what the validating webhook is told of the batch schedulers.
func webhookSchedulers(o *options, r *scheduler.Registry) validation.BatchSchedulers {
	return validation.BatchSchedulers{Registry: r, Default: o.defaultBatchSched}
}
