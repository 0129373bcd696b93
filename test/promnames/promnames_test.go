/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package promnames

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInExpr(t *testing.T) {
	tests := []struct {
		expr string
		want []string
	}{
		{"up", []string{"up"}},
		{`sum(rate(spark_application_submit_total[5m])) * 60`, []string{"spark_application_submit_total"}},
		{`histogram_quantile(0.95, sum by (le, webhook) (rate(x_seconds_bucket{webhook="a b", code=~"5.."}[5m])))`, []string{"x_seconds_bucket"}},
		{`(sum(a) > 0) and (sum(increase(b[30m])) == 0)`, []string{"a", "b"}},
		{`max by (name) (leader_election_master_status) < 1e3`, []string{"leader_election_master_status"}},
		{`sum without (pod) (a offset 5m) / on (queue) group_left b`, []string{"a", "b"}},
		{`rate(a:recorded:rate5m[1h]) unless bool c`, []string{"a:recorded:rate5m", "c"}},
	}
	for _, tc := range tests {
		if d := cmp.Diff(tc.want, InExpr(tc.expr)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.expr, d)
		}
	}
}

func TestInDashboardAndRules(t *testing.T) {
	dash := `{"panels": [{"type": "row", "panels": [{"targets": [{"expr": "sum(b)"}]}]}, {"targets": [{"expr": "a + b"}]}]}`
	got, err := InDashboard([]byte(dash))
	if err != nil || !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("dashboard: %v, %v", got, err)
	}
	if _, err := InDashboard([]byte(`{"panels": []}`)); err == nil {
		t.Error("a dashboard without queries: no error")
	}
	rules := "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: c > 0\n    for: 5m\n"
	got, err = InRules([]byte(rules))
	if err != nil || !cmp.Equal(got, []string{"c"}) {
		t.Errorf("rules: %v, %v", got, err)
	}
	if _, err := InRules([]byte("groups:\n- name: g\n  rulez: []\n")); err == nil {
		t.Error("a misspelt field: no error")
	}
}

func TestServed(t *testing.T) {
	scrape := `# TYPE h histogram
h_bucket{le="1"} 1
h_bucket{le="+Inf"} 1
h_sum 1
h_count 1
# TYPE s summary
s_sum 1
s_count 1
# TYPE c counter
c 1
`
	served, err := Parse(strings.NewReader(scrape))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"h": true, "h_bucket": true, "h_count": true, "s_sum": true, "s_bucket": false,
		"c": true, "c_count": false, "d": false} {
		if got := served.Has(name); got != want {
			t.Errorf("Has(%s) = %v, want %v", name, got, want)
		}
	}
}
