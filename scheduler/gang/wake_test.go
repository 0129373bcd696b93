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
	"time"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
)

// TestLetStartWokenAgain: a run let start and woken, which the cache still shows waiting to
// start (the pool's reading of the wake did not create its driver), is woken again once owedFor
// has passed, and again each owedFor after: on an idle cluster no other event would offer it.
// Before, the run's entry in l.let was renewed by every cycle that let it start, and it was
// never woken again.
func TestLetStartWokenAgain(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := app("l", "s1", v1beta2.ApplicationStateNew, 4, &Reservation{SubmissionID: "s1", Queue: "q", Driver: "n",
		Executors: map[string]int32{"n": 4}, Admitted: t0})
	o := applicationObject(&a)
	l := &loop{s: New(Config{}), let: map[boundMember]time.Time{}}
	cycle := func(at time.Time) bool {
		w := world{Workloads: []object{o}}
		r := &round{w: w, now: at, replan: map[core.Key]string{}, startNow: map[core.Key]bool{},
			objects: map[core.Key]*object{o.Key: &w.Workloads[0]}}
		r.gate = newStartGate(w, core.Snapshot{}, at, 0, 0, l.let)
		l.startAdmittedBefore(r)
		l.replanHeld(context.Background(), r)
		return len(r.wake) > 0
	}
	for _, tt := range []struct {
		after time.Duration
		woken bool
	}{
		{0, true},
		{time.Second, false},
		{owedFor, true},
		{owedFor + time.Second, false},
		{2*owedFor + time.Second, true},
		{4 * owedFor, true},
	} {
		if got := cycle(t0.Add(tt.after)); got != tt.woken {
			t.Errorf("a cycle at +%s: woken %t, want %t", tt.after, got, tt.woken)
		}
	}
}
