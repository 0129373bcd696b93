/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import "k8s.io/apimachinery/pkg/types"

// Schedule runs one admission cycle over a snapshot. Pure and deterministic.
//
// PLACEHOLDER (gang-core, to be replaced within the hour): every waiting workload is reported
// as waiting with reason "not scheduled yet"; nothing is admitted.
func Schedule(snap Snapshot, opts Options) Outcome {
	out := Outcome{
		Waiting:  map[types.NamespacedName]string{},
		Rejected: map[types.NamespacedName]string{},
		Order:    map[string][]types.NamespacedName{},
	}
	for _, w := range snap.Workloads {
		if w.Admission != nil {
			continue
		}
		out.Waiting[w.Key] = "not scheduled yet"
		out.Order[w.Queue] = append(out.Order[w.Queue], w.Key)
	}
	return out
}
