/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSpreadTable(t *testing.T) {
	log := `gang: mode=gang allocated=0.5
RESULT mode=gang scheduler=gang enforcement=advisory load=none apps=30 partial_starts=0 beyond_fit=0 unschedulable_executors=0 utilisation=0.812 makespan_s=101.4 finished=30
RESULT mode=gang scheduler=volcano enforcement=advisory load=none apps=30 partial_starts=2 beyond_fit=1 unschedulable_executors=7 utilisation=0.700 makespan_s=130.0 finished=30
RESULT mode=submit apps=1000 p50_ms=3
RESULT mode=gang scheduler=gang enforcement=advisory load=none apps=30 partial_starts=0 beyond_fit=0 unschedulable_executors=0 utilisation=0.790 makespan_s=99.6 finished=30
RESULT mode=gang scheduler=gang enforcement=plugin load=competing apps=30 partial_starts=0 utilisation=0.6 makespan_s=120 finished=29
RESULT mode=nogang enforcement=advisory load=none apps=30 partial_starts=9 beyond_fit=4 unschedulable_executors=50 utilisation=0.6 makespan_s=140 finished=30
`
	runs, order, err := readGangResults(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	want := "| scheduler | runs | apps | partial starts (peak) | drivers beyond fit (peak) | unschedulable executors | CPU at work | makespan s | finished |\n" +
		"| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n" +
		"| `gang` | 2 | 30 | 0 | 0 | 0 | 0.790–0.812 | 100–101 | 30 |\n" +
		"| `volcano` | 1 | 30 | 2 | 1 | 7 | 0.700 | 130 | 30 |\n" +
		"| `gang (plugin), competing load` | 1 | 30 | 0 | – | – | 0.600 | 120 | 29 |\n" +
		"| `none` | 1 | 30 | 9 | 4 | 50 | 0.600 | 140 | 30 |\n"
	if diff := cmp.Diff(want, spreadTable(runs, order)); diff != "" {
		t.Errorf("spreadTable (-want +got):\n%s", diff)
	}
}
