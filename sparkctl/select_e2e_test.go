/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestSelectAndWatch: status and delete take names, submission IDs, glob patterns and label
// selectors; delete asks before deleting what a pattern matches; list prints kubectl's output
// formats and follows changes with --watch. No operator runs: the test writes the status.
func TestSelectAndWatch(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "sparkctl-select")
	create := func(name, team, submissionID string) *v1beta2.SparkApplication {
		t.Helper()
		app := &v1beta2.SparkApplication{}
		if err := yaml.Unmarshal([]byte(fmt.Sprintf(sparkPiYAML, name)), app); err != nil {
			t.Fatal(err)
		}
		app.Namespace, app.Labels = ns, map[string]string{"team": team}
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		if submissionID != "" {
			app.Status.SubmissionID = submissionID
			if err := c.Status().Update(ctx, app); err != nil {
				t.Fatal(err)
			}
		}
		return app
	}
	create("nightly-a", "data", "3f2a-0001")
	create("nightly-b", "data", "77c1-0002")
	create("adhoc", "ml", "")
	names := func(out string) []string { return strings.Fields(out) }
	exists := func(name string) bool {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &v1beta2.SparkApplication{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	statusNames := regexp.MustCompile(`(?m)^Name:\s+(\S+)$`)
	statusOf := func(args ...string) []string {
		t.Helper()
		var got []string
		for _, m := range statusNames.FindAllStringSubmatch(mustSparkctl(t, ns, append([]string{"status"}, args...)...), -1) {
			got = append(got, m[1])
		}
		return got
	}

	t.Run("status", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want []string
		}{
			{[]string{"adhoc"}, []string{"adhoc"}},
			{[]string{"nightly-*"}, []string{"nightly-a", "nightly-b"}},
			{[]string{"3f2a-0001"}, []string{"nightly-a"}}, // a submission ID
			{[]string{"*-0002", "adhoc"}, []string{"adhoc", "nightly-b"}},
			{[]string{"-l", "team=data"}, []string{"nightly-a", "nightly-b"}},
			{[]string{"-l", "team=data", "*-a"}, []string{"nightly-a"}},
		} {
			if diff := cmp.Diff(tc.want, statusOf(tc.args...)); diff != "" {
				t.Errorf("status %s (-want +got):\n%s", strings.Join(tc.args, " "), diff)
			}
		}
		if diff := cmp.Diff([]string{"sparkapplication.sparkoperator.k8s.io/nightly-a", "sparkapplication.sparkoperator.k8s.io/nightly-b"},
			names(mustSparkctl(t, ns, "status", "nightly-*", "-o", "name"))); diff != "" {
			t.Errorf("status -o name (-want +got):\n%s", diff)
		}
		_, _, err := sparkctl(t, ctx, "", ns, "status", "weekly-*")
		if want := fmt.Sprintf(`no sparkapplication matches "weekly-*" in namespace %q`, ns); err == nil || err.Error() != want {
			t.Errorf("status of a pattern matching nothing: %v, want %q", err, want)
		}
	})

	t.Run("list output formats", func(t *testing.T) {
		if diff := cmp.Diff([]string{"nightly-a", "nightly-b"},
			names(mustSparkctl(t, ns, "list", "-l", "team=data", "-o", "jsonpath={.items[*].metadata.name}"))); diff != "" {
			t.Errorf("list -l -o jsonpath (-want +got):\n%s", diff)
		}
		wantRows(t, "list -o custom-columns", mustSparkctl(t, ns, "list", "-o", "custom-columns=NAME:.metadata.name,SUBMISSION:.status.submissionID"),
			[][]string{{"NAME", "SUBMISSION"}, {"adhoc", "<none>"}, {"nightly-a", "3f2a-0001"}, {"nightly-b", "77c1-0002"}})
		if diff := cmp.Diff([]string{"sparkapplication.sparkoperator.k8s.io/adhoc"}, names(mustSparkctl(t, ns, "list", "-l", "team=ml", "-o", "name"))); diff != "" {
			t.Errorf("list -l -o name (-want +got):\n%s", diff)
		}
	})

	t.Run("list --watch", func(t *testing.T) {
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var out, errOut syncBuffer
		wait := startSparkctl(t, wctx, "", ns, &out, &errOut, "list", "--watch", "-l", "team=ml")
		cluster.Eventually(t, 30*time.Second, "the listed application", func() (bool, error) {
			return strings.Contains(out.String(), "adhoc"), nil
		})
		create("adhoc-2", "ml", "")
		create("other-team", "web", "")
		app := &v1beta2.SparkApplication{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "adhoc"}, app); err != nil {
			t.Fatal(err)
		}
		app.Status.AppState.State = v1beta2.ApplicationStateRunning
		if err := c.Status().Update(ctx, app); err != nil {
			t.Fatal(err)
		}
		cluster.Eventually(t, 30*time.Second, "rows for the new application and the change", func() (bool, error) {
			return strings.Contains(out.String(), "adhoc-2") && strings.Contains(out.String(), "RUNNING"), nil
		})
		cancel()
		if err := wait(); err != nil {
			t.Fatalf("list --watch: %v: %s", err, errOut.String())
		}
		got := rows(out.String())
		if diff := cmp.Diff([]string{"NAME", "STATE", "ATTEMPTS", "SUBMITTED", "FINISHED", "AGE"}, got[0]); diff != "" {
			t.Errorf("header (-want +got):\n%s", diff)
		}
		seen := map[string]bool{}
		for _, r := range got[1:] {
			if r[0] == "NAME" || r[0] == "other-team" {
				t.Errorf("list --watch printed %v:\n%s", r, out.String())
			}
			seen[r[0]+" "+r[1]] = true
		}
		for _, want := range []string{"adhoc NEW", "adhoc-2 NEW", "adhoc RUNNING"} {
			if !seen[want] {
				t.Errorf("list --watch has no row %q:\n%s", want, out.String())
			}
		}
	})

	t.Run("delete asks first", func(t *testing.T) {
		out, _, err := sparkctl(t, ctx, "n\n", ns, "delete", "nightly-*")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"nightly-a", "nightly-b", "Delete these 2 sparkapplications? [y/N]: ", "Nothing deleted."} {
			if !strings.Contains(out, want) {
				t.Errorf("delete 'nightly-*' answered no: output lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "adhoc") || !exists("nightly-a") || !exists("nightly-b") {
			t.Errorf("delete 'nightly-*' answered no: listed adhoc or deleted something:\n%s", out)
		}

		out, _, err = sparkctl(t, ctx, "y\n", ns, "delete", "nightly-*")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(out, "sparkapplication \"nightly-a\" deleted\nsparkapplication \"nightly-b\" deleted\n") {
			t.Errorf("delete 'nightly-*' answered yes:\n%s", out)
		}
		if exists("nightly-a") || exists("nightly-b") || !exists("adhoc") {
			t.Errorf("after delete 'nightly-*': nightly-a %v, nightly-b %v, adhoc %v; want only adhoc", exists("nightly-a"), exists("nightly-b"), exists("adhoc"))
		}
	})

	t.Run("delete -l --yes", func(t *testing.T) {
		out := mustSparkctl(t, ns, "delete", "-l", "team=ml", "--yes")
		if diff := cmp.Diff("sparkapplication \"adhoc\" deleted\nsparkapplication \"adhoc-2\" deleted\n", out); diff != "" {
			t.Errorf("delete -l team=ml --yes (-want +got):\n%s", diff)
		}
		if exists("adhoc") || exists("adhoc-2") || !exists("other-team") {
			t.Errorf("delete -l team=ml deleted the wrong applications")
		}
	})
}
