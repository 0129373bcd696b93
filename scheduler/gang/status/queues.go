/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package status computes what the gang scheduler shows users of its decisions: each Queue's
// status after a cycle (Queues), and which held applications' shown reasons to refresh, and
// when, so that every reason is current without a storm of status writes (ReasonRefresh).
//
// It owns those rules; it must not write to the cluster, read a clock or decide admission: the
// gang package's writers call it with a cycle's outcome and the time, and write what it says.
package status

import (
	corev1 "k8s.io/api/core/v1"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/sparkpod"
)

// Queues computes each queue's status from a cycle: what its admitted applications
// request, how many are admitted (those the cycle preempted no longer) and waiting, and the
// first waiting ones in order.
func Queues(snap core.Snapshot, out core.Outcome) map[string]schedv1alpha1.QueueStatus {
	st := map[string]schedv1alpha1.QueueStatus{}
	for name := range snap.Queues {
		st[name] = schedv1alpha1.QueueStatus{}
	}
	admitted := map[string]corev1.ResourceList{}
	count := func(queue string, demand corev1.ResourceList) {
		if _, ok := st[queue]; !ok {
			return
		}
		q := st[queue]
		q.AdmittedApplications++
		if admitted[queue] == nil {
			admitted[queue] = corev1.ResourceList{}
		}
		sparkpod.AddTimes(admitted[queue], demand, 1)
		st[queue] = q
	}
	demands := map[string]corev1.ResourceList{}
	evicted := map[core.Key]bool{}
	for _, p := range out.Preempted {
		evicted[p.Key] = true
	}
	for _, w := range snap.Workloads {
		demands[w.Key.String()] = w.Demand.Total()
		if w.Admission != nil && !evicted[w.Key] {
			count(w.Admission.Queue, demands[w.Key.String()])
		}
	}
	for _, a := range out.Admitted {
		count(a.Admission.Queue, demands[a.Key.String()])
	}
	for name, keys := range out.Order {
		q, ok := st[name]
		if !ok {
			continue
		}
		q.PendingApplications = int32(len(keys))
		for i, k := range keys {
			if i == maxPendingListed {
				break
			}
			q.Pending = append(q.Pending, k.String())
		}
		st[name] = q
	}
	for name, q := range st {
		q.Admitted = admitted[name]
		if u, ok := out.Usage[name]; ok {
			q.Admitted = u
		}
		if len(q.Admitted) == 0 {
			q.Admitted = nil
		}
		st[name] = q
	}
	return st
}

// maxPendingListed is how many waiting applications a queue's status lists by name.
const maxPendingListed = 20
