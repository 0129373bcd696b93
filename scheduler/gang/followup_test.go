/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"slices"
	"testing"
	"time"
)

// TestFollowUp: a cycle asked for sooner than the one pending is asked for too; one
// asked for later is not; once the soonest came, any is (the one pending beside it forgotten: a
// cycle more at worst).
func TestFollowUp(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var p followUp
	var asked []time.Duration
	var come []func()
	p.afterFunc = func(d time.Duration, f func()) { asked = append(asked, d); come = append(come, f) }
	p.after(now, 30*time.Second, func() {})
	p.after(now, 40*time.Second, func() {})
	p.after(now, 5*time.Second, func() {})
	p.after(now.Add(time.Second), 10*time.Second, func() {})
	come[1]() // the 5 s one comes
	p.after(now.Add(5*time.Second), 30*time.Second, func() {})
	if want := []time.Duration{30 * time.Second, 5 * time.Second, 30 * time.Second}; !slices.Equal(asked, want) {
		t.Errorf("asked for %v, want %v", asked, want)
	}
}
