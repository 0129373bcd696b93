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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestKubectlVerbs runs what kubectl users reach for against the real API server, with the
// operator running: get and describe, --no-headers, wait --for with its exit codes, suspend and
// resume, log --tail, and the queue and reservation views.
func TestKubectlVerbs(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "sparkctl")
	startOperator(t, ns)
	const name = "pi"
	if _, errOut, err := sparkctl(t, ctx, fmt.Sprintf(sparkPiYAML, name), ns, "create", "-f", "-"); err != nil {
		t.Fatalf("create: %v: %s", err, errOut)
	}

	if out := mustSparkctl(t, ns, "wait", name, "--for=running", "--timeout=3m"); out != "sparkapplication/pi RUNNING\n" {
		t.Errorf("wait --for=running printed %q", out)
	}
	wantRows(t, "get --no-headers", mustSparkctl(t, ns, "get", "--no-headers"), [][]string{{name, "RUNNING", "1/1", "AGE", "<none>", "AGE"}})
	if out := mustSparkctl(t, ns, "describe", name); !strings.Contains(out, "State:") || !strings.Contains(out, "RUNNING") {
		t.Errorf("describe:\n%s", out)
	}

	// Waiting for a state it does not reach in time: exit code 1.
	_, _, err := sparkctl(t, ctx, "", ns, "wait", name, "--for=completed", "--timeout=2s")
	if err == nil || ExitCode(err) != 1 || !strings.Contains(err.Error(), "timed out waiting") {
		t.Errorf("wait past its timeout: %v (exit code %d)", err, ExitCode(err))
	}
	if _, _, err := sparkctl(t, ctx, "", ns, "wait", name, "--for=done"); err == nil || !strings.Contains(err.Error(), "not a state") {
		t.Errorf("wait --for=done: %v", err)
	}

	t.Run("log --tail, --since and --previous", func(t *testing.T) {
		// kwok serves the log files as a kubelet serves a container's: it reads their
		// timestamps for --since, and the previous file for --previous.
		dir := t.TempDir()
		now := time.Now().UTC().Format(time.RFC3339Nano)
		lines := []struct{ at, text string }{
			{"2026-01-01T00:00:00.000000000Z", "one"}, {"2026-01-01T00:00:01.000000000Z", "two"},
			{now, "three"}, {now, "Pi is roughly 3.14159"},
		}
		var b strings.Builder
		for _, l := range lines {
			fmt.Fprintf(&b, "%s stdout F %s\n", l.at, l.text)
		}
		logFile, previousFile := filepath.Join(dir, "driver.log"), filepath.Join(dir, "previous.log")
		if err := os.WriteFile(logFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(previousFile, []byte(now+" stderr F the run before the restart\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		createKwok(t, c, "Logs", ns, name+"-driver", map[string]any{
			"logs": []any{map[string]any{"containers": []any{v1beta2.SparkDriverContainerName}, "logsFile": logFile, "previousLogsFile": previousFile}},
		})
		cluster.Eventually(t, 20*time.Second, "kwok to serve the last line of the driver's log", func() (bool, error) {
			out, _, err := sparkctl(t, ctx, "", ns, "log", name, "--tail=1")
			return out == "Pi is roughly 3.14159\n", err
		})
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--since=1h"}, "three\nPi is roughly 3.14159\n"},
			{[]string{"--since=1h", "--tail=1"}, "Pi is roughly 3.14159\n"},
			{[]string{"--previous"}, "the run before the restart\n"},
			{[]string{"-p", "--since=1h"}, "the run before the restart\n"},
			{nil, "one\ntwo\nthree\nPi is roughly 3.14159\n"},
		} {
			if out := mustSparkctl(t, ns, append([]string{"log", name}, tc.args...)...); out != tc.want {
				t.Errorf("log %v printed %q, want %q", tc.args, out, tc.want)
			}
		}
	})

	t.Run("suspend and resume", func(t *testing.T) {
		if out := mustSparkctl(t, ns, "suspend", name); out != "sparkapplication/pi suspended\n" {
			t.Errorf("suspend printed %q", out)
		}
		mustSparkctl(t, ns, "wait", name, "--for=suspended", "--timeout=2m")
		if out := mustSparkctl(t, ns, "resume", name); out != "sparkapplication/pi resumed\n" {
			t.Errorf("resume printed %q", out)
		}
		mustSparkctl(t, ns, "wait", name, "--for=running", "--timeout=3m")
		if _, _, err := sparkctl(t, ctx, "", ns, "suspend", "nosuch"); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("suspending a missing application: %v", err)
		}
	})

	t.Run("wait on an application that ended otherwise", func(t *testing.T) {
		// The driver pod gone, the run fails (restart policy Never).
		if err := c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-driver"}}); err != nil {
			t.Fatal(err)
		}
		if out := mustSparkctl(t, ns, "wait", name, "--for=failed", "--timeout=3m"); out != "sparkapplication/pi FAILED\n" {
			t.Errorf("wait --for=failed printed %q", out)
		}
		_, _, err := sparkctl(t, ctx, "", ns, "wait", name, "--for=running", "--timeout=3m")
		if err == nil || ExitCode(err) != exitEndedOtherwise || !strings.Contains(err.Error(), "ended FAILED") {
			t.Errorf("wait --for=running on a failed run: %v (exit code %d)", err, ExitCode(err))
		}
	})

	t.Run("queues and reservations", func(t *testing.T) {
		q := &schedv1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: ns + "-q"}, Spec: schedv1alpha1.QueueSpec{Priority: 7}}
		if err := c.Create(ctx, q); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), q) })
		out := mustSparkctl(t, ns, "queues")
		var row []string // its cells; the empty ones (parent, quotas, counts) leave no field
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == q.Name {
				row = f
			}
		}
		if !strings.HasPrefix(out, "NAME ") || len(row) < 2 || row[1] != "7" {
			t.Errorf("queues: no row for %s with its priority:\n%s", q.Name, out)
		}
		if out := mustSparkctl(t, ns, "queues", "--no-headers"); strings.Contains(out, "NAME") || !strings.Contains(out, q.Name) {
			t.Errorf("queues --no-headers:\n%s", out)
		}
		r := &schedv1alpha1.Reservation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "res"}, Spec: schedv1alpha1.ReservationSpec{
			Workload: schedv1alpha1.WorkloadReference{Kind: "SparkApplication", Name: name}, Queue: q.Name, Run: "r1",
			Admitted: metav1.Now(), Members: []schedv1alpha1.ReservationMember{{Name: "driver", Role: "driver", Node: "n1"}}}}
		if err := c.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		out = mustSparkctl(t, ns, "reservations")
		if got := rows(out); len(got) != 2 || got[1][0] != "res" || got[1][1] != q.Name {
			t.Errorf("reservations:\n%s", out)
		}
		if out := mustSparkctl(t, ns, "reservations", "-A"); !strings.Contains(out, ns) {
			t.Errorf("reservations -A has no namespace column:\n%s", out)
		}
		_ = client.IgnoreNotFound(c.Delete(ctx, r))
	})
}
