/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package cronschedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// parser accepts the five-field crontab syntax and descriptors such as "@hourly" and
// "@every 10m", which is what the Kubeflow operator accepted; a seconds field is not
// allowed, so existing schedules keep their meaning.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Schedule is a parsed spec.schedule, read in its time zone.
type Schedule struct {
	cron cron.Schedule
	loc  *time.Location
}

// ParseSchedule parses a cron expression and the time zone it is read in. timeZone is
// spec.timeZone: empty or "Local" for the operator's zone, "UTC" or an IANA name. The
// schedule may carry its own "CRON_TZ=<zone> " (or "TZ=") prefix; naming a different zone
// than timeZone there is an error, since one of the two would be silently ignored.
func ParseSchedule(schedule, timeZone string) (*Schedule, error) {
	loc := time.Local
	if timeZone != "" {
		l, err := time.LoadLocation(timeZone)
		if err != nil {
			return nil, fmt.Errorf("invalid time zone %q: %v", timeZone, err)
		}
		loc = l
	}

	spec := strings.TrimSpace(schedule)
	if prefixZone, rest, ok := splitZonePrefix(spec); ok {
		if rest == "" {
			// The cron library slices the string up to the first space and would panic.
			return nil, fmt.Errorf("invalid schedule %q: a time zone prefix must be followed by a space and a schedule", schedule)
		}
		if timeZone != "" && prefixZone != timeZone {
			return nil, fmt.Errorf("invalid schedule %q: its time zone %q conflicts with spec.timeZone %q", schedule, prefixZone, timeZone)
		}
		// Normalise the separator: the library only splits the prefix at a space.
		spec = spec[:strings.Index(spec, "=")+1] + prefixZone + " " + rest
		if every, ok := strings.CutPrefix(rest, "@every"); ok {
			if err := checkEvery(every); err != nil {
				return nil, fmt.Errorf("invalid schedule %q: %v", schedule, err)
			}
		}
	} else if every, ok := strings.CutPrefix(spec, "@every"); ok {
		if err := checkEvery(every); err != nil {
			return nil, fmt.Errorf("invalid schedule %q: %v", schedule, err)
		}
	}

	s, err := parse(spec)
	if err != nil {
		return nil, fmt.Errorf("invalid schedule %q: %v", schedule, err)
	}
	return &Schedule{cron: s, loc: loc}, nil
}

// parse shields the reconciler from panics inside the cron library on inputs its checks
// do not foresee: bad user input must end as a validation error, not a crashed operator.
func parse(spec string) (s cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("cannot parse: %v", r)
		}
	}()
	return parser.Parse(spec)
}

// splitZonePrefix splits "CRON_TZ=<zone> <rest>" (or "TZ=...") into zone and rest.
func splitZonePrefix(spec string) (zone, rest string, ok bool) {
	var after string
	if a, found := strings.CutPrefix(spec, "CRON_TZ="); found {
		after = a
	} else if a, found := strings.CutPrefix(spec, "TZ="); found {
		after = a
	} else {
		return "", "", false
	}
	fields := strings.Fields(after)
	if len(fields) == 0 {
		return "", "", true
	}
	zone = fields[0]
	rest = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(after), zone))
	return zone, rest, true
}

// checkEvery rejects intervals the library would quietly round up to one second, which
// would start a SparkApplication every second.
func checkEvery(arg string) error {
	arg = strings.TrimSpace(arg)
	d, err := time.ParseDuration(arg)
	if err != nil {
		return fmt.Errorf("@every needs a duration such as 5m or 1h30m: %v", err)
	}
	if d < time.Second {
		return fmt.Errorf("@every needs a duration of at least 1s, got %s", arg)
	}
	return nil
}

// Next returns the first scheduled time strictly after t, or the zero time if the schedule
// never fires again (such as "0 0 30 2 *").
func (s *Schedule) Next(t time.Time) time.Time {
	return s.cron.Next(t.In(s.loc))
}

// Due reports what to do at now for a schedule whose last run (or, before the first run,
// whose object's creation) was at since. due is the most recent scheduled time in
// (since, now], zero when none has passed; every earlier missed time is dropped, so an
// operator that was down for a while starts one run, not a burst. next is the first
// scheduled time after now, zero if there is none.
func (s *Schedule) Due(since, now time.Time) (due, next time.Time) {
	first := s.Next(since)
	if first.IsZero() || first.After(now) {
		return time.Time{}, first
	}
	if every, ok := s.cron.(cron.ConstantDelaySchedule); ok {
		// Intervals count from since, so the latest missed time is found by arithmetic; a
		// scan from a later start would shift the phase.
		n := now.Sub(first) / every.Delay
		due = first.Add(n * every.Delay)
		return due, s.Next(due)
	}
	return s.latestUpTo(since, now), s.Next(now)
}

// searchWindows bound the walk to the latest missed time: a schedule that fires every
// minute after a year of downtime would otherwise take half a million steps.
var searchWindows = []time.Duration{
	time.Minute,
	time.Hour,
	24 * time.Hour,
	32 * 24 * time.Hour,
	367 * 24 * time.Hour,
}

// latestUpTo returns the last scheduled time in (since, now], which the caller knows exists.
func (s *Schedule) latestUpTo(since, now time.Time) time.Time {
	start := since
	for _, w := range searchWindows {
		from := now.Add(-w)
		if !from.After(since) {
			break
		}
		if t := s.Next(from); !t.IsZero() && !t.After(now) {
			start = from
			break
		}
	}
	latest := s.Next(start)
	for {
		t := s.Next(latest)
		if t.IsZero() || t.After(now) {
			return latest
		}
		latest = t
	}
}
