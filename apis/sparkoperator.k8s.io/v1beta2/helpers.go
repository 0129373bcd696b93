/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package v1beta2

import (
	"math"
	"time"
)

// IsFinished reports whether the application has reached a terminal state
// (COMPLETED or FAILED).
func (a *SparkApplication) IsFinished() bool {
	return a.Status.AppState.State.IsTerminal()
}

// IsSuspended reports whether spec.suspend is set to true.
func (a *SparkApplication) IsSuspended() bool {
	return a.Spec.Suspend != nil && *a.Spec.Suspend
}

// DynamicAllocationEnabled reports whether spec.dynamicAllocation.enabled is true.
func (a *SparkApplication) DynamicAllocationEnabled() bool {
	return a.Spec.DynamicAllocation != nil && a.Spec.DynamicAllocation.Enabled
}

// ExpirationTime returns when a finished application's time to live runs out.
// The second result is false when the application has not finished, has no
// termination time recorded, or has no spec.timeToLiveSeconds.
func (a *SparkApplication) ExpirationTime() (time.Time, bool) {
	if !a.IsFinished() || a.Spec.TimeToLiveSeconds == nil || a.Status.TerminationTime.IsZero() {
		return time.Time{}, false
	}
	return a.Status.TerminationTime.Add(Seconds(*a.Spec.TimeToLiveSeconds)), true
}

// Seconds converts a count of seconds from the spec into a duration. Counts beyond what a
// duration holds (about 292 years) saturate instead of overflowing, so an enormous time to
// live or retry interval means "practically never" rather than wrapping to a short or
// negative one. Negative counts, which the CRD refuses, are treated as zero.
func Seconds(s int64) time.Duration {
	switch {
	case s <= 0:
		return 0
	case s > math.MaxInt64/int64(time.Second):
		return math.MaxInt64
	}
	return time.Duration(s) * time.Second
}

// IsSuspended reports whether spec.suspend is set to true.
func (s *ScheduledSparkApplication) IsSuspended() bool {
	return s.Spec.Suspend != nil && *s.Spec.Suspend
}
