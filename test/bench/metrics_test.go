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

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// exposition is what an operator's metrics endpoint could show of its work queues.
const exposition = `# TYPE workqueue_depth gauge
workqueue_depth{controller="sparkapplication",name="sparkapplication",priority="-100"} 3
workqueue_depth{controller="sparkapplication",name="sparkapplication",priority="0"} 0
workqueue_depth{controller="submission",name="submission",priority="0"} 0
# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_bucket{controller="submission",name="submission",le="+Inf"} 4
workqueue_queue_duration_seconds_sum{controller="submission",name="submission"} 2
workqueue_queue_duration_seconds_count{controller="submission",name="submission"} 4
workqueue_queue_duration_seconds_bucket{controller="idle",name="idle",le="+Inf"} 0
workqueue_queue_duration_seconds_sum{controller="idle",name="idle"} 0
workqueue_queue_duration_seconds_count{controller="idle",name="idle"} 0
# TYPE workqueue_work_duration_seconds histogram
workqueue_work_duration_seconds_bucket{controller="submission",name="submission",le="+Inf"} 4
workqueue_work_duration_seconds_sum{controller="submission",name="submission"} 1
workqueue_work_duration_seconds_count{controller="submission",name="submission"} 4
`

func TestQueueMetrics(t *testing.T) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := queueSummary(families), "queues submission=4 wait_s=0.500 work_s=0.250"; got != want {
		t.Errorf("queueSummary = %q, want %q", got, want)
	}
	tests := []struct {
		name   string
		depth  float64
		exists bool
	}{
		{name: "sparkapplication", depth: 3, exists: true}, // summed over its priorities
		{name: "submission", depth: 0, exists: true},
		{name: "missing", depth: 0, exists: false},
	}
	for _, tt := range tests {
		if depth, ok := queueDepth(families, tt.name); depth != tt.depth || ok != tt.exists {
			t.Errorf("queueDepth(%s) = %v, %v; want %v, %v", tt.name, depth, ok, tt.depth, tt.exists)
		}
	}
}
