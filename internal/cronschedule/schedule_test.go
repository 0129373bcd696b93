/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package cronschedule

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func mustParse(t *testing.T, layout string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339, layout)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestScheduleDue(t *testing.T) {
	tests := []struct {
		name     string
		schedule string
		timeZone string
		since    string
		now      string
		wantDue  string // empty: nothing due
		wantNext string
	}{
		{
			name:     "not yet due",
			schedule: "*/5 * * * *",
			timeZone: "UTC",
			since:    "2026-03-01T10:00:30Z",
			now:      "2026-03-01T10:04:59Z",
			wantNext: "2026-03-01T10:05:00Z",
		},
		{
			name:     "due exactly at the scheduled time",
			schedule: "*/5 * * * *",
			timeZone: "UTC",
			since:    "2026-03-01T10:00:30Z",
			now:      "2026-03-01T10:05:00Z",
			wantDue:  "2026-03-01T10:05:00Z",
			wantNext: "2026-03-01T10:10:00Z",
		},
		{
			name:     "last run time itself is not due again",
			schedule: "*/5 * * * *",
			timeZone: "UTC",
			since:    "2026-03-01T10:05:00Z",
			now:      "2026-03-01T10:05:00Z",
			wantNext: "2026-03-01T10:10:00Z",
		},
		{
			name:     "missed runs give only the most recent",
			schedule: "*/5 * * * *",
			timeZone: "UTC",
			since:    "2026-03-01T10:05:00Z",
			now:      "2026-03-01T13:07:12Z",
			wantDue:  "2026-03-01T13:05:00Z",
			wantNext: "2026-03-01T13:10:00Z",
		},
		{
			name:     "every minute after a year of downtime",
			schedule: "* * * * *",
			timeZone: "UTC",
			since:    "2025-01-01T00:00:00Z",
			now:      "2026-03-01T13:07:12Z",
			wantDue:  "2026-03-01T13:07:00Z",
			wantNext: "2026-03-01T13:08:00Z",
		},
		{
			name:     "rare schedule missed for years",
			schedule: "0 0 29 2 *",
			timeZone: "UTC",
			since:    "2019-01-01T00:00:00Z",
			now:      "2026-03-01T00:00:00Z",
			wantDue:  "2024-02-29T00:00:00Z",
			wantNext: "2028-02-29T00:00:00Z",
		},
		{
			name:     "hourly descriptor",
			schedule: "@hourly",
			timeZone: "UTC",
			since:    "2026-03-01T10:20:00Z",
			now:      "2026-03-01T11:00:00Z",
			wantDue:  "2026-03-01T11:00:00Z",
			wantNext: "2026-03-01T12:00:00Z",
		},
		{
			name:     "every counts from the last run",
			schedule: "@every 5m",
			since:    "2026-03-01T10:00:30Z",
			now:      "2026-03-01T10:04:00Z",
			wantNext: "2026-03-01T10:05:30Z",
		},
		{
			name:     "every keeps its phase over missed runs",
			schedule: "@every 5m",
			since:    "2026-03-01T10:00:30Z",
			now:      "2026-03-01T10:21:00Z",
			wantDue:  "2026-03-01T10:20:30Z",
			wantNext: "2026-03-01T10:25:30Z",
		},
		{
			name:     "time zone shifts a daily run",
			schedule: "0 9 * * *",
			timeZone: "Europe/Paris",
			since:    "2026-01-10T00:00:00Z",
			now:      "2026-01-10T08:00:00Z", // 09:00 in Paris (UTC+1)
			wantDue:  "2026-01-10T08:00:00Z",
			wantNext: "2026-01-11T08:00:00Z",
		},
		{
			name:     "time zone follows daylight saving",
			schedule: "0 9 * * *",
			timeZone: "Europe/Paris",
			since:    "2026-07-10T00:00:00Z",
			now:      "2026-07-10T07:30:00Z", // 09:30 in Paris (UTC+2)
			wantDue:  "2026-07-10T07:00:00Z",
			wantNext: "2026-07-11T07:00:00Z",
		},
		{
			name:     "CRON_TZ prefix",
			schedule: "CRON_TZ=America/New_York 0 9 * * *",
			since:    "2026-01-10T00:00:00Z",
			now:      "2026-01-10T14:00:00Z", // 09:00 in New York (UTC-5)
			wantDue:  "2026-01-10T14:00:00Z",
			wantNext: "2026-01-11T14:00:00Z",
		},
		{
			name:     "CRON_TZ prefix naming the same zone as timeZone",
			schedule: "CRON_TZ=America/New_York 0 9 * * *",
			timeZone: "America/New_York",
			since:    "2026-01-10T00:00:00Z",
			now:      "2026-01-10T13:59:59Z",
			wantNext: "2026-01-10T14:00:00Z",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSchedule(tt.schedule, tt.timeZone)
			if err != nil {
				t.Fatalf("ParseSchedule: %v", err)
			}
			due, next := s.Due(mustParse(t, tt.since), mustParse(t, tt.now))
			got := [2]string{format(due), format(next)}
			want := [2]string{tt.wantDue, tt.wantNext}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Due (due, next) mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func format(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func TestParseScheduleErrors(t *testing.T) {
	tests := []struct {
		name     string
		schedule string
		timeZone string
		wantErr  string // substring
	}{
		{name: "empty", schedule: "", wantErr: "empty spec"},
		{name: "too few fields", schedule: "* * *", wantErr: "expected exactly 5 fields"},
		{name: "seconds field", schedule: "0 * * * * *", wantErr: "expected exactly 5 fields"},
		{name: "out of range", schedule: "61 * * * *", wantErr: "above maximum"},
		{name: "unknown descriptor", schedule: "@fortnightly", wantErr: "unrecognized descriptor"},
		{name: "every without duration", schedule: "@every", wantErr: "@every needs a duration"},
		{name: "every bad duration", schedule: "@every five minutes", wantErr: "@every needs a duration"},
		{name: "every below a second", schedule: "@every 100ms", wantErr: "at least 1s"},
		{name: "every negative", schedule: "@every -5m", wantErr: "at least 1s"},
		{name: "bad time zone", schedule: "@hourly", timeZone: "Mars/Olympus", wantErr: `invalid time zone "Mars/Olympus"`},
		{name: "bad CRON_TZ", schedule: "CRON_TZ=Mars/Olympus * * * * *", wantErr: "bad location"},
		{name: "CRON_TZ alone", schedule: "CRON_TZ=UTC", wantErr: "must be followed by"},
		{name: "CRON_TZ with a tab", schedule: "CRON_TZ=UTC\t* * * * *"},
		{name: "CRON_TZ empty", schedule: "CRON_TZ=", wantErr: "must be followed by"},
		{name: "CRON_TZ conflicting with timeZone", schedule: "CRON_TZ=UTC * * * * *", timeZone: "Europe/Paris", wantErr: "conflicts with spec.timeZone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSchedule(tt.schedule, tt.timeZone)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseSchedule(%q, %q) = %v, want no error", tt.schedule, tt.timeZone, err)
				}
				return
			}
			if !strings.Contains(got, tt.wantErr) {
				t.Errorf("ParseSchedule(%q, %q) error = %q, want it to contain %q", tt.schedule, tt.timeZone, got, tt.wantErr)
			}
		})
	}
}

func TestNeverFires(t *testing.T) {
	s, err := ParseSchedule("0 0 30 2 *", "UTC")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("", format(s.Next(mustParse(t, "2026-01-01T00:00:00Z")))); diff != "" {
		t.Errorf("Next of a schedule that never fires (-want +got):\n%s", diff)
	}
}
