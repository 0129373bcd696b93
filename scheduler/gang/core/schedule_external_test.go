/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package core_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sparkop/spark-operator/scheduler/external"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	gt "github.com/sparkop/spark-operator/scheduler/gang/gangtest"
)

func admit(name, driver string, executors map[string]int32) external.Admission {
	return external.Admission{Workload: external.Workload{Namespace: gt.Namespace, Name: name},
		Placement: external.Placement{Driver: driver, Executors: executors}}
}

// TestScheduleExternal: the external scheduler's admissions are checked by the core's rules
// (its workloads only, whole gangs, nodes they may use, room, quota) and applied in order;
// what fails stays queued with why; no answer admits nothing; the core's own workloads are
// decided first and never sent.
func TestScheduleExternal(t *testing.T) {
	nodes := []*gt.NodeWrapper{gt.MakeNode("n1").Capacity("8", "32Gi"), gt.MakeNode("n2").Capacity("8", "32Gi").Label("disk", "ssd")}
	queues := []*gt.QueueWrapper{gt.MakeQueue("default"), gt.MakeQueue("small").Quota("cpu", "3")}
	ext := func(names ...string) func(core.Key) bool {
		return func(k core.Key) bool {
			for _, n := range names {
				if k.Name == n {
					return true
				}
			}
			return false
		}
	}
	tests := []struct {
		name      string
		workloads []*gt.WorkloadWrapper
		outside   []string
		answer    *external.Response
		err       error
		want      summary
		refused   map[string]string
		asked     bool
	}{{
		name:      "a valid admission is applied",
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("a").Executors(2, "1", "1Gi")},
		outside:   []string{"a"},
		answer:    &external.Response{Admit: []external.Admission{admit("a", "n1", map[string]int32{"n2": 2})}},
		want:      summary{Admitted: []string{"a: n1 [n2×2]"}},
		asked:     true,
	}, {
		name: "an overcommitting admission is refused, the next one still considered",
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("a").Executors(3, "3", "1Gi"),
			gt.MakeWorkload("b").Executors(1, "1", "1Gi")},
		outside: []string{"a", "b"},
		answer: &external.Response{Admit: []external.Admission{
			admit("a", "n1", map[string]int32{"n1": 3}), admit("b", "n1", map[string]int32{"n1": 1})}},
		want: summary{Admitted: []string{"b: n1 [n1×1]"}, Waiting: map[string]string{
			"a": "the external scheduler's admission was refused: node n1 has no room for 3 executors: 3 cpu, 1Gi each, 7 cpu, 31Gi free"},
			Order: map[string][]string{"default": {"a"}}},
		refused: map[string]string{"a": "node n1 has no room for 3 executors: 3 cpu, 1Gi each, 7 cpu, 31Gi free"},
		asked:   true,
	}, {
		name:      "an unknown application and the core's own are refused",
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("core").Driver("8", "1Gi"), gt.MakeWorkload("a")},
		outside:   []string{"a"},
		answer:    &external.Response{Admit: []external.Admission{admit("ghost", "n1", nil), admit("core", "n2", nil)}},
		want: summary{Admitted: []string{"core: n1 []"}, Waiting: map[string]string{"a": "waiting for the external scheduler"},
			Order: map[string][]string{"default": {"a"}}},
		refused: map[string]string{
			"ghost": "SparkApplication " + gt.Namespace + "/ghost does not wait for the external scheduler's admission (unknown, admitted already, or another scheduler's)",
			"core":  "SparkApplication " + gt.Namespace + "/core does not wait for the external scheduler's admission (unknown, admitted already, or another scheduler's)"},
		asked: true,
	}, {
		name:      "a plan that leaves out executors, and one on a node the member may not use",
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("a").Executors(2, "1", "1Gi"), gt.MakeWorkload("b").NodeSelector("disk", "ssd")},
		outside:   []string{"a", "b"},
		answer: &external.Response{Admit: []external.Admission{admit("a", "n1", map[string]int32{"n1": 1}), admit("b", "n1", nil)},
			Waiting: []external.Waiting{{Workload: external.Workload{Namespace: gt.Namespace, Name: "a"}, Reason: "shortest first"}}},
		want: summary{Waiting: map[string]string{
			"a": "the external scheduler's admission was refused: it places 1 executors; the gang has 2",
			"b": "the external scheduler's admission was refused: the driver may not run on node n1 (its node selector, affinity or tolerations, or the node is cordoned)"},
			Order: map[string][]string{"default": {"a", "b"}}},
		refused: map[string]string{"a": "it places 1 executors; the gang has 2",
			"b": "the driver may not run on node n1 (its node selector, affinity or tolerations, or the node is cordoned)"},
		asked: true,
	}, {
		name:      "over quota",
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("a").Queue("small").Executors(3, "1", "1Gi")},
		outside:   []string{"a"},
		answer:    &external.Response{Admit: []external.Admission{admit("a", "n1", map[string]int32{"n1": 3})}},
		want:      summary{Rejected: map[string]string{"a": "needs 4 cpu, more than queue small ever allows (quota 3 cpu)"}},
		asked:     false,
	}, {
		name: "over quota now, with another admitted",
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("running").Queue("small").Driver("2", "1Gi").Admitted("n1", nil),
			gt.MakeWorkload("a").Queue("small").Executors(1, "1", "1Gi")},
		outside: []string{"a"},
		answer:  &external.Response{Admit: []external.Admission{admit("a", "n1", map[string]int32{"n1": 1})}},
		want: summary{Waiting: map[string]string{"a": "the external scheduler's admission was refused: over quota in queue small: needs 2 cpu, 1 cpu free (quota 3 cpu, 2 cpu in use)"},
			Order: map[string][]string{"small": {"a"}}},
		refused: map[string]string{"a": "over quota in queue small: needs 2 cpu, 1 cpu free (quota 3 cpu, 2 cpu in use)"},
		asked:   true,
	}, {
		name:      "no answer admits nothing",
		workloads: []*gt.WorkloadWrapper{gt.MakeWorkload("a")},
		outside:   []string{"a"},
		err:       errors.New("connection refused"),
		want: summary{Waiting: map[string]string{"a": "the external scheduler gave no usable answer, so nothing of it is admitted: connection refused"},
			Order: map[string][]string{"default": {"a"}}},
		asked: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := scenario{nodes: nodes, queues: queues, workloads: tt.workloads}
			asked := false
			out, report := core.ScheduleExternal(sc.snapshot(), core.Options{}, ext(tt.outside...), func(*external.Request) (*external.Response, error) {
				asked = true
				return tt.answer, tt.err
			})
			if diff := cmp.Diff(tt.want, summarize(out), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			refused := map[string]string{}
			for k, why := range report.Refused {
				refused[k.Name] = why
			}
			if diff := cmp.Diff(tt.refused, refused, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("refused (-want +got):\n%s", diff)
			}
			if asked != tt.asked || report.Asked != tt.asked {
				t.Errorf("asked = %v (report %v), want %v", asked, report.Asked, tt.asked)
			}
		})
	}
}

