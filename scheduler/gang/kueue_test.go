/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
)

// TestKueue: the applications Kueue queues that name default, or none while gang is the
// default, are the core's under scheduler.KueueName: admitted in its default queue (Kueue did
// the queueing), placed as gang's (the executors gated), validated only for Kueue's label;
// one naming gang stays gang's, and one without Kueue's label is not the Kueue variant's.
func TestKueue(t *testing.T) {
	s := New(Config{Default: true})
	v := s.Kueue()
	s.held = map[core.Key]string{}
	labelled := func(name string, batchScheduler *string) v1beta2.SparkApplication {
		a := app(name, "s1", v1beta2.ApplicationStateResuming, 2, &Reservation{SubmissionID: "s1", Queue: "default", Driver: "n1", Executors: map[string]int32{"n2": 2}})
		a.Spec.BatchScheduler = batchScheduler
		a.Labels = map[string]string{scheduler.LabelKueueQueueName: "lq"}
		a.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To("team-a")}
		return a
	}
	for _, tt := range []struct {
		name string
		app  v1beta2.SparkApplication
		want string
	}{
		{name: "names none, gang the default", app: labelled("a", nil), want: scheduler.KueueName},
		{name: "names default", app: labelled("b", ptr.To(scheduler.DefaultName)), want: scheduler.KueueName},
		{name: "names gang", app: labelled("c", ptr.To(Name)), want: Name},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.schedulerOf(&tt.app); got != tt.want || !s.isGang(&tt.app) {
				t.Errorf("scheduled as %q (the core's: %v), want %q", got, s.isGang(&tt.app), tt.want)
			}
		})
	}

	a := labelled("a", nil)
	w := scheduler.ApplicationWorkload(&a)
	if !s.foreignQueues[scheduler.KueueName] || s.ownPlacement[scheduler.KueueName] {
		t.Errorf("foreign queue %v, own placement %v: want the core's default queue (not batchSchedulerOptions') and gang's placement",
			s.foreignQueues[scheduler.KueueName], s.ownPlacement[scheduler.KueueName])
	}
	d, err := v.Admit(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Admit || len(d.Pods.Executor.SchedulingGates) == 0 {
		t.Errorf("decision %+v: want admitted, the executors gated as gang's", d)
	}
	if v.(scheduler.Queueing).QueuesWorkloads() {
		t.Error("the Kueue variant queues: its applications would be refused as queued twice")
	}
	validate := v.(scheduler.ApplicationValidator).ValidateApplication
	if errs := validate(context.Background(), &a); len(errs) != 0 {
		t.Errorf("a labelled application refused: %v", errs)
	}
	unlabelled := a.DeepCopy()
	unlabelled.Labels = nil
	unlabelled.Spec.BatchScheduler = ptr.To(scheduler.KueueName)
	errs := validate(context.Background(), unlabelled)
	if diff := cmp.Diff(`spec.batchScheduler: Invalid value: "kueue": kueue is for applications Kueue queues: label the application kueue.x-k8s.io/queue-name: <LocalQueue>`, errs.ToAggregate().Error()); diff != "" {
		t.Errorf("an unlabelled application naming kueue (-want +got):\n%s", diff)
	}
	unlabelled.Spec.BatchScheduler = nil
	if got := s.schedulerOf(unlabelled); got != Name {
		t.Errorf("an unlabelled application naming none is scheduled as %q, want gang", got)
	}
}
