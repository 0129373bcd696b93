/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"log/slog"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/go-logr/logr"
)

// setMemoryLimit gives the Go runtime a soft memory limit of ratio times the memory limit of the
// operator's container (its cgroup's, v1 or v2). Without one, the heap may grow to twice what is
// live before a collection (GOGC=100), and a container limited to less than that is killed by
// the kernel while most of its memory is garbage; with one, the collector works harder as the
// heap nears it. The rest of the container's limit is for what the Go heap does not hold
// (stacks, the runtime's own structures). GOMEMLIMIT in the environment wins, as does
// AUTOMEMLIMIT=off; a ratio of 0 leaves the runtime as it is; no limit, nothing to do.
//
// containerLimit reads the container's limit: memlimit.FromCgroup, but in tests.
func setMemoryLimit(log logr.Logger, ratio float64, containerLimit memlimit.Provider) {
	if ratio == 0 {
		return
	}
	_, err := memlimit.Set(memlimit.WithRatio(ratio), memlimit.WithProvider(containerLimit),
		memlimit.WithLogger(slog.New(logr.ToSlogHandler(log.WithName("memory-limit")))))
	if err != nil {
		// Not fatal: the operator runs as it would have without this.
		log.Error(err, "could not set the Go memory limit from the container's; running without one")
	}
}
