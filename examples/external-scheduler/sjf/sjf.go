/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package sjf is an example external scheduler for the operator's spec.batchScheduler:
// external: shortest job first. It admits the waiting applications that ask for the least CPU
// first (then the oldest), each where it fits first, as long as nodes and queue quotas have room,
// and says why the others wait. Copy it as the start of your own: the operator checks every
// admission again, so a bug here can delay applications but never overcommit a node or a quota.
package sjf

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sparkop/spark-operator/scheduler/external"
)

// Handler serves the external-scheduler protocol on POST.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST a scheduling request", http.StatusMethodNotAllowed)
			return
		}
		var req external.Request
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&req); err != nil {
			http.Error(w, "not a scheduling request: "+err.Error(), http.StatusBadRequest)
			return
		}
		if req.APIVersion != external.APIVersion {
			http.Error(w, fmt.Sprintf("speaks %s, not %s", external.APIVersion, req.APIVersion), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(Decide(&req))
	})
}

// Decide answers one request.
func Decide(req *external.Request) external.Response {
	out := external.Response{APIVersion: external.APIVersion}
	free := map[string]corev1.ResourceList{}
	for _, n := range req.Nodes {
		if !n.Unschedulable {
			free[n.Name] = n.Free.DeepCopy()
		}
	}
	queues := map[string]*external.Queue{}
	for i := range req.Queues {
		q := req.Queues[i]
		q.Used = q.Used.DeepCopy()
		if q.Used == nil {
			q.Used = corev1.ResourceList{}
		}
		queues[q.Name] = &q
	}
	pending := append([]external.Pending(nil), req.Pending...)
	sort.SliceStable(pending, func(i, j int) bool {
		a, b := cpuOf(pending[i]), cpuOf(pending[j])
		if a != b {
			return a < b
		}
		return pending[i].Created.Before(pending[j].Created)
	})
	for _, p := range pending {
		need := gangTotal(p)
		if q := overQuota(queues, p.Queue, need); q != "" {
			out.Waiting = append(out.Waiting, external.Waiting{Workload: p.Workload, Reason: "shortest job first: queue " + q + " has no room for it"})
			continue
		}
		placement, ok := place(free, p)
		if !ok {
			out.Waiting = append(out.Waiting, external.Waiting{Workload: p.Workload, Reason: "shortest job first: no room for its gang now"})
			continue
		}
		for q := queues[p.Queue]; q != nil; q = queues[q.Parent] {
			addTo(q.Used, need, 1)
		}
		out.Admit = append(out.Admit, external.Admission{Workload: p.Workload, Placement: placement})
	}
	return out
}

// place puts the driver, then the executors, first-fit on the nodes each may use, taking what
// it uses from free; it takes nothing when the gang does not fit.
func place(free map[string]corev1.ResourceList, p external.Pending) (external.Placement, bool) {
	trial := map[string]corev1.ResourceList{}
	room := func(node string) corev1.ResourceList {
		if trial[node] == nil {
			trial[node] = free[node].DeepCopy()
		}
		return trial[node]
	}
	var out external.Placement
	for _, n := range p.Driver.EligibleNodes {
		if free[n] != nil && fits(room(n), p.Driver.Requests) {
			addTo(room(n), p.Driver.Requests, -1)
			out.Driver = n
			break
		}
	}
	if out.Driver == "" {
		return out, false
	}
	left := p.Executors.Count
	for _, n := range p.Executors.EligibleNodes {
		for left > 0 && free[n] != nil && fits(room(n), p.Executors.Requests) {
			addTo(room(n), p.Executors.Requests, -1)
			if out.Executors == nil {
				out.Executors = map[string]int32{}
			}
			out.Executors[n]++
			left--
		}
	}
	if left > 0 {
		return out, false
	}
	for n, l := range trial {
		free[n] = l
	}
	return out, true
}

func fits(free, req corev1.ResourceList) bool {
	for name, q := range req {
		if f, ok := free[name]; !ok || f.Cmp(q) < 0 {
			return false
		}
	}
	return true
}

// overQuota names the first queue from name up that has no room for need, or "".
func overQuota(queues map[string]*external.Queue, name string, need corev1.ResourceList) string {
	for q := queues[name]; q != nil; q = queues[q.Parent] {
		for res, limit := range q.Quota {
			used := q.Used[res]
			used.Add(need[res])
			if used.Cmp(limit) > 0 {
				return q.Name
			}
		}
	}
	return ""
}

func gangTotal(p external.Pending) corev1.ResourceList {
	total := corev1.ResourceList{}
	addTo(total, p.Driver.Requests, int64(p.Driver.Count))
	addTo(total, p.Executors.Requests, int64(p.Executors.Count))
	return total
}

func cpuOf(p external.Pending) int64 {
	q := gangTotal(p)[corev1.ResourceCPU]
	return q.MilliValue()
}

// addTo adds times × l into into (times may be negative).
func addTo(into, l corev1.ResourceList, times int64) {
	for name, q := range l {
		sum, ok := into[name]
		if !ok {
			sum = resource.Quantity{Format: q.Format}
		}
		for range max(times, -times) {
			if times < 0 {
				sum.Sub(q)
			} else {
				sum.Add(q)
			}
		}
		into[name] = sum
	}
}