// TestExternalRequest: the external scheduler sees the capacity left after the core's own
// admissions and the reservations, its waiting workloads only, in admission order, with the
// nodes each member may use.
func TestExternalRequest(t *testing.T) {
	sc := scenario{
		nodes:  []*gt.NodeWrapper{gt.MakeNode("n1").Capacity("8", "32Gi"), gt.MakeNode("n2").Capacity("8", "32Gi").Label("disk", "ssd")},
		queues: []*gt.QueueWrapper{gt.MakeQueue("default").Quota("cpu", "100")},
		workloads: []*gt.WorkloadWrapper{
			gt.MakeWorkload("held").Driver("2", "2Gi").Admitted("n2", nil),
			gt.MakeWorkload("core").Driver("4", "1Gi"),
			gt.MakeWorkload("later").Created(2e9).NodeSelector("disk", "ssd").Executors(1, "1", "1Gi"),
			gt.MakeWorkload("sooner").Created(1e9),
		},
	}
	var req *external.Request
	core.ScheduleExternal(sc.snapshot(), core.Options{}, func(k core.Key) bool { return k.Name != "core" && k.Name != "held" },
		func(r *external.Request) (*external.Response, error) { req = r; return &external.Response{}, nil })
	if req == nil {
		t.Fatal("the external scheduler was not asked")
	}
	type node struct{ Name, FreeCPU string }
	var nodes []node
	for _, n := range req.Nodes {
		q := n.Free["cpu"]
		nodes = append(nodes, node{n.Name, q.String()})
	}
	// The core put "core" (4 cpu) on n1; "held" is admitted on n2 (its capacity is in Used
	// when the runtime builds the snapshot, not here, so n2 shows it free).
	if diff := cmp.Diff([]node{{"n1", "4"}, {"n2", "8"}}, nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	type pending struct {
		Name              string
		Driver, Executors []string
	}
	var got []pending
	for _, p := range req.Pending {
		got = append(got, pending{p.Name, p.Driver.EligibleNodes, p.Executors.EligibleNodes})
	}
	want := []pending{{"sooner", []string{"n1", "n2"}, []string{"n1", "n2"}}, {"later", []string{"n2"}, []string{"n2"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	var reserved []string
	for _, r := range req.Reservations {
		reserved = append(reserved, r.Name+"@"+r.Driver)
	}
	if diff := cmp.Diff([]string{"held@n2", "core@n1"}, reserved); diff != "" {
		t.Errorf("reservations (-want +got):\n%s", diff)
	}
	if q := req.Queues[0].Used["cpu"]; q.String() != "6" {
		t.Errorf("queue default used %s cpu, want 6 (held 2 + core 4)", q.String())
	}
}
