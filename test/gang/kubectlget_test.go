/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestKubectlGetReadsWell checks what `kubectl get sparkapp` shows, through the API server's
// table (what kubectl prints): a queued application reads QUEUED with no start or finish time
// and its scheduler's reason in the last column, a running one has a start date, and a driver
// that no node can take shows why in the same column.
func TestKubectlGetReadsWell(t *testing.T) {
	f := newFixture(t)
	f.node("a", "4", nil)
	queue := f.queue("q", schedv1alpha1.QueueSpec{})
	f.startOperator()
	f.create(f.app("running", queue, 3))
	f.waitRunning("running")
	f.create(f.app("queued", queue, 3))
	// Its reason once the gang scheduler has decided about it (before, it waits for a cycle).
	waitingFor := waiting(f.waitWaiting("queued", "no node fits"))
	nowhere := cluster.SparkPi(f.ns, "nowhere")
	nowhere.Spec.NodeSelector = map[string]string{"test.sparkop.dev/no-such-node": "x"}
	f.create(nowhere)

	_, cs := cluster.Clients(t, f.kubeconfig)
	var table metav1.Table
	rows := map[string][]any{}
	col := map[string]int{}
	cluster.Eventually(t, 90*time.Second, "the driver without a node and the queued application showing why they wait", func() (bool, error) {
		raw, err := cs.Discovery().RESTClient().Get().AbsPath("/apis/sparkoperator.k8s.io/v1beta2/namespaces", f.ns, "sparkapplications").
			SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(f.ctx).Raw()
		if err != nil {
			return false, err
		}
		table = metav1.Table{}
		if err := json.Unmarshal(raw, &table); err != nil {
			return false, err
		}
		for i, c := range table.ColumnDefinitions {
			col[c.Name] = i
		}
		for _, r := range table.Rows {
			rows[r.Cells[0].(string)] = r.Cells
		}
		w, _ := rows["nowhere"][col["Waiting"]].(string)
		q, _ := rows["queued"][col["Waiting"]].(string)
		return strings.Contains(w, "node") && q != "", nil
	})

	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if want := "Name Status Attempts Start Finish Suspend Age Waiting"; strings.Join(names, " ") != want {
		t.Errorf("columns %v, want %s", names, want)
	}
	cell := func(app, column string) any { return rows[app][col[column]] }
	for _, c := range []struct {
		app, column string
		want        any
	}{
		{"queued", "Status", "QUEUED"}, {"queued", "Start", nil}, {"queued", "Finish", nil}, {"queued", "Waiting", waitingFor},
		{"running", "Status", "RUNNING"}, {"running", "Finish", nil}, {"running", "Waiting", nil},
		{"nowhere", "Status", "SUBMITTED"},
	} {
		if got := cell(c.app, c.column); got != c.want {
			t.Errorf("%s %s = %#v, want %#v", c.app, c.column, got, c.want)
		}
	}
	if s, _ := cell("running", "Start").(string); s == "" || strings.ContainsAny(s, "T:") {
		t.Errorf("running Start = %#v, want an age such as 5s", cell("running", "Start"))
	}

	// As kubectl prints it: nothing reads <no value> or <none>.
	var out bytes.Buffer
	if err := printers.NewTablePrinter(printers.PrintOptions{}).PrintObj(&table, &out); err != nil {
		t.Fatal(err)
	}
	t.Logf("kubectl get sparkapp:\n%s", out.String())
	if strings.Contains(out.String(), "<no value>") || strings.Contains(out.String(), "<none>") {
		t.Errorf("the table shows a missing value:\n%s", out.String())
	}
}
