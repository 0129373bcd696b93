/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sjf_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sparkop/spark-operator/examples/external-scheduler/sjf"
	"github.com/sparkop/spark-operator/scheduler/external"
)

func cpu(q string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
}

func pending(name string, driverCPU string, executors int32, created int) external.Pending {
	return external.Pending{Workload: external.Workload{Kind: "SparkApplication", Namespace: "ns", Name: name}, Queue: "q",
		Created:   time.Unix(int64(created), 0),
		Driver:    external.Member{Count: 1, Requests: cpu(driverCPU), EligibleNodes: []string{"n1", "n2"}},
		Executors: external.Member{Count: executors, Requests: cpu("1"), EligibleNodes: []string{"n1", "n2"}}}
}

// TestDecide: the smallest gang goes first, whatever its age; what does not fit in the room
// left or in its queue's quota waits, with why.
func TestDecide(t *testing.T) {
	req := &external.Request{APIVersion: external.APIVersion,
		Nodes:  []external.Node{{Name: "n1", Free: cpu("4")}, {Name: "n2", Free: cpu("4")}},
		Queues: []external.Queue{{Name: "q", Quota: cpu("7")}},
		Pending: []external.Pending{
			pending("old-big", "1", 5, 1),     // 6 cpu
			pending("young-small", "1", 1, 2), // 2 cpu
			pending("medium", "1", 3, 3),      // 4 cpu
		}}
	out := sjf.Decide(req)
	var admitted []string
	for _, a := range out.Admit {
		var execs []string
		for n, k := range a.Executors {
			execs = append(execs, fmt.Sprintf("%s×%d", n, k))
		}
		sort.Strings(execs)
		admitted = append(admitted, fmt.Sprintf("%s: %s %v", a.Name, a.Driver, execs))
	}
	if diff := cmp.Diff([]string{"young-small: n1 [n1×1]", "medium: n1 [n1×1 n2×2]"}, admitted); diff != "" {
		t.Errorf("admitted (-want +got):\n%s", diff)
	}
	var waiting []string
	for _, w := range out.Waiting {
		waiting = append(waiting, w.Name+": "+w.Reason)
	}
	if diff := cmp.Diff([]string{"old-big: shortest job first: queue q has no room for it"}, waiting); diff != "" {
		t.Errorf("waiting (-want +got):\n%s", diff)
	}
}
