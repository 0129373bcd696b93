/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"github.com/sparkop/spark-operator/scheduler/gang/core"
)

// shownReasons is what each held workload shows as its reason: what this process last handed
// it (reported), else what its status says (written by an earlier operator, say, before a
// restart): an application's Queued condition, a session's ServerPodReady condition with
// reason Queued. A reason read from a status has its message only, no kind.
func shownReasons(workloads []object, reported map[core.Key]core.Reason) map[core.Key]core.Reason {
	shown := make(map[core.Key]core.Reason, len(workloads))
	for i := range workloads {
		o := &workloads[i]
		if why, ok := reported[o.Key]; ok {
			shown[o.Key] = why
			continue
		}
		if o.showing {
			shown[o.Key] = core.Reason{Message: o.shown}
		}
	}
	return shown
}
