/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"errors"
	"fmt"

	"k8s.io/client-go/discovery"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/coscheduling"
	"github.com/sparkop/spark-operator/scheduler/external"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/scheduler/volcano"
	"github.com/sparkop/spark-operator/scheduler/workloadapi"
	"github.com/sparkop/spark-operator/scheduler/yunikorn"
	"github.com/sparkop/spark-operator/sparkpod"
	"github.com/sparkop/spark-operator/webhook/validation"
)

// buildSchedulers enables the batch schedulers the flags ask for. The same registry serves the
// controller (admission) and the validating webhook (unknown schedulers and queues refused).
// gang and its variants (kubernetes, kueue, Kubeflow's batch schedulers) share one gang core:
// one loop decides on the cluster's capacity, whichever of them an application names.
func buildSchedulers(o *options, mgr manager.Manager) (*scheduler.Registry, error) {
	schedulers := scheduler.NewRegistry(scheduler.AdmitAll{})
	var ext *gang.ExternalConfig
	if o.external.URL != "" {
		c, err := external.NewClient(o.external)
		if err != nil {
			return nil, fmt.Errorf("--external-scheduler-url: %w", err)
		}
		ext = &gang.ExternalConfig{Decider: c, Interval: o.externalInterval}
	}
	if d := o.defaultBatchSched; d == workloadapi.Name || d == workloadapi.NaiveName {
		return nil, fmt.Errorf("--default-batch-scheduler: %s is chosen per application (spec.batchScheduler: %s), not as the default", d, d)
	}
	served, err := workloadAPIServed(o, mgr)
	if err != nil {
		return nil, err
	}
	kubernetes := o.kubernetesEnabled && served
	if o.gangEnabled || kubernetes || o.batchSchedulerEnabled {
		enforcement, err := gang.ParseEnforcement(o.gangEnforcement)
		if err != nil {
			return nil, fmt.Errorf("--gang-enforcement: %w", err)
		}
		gs := gang.New(gang.Config{
			Enforcement:        enforcement,
			PlaceholderImage:   o.gangPlaceholderImage,
			Options:            core.Options{Backfill: o.gangBackfill, Preemption: o.gangPreemption},
			ReservationTimeout: o.gangReservationTimeout,
			PreemptionWait:     o.gangPreemptionWait,
			StartBacklog:       o.gangStartBacklog,
			Default:            o.defaultBatchSched == gang.Name,
			DefaultVariant:     o.defaultBatchSched,
			VariantsOnly:       !o.gangEnabled,
			Reader:             mgr.GetAPIReader(),
			SessionDemand:      sessionDemand(o),
			External:           ext,
		})
		if o.gangEnabled {
			schedulers.Register(gs)
		}
		if e := gs.External(); e != nil {
			schedulers.Register(e)
		}
		schedulers.Register(gs.Kueue())
		if kubernetes {
			schedulers.Register(gs.Serve(workloadapi.Placement{}))
		}
		if o.batchSchedulerEnabled {
			serveKubeflowSchedulers(o, mgr, gs, schedulers)
		}
	}
	if o.kubernetesEnabled && !served {
		schedulers.Register(scheduler.Unavailable{SchedulerName: workloadapi.Name, Why: workloadapi.Unserved})
	}
	switch {
	case o.kubernetesNaive && served:
		schedulers.Register(workloadapi.Naive{})
	case o.kubernetesNaive:
		schedulers.Register(scheduler.Unavailable{SchedulerName: workloadapi.NaiveName, Why: workloadapi.Unserved})
	}
	if o.defaultBatchSched != "" {
		if _, err := schedulers.Get(o.defaultBatchSched); err != nil {
			return nil, fmt.Errorf("--default-batch-scheduler: %w", err)
		}
	}
	return schedulers, nil
}

// serveKubeflowSchedulers enables the batch schedulers of Kubeflow's --enable-batch-scheduler,
// each behind the gang core's whole-gang admission (gang.ForeignPlacement): Volcano refuses,
// with a message saying so, the workloads that name it in a cluster without its CRDs; enabling
// it never stops the operator. YuniKorn has no CRDs.
func serveKubeflowSchedulers(o *options, mgr manager.Manager, gs *gang.Scheduler, schedulers *scheduler.Registry) {
	schedulers.Register(gs.Serve(volcano.New(mgr.GetClient(), mgr.GetAPIReader())))
	schedulers.Register(gs.Serve(yunikorn.New(mgr.GetAPIReader())))
	for _, name := range o.kubeSchedulerNames {
		schedulers.Register(gs.Serve(coscheduling.New(coscheduling.Config{
			Name:            name,
			ScheduleTimeout: o.coschedulingScheduleTimeout,
			Mapper:          mgr.GetRESTMapper(),
		})))
	}
}

// workloadAPIServed reports whether a scheduler of the Workload API is enabled (kubernetes,
// kubernetes-naive) and the cluster serves that API. A cluster without it is no reason to stop
// the operator: the scheduler is refused, and said so, and applications naming it fail saying
// why. An API server that cannot answer discovery is.
func workloadAPIServed(o *options, mgr manager.Manager) (bool, error) {
	if !o.kubernetesEnabled && !o.kubernetesNaive {
		return false, nil
	}
	d, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return false, fmt.Errorf("the Workload API batch schedulers: %w", err)
	}
	switch err := workloadapi.Check(d); {
	case err == nil:
		return true, nil
	case errors.Is(err, workloadapi.ErrUnserved):
		ctrllog.Log.WithName("setup").Error(err, "the Workload API batch schedulers are not enabled; applications naming them fail with this message")
		return false, nil
	default:
		return false, fmt.Errorf("the Workload API batch schedulers: %w", err)
	}
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

// checkExternalScheduler refuses external-scheduler flags that cannot work.
func checkExternalScheduler(o *options) error {
	if o.external.URL == "" {
		return nil
	}
	if !o.gangEnabled {
		return fmt.Errorf("--external-scheduler-url needs --enable-gang-scheduler: the external scheduler's applications wait in the gang scheduler's queues")
	}
	if o.defaultBatchSched == gang.ExternalName {
		return fmt.Errorf("--default-batch-scheduler: %s cannot be the default yet; applications name it in spec.batchScheduler", gang.ExternalName)
	}
	if _, err := external.NewClient(o.external); err != nil {
		return fmt.Errorf("--external-scheduler-url: %w", err)
	}
	return nil
}
