/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"math"
	"os"
	"runtime/debug"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/go-logr/logr"
)

func TestSetMemoryLimit(t *testing.T) {
	const gib = 1 << 30
	const unset = math.MaxInt64 // the runtime's limit when none is set
	tests := []struct {
		name      string
		ratio     float64
		env       map[string]string
		container memlimit.Provider
		want      int64
	}{
		{name: "a container limit: the ratio of it", ratio: 0.9, container: memlimit.Limit(gib), want: gib * 9 / 10},
		{name: "ratio 0: none", ratio: 0, container: memlimit.Limit(gib), want: unset},
		{name: "no container limit: none", ratio: 0.9, container: func() (uint64, error) { return 0, memlimit.ErrNoLimit }, want: unset},
		{name: "GOMEMLIMIT given: left to it", ratio: 0.9, env: map[string]string{"GOMEMLIMIT": "512MiB"}, container: memlimit.Limit(gib), want: unset},
		{name: "AUTOMEMLIMIT=off: none", ratio: 0.9, env: map[string]string{"AUTOMEMLIMIT": "off"}, container: memlimit.Limit(gib), want: unset},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, name := range []string{"GOMEMLIMIT", "AUTOMEMLIMIT"} {
				t.Setenv(name, "") // restored after the test
				if v, ok := tt.env[name]; ok {
					os.Setenv(name, v)
				} else {
					os.Unsetenv(name)
				}
			}
			before := debug.SetMemoryLimit(unset)
			t.Cleanup(func() { debug.SetMemoryLimit(before) })
			setMemoryLimit(logr.Discard(), tt.ratio, tt.container)
			if got := debug.SetMemoryLimit(-1); got != tt.want {
				t.Errorf("memory limit = %d, want %d", got, tt.want)
			}
		})
	}
}
