/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package scheduledsparkapplication

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRunName(t *testing.T) {
	tests := []struct {
		name      string
		scheduled string
		at        string
		want      string
	}{
		{name: "short", scheduled: "nightly", at: "2026-03-01T10:05:00Z", want: "nightly-1772359500"},
		{
			name:      "shortened to 63 characters",
			scheduled: strings.Repeat("a", 60),
			at:        "2026-03-01T10:05:00Z",
			want:      strings.Repeat("a", 43) + "-11ee3912-1772359500",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RunName(tt.scheduled, at(t, tt.at))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("RunName mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func at(t *testing.T, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}
