/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// startedApp is an application whose driver runs and whose job has not ended: what it still
// needs for its gang to be whole.
type startedApp struct {
	name string
	// since is when its driver was first seen running.
	since time.Time
	// missing is how many of its executors are not bound to a node yet (made or not), each
	// requesting executorCPU millicores.
	missing     int
	executorCPU int64
}

// beyondFit returns the started applications whose missing executors cannot all be placed on
// the nodes' free CPU: the drivers a scheduler started beyond what the nodes fit. Free CPU is
// each node's allocatable less used, what its live pods request (placeholders excepted: their
// room is held for the applications' executors; see tally). The applications are placed in
// the order their drivers started, each executor on the first node with room for it; an
// application that does not fit takes no room, so one started later may still fit in what it
// leaves.
func beyondFit(nodes []corev1.Node, used map[string]int64, started []startedApp) []string {
	free := freeCPU(nodes, used)
	order := slices.Clone(started)
	slices.SortFunc(order, func(a, b startedApp) int {
		return cmp.Or(a.since.Compare(b.since), cmp.Compare(a.name, b.name))
	})
	var beyond []string
	for _, a := range order {
		if !place(free, a.missing, a.executorCPU) {
			beyond = append(beyond, a.name)
		}
	}
	return beyond
}

// freeCPU is each node's allocatable CPU less used[node], in millicores.
func freeCPU(nodes []corev1.Node, used map[string]int64) []int64 {
	free := make([]int64, len(nodes))
	for i := range nodes {
		q := nodes[i].Status.Allocatable[corev1.ResourceCPU]
		free[i] = q.MilliValue() - used[nodes[i].Name]
	}
	return free
}

// place takes n pods of cpu millicores from free, first fit over the nodes in order, and
// reports whether all fit; when not, free is left as it was.
func place(free []int64, n int, cpu int64) bool {
	if n <= 0 {
		return true
	}
	taken := make([]int64, len(free))
	for i := range free {
		for n > 0 && free[i]-taken[i] >= cpu {
			taken[i] += cpu
			n--
		}
	}
	if n > 0 {
		return false
	}
	for i := range free {
		free[i] -= taken[i]
	}
	return true
}

// beyondSight says what a step saw of application name when it first found it beyond fit: when
// (seconds into the run), its executors not bound and their size, how long its driver had run,
// and the nodes' free CPU then (in all, and the most on one node), to trace it in the logs.
func (j *jobs) beyondSight(now time.Time, name string, nodes []corev1.Node, t *cpuTally) string {
	var free, most int64
	for _, f := range freeCPU(nodes, t.nodeUsed) {
		free += max(f, 0)
		most = max(most, f)
	}
	for _, a := range t.started {
		if a.name == name {
			return fmt.Sprintf("at %.1fs: %d executors of %dm not bound, driver running %.1fs; free %dm in all, at most %dm on a node",
				j.seconds, a.missing, a.executorCPU, now.Sub(a.since).Seconds(), free, most)
		}
	}
	return fmt.Sprintf("at %.1fs", j.seconds)
}
