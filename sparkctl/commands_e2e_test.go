/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
)

// TestCommands walks one application through every command, with the operator running.
func TestCommands(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "sparkctl")
	startOperator(t, ns)
	const name = "spark-pi"

	// create, from standard input.
	out, errOut, err := sparkctl(t, ctx, fmt.Sprintf(sparkPiYAML, name), ns, "create", "-f", "-")
	if err != nil {
		t.Fatalf("create: %v: %s", err, errOut)
	}
	if diff := cmp.Diff("sparkapplication \"spark-pi\" created\n", out); diff != "" {
		t.Errorf("create output (-want +got):\n%s", diff)
	}
	_, _, err = sparkctl(t, ctx, fmt.Sprintf(sparkPiYAML, name), ns, "create", "-f", "-")
	if want := fmt.Sprintf("sparkapplication %q already exists in namespace %q (use --delete to replace it)", name, ns); err == nil || err.Error() != want {
		t.Errorf("creating it again: error %v, want %q", err, want)
	}

	app := &v1beta2.SparkApplication{}
	cluster.Eventually(t, 60*time.Second, "the application to run", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, app)
		return app.Status.AppState.State == v1beta2.ApplicationStateRunning, err
	})
	driver := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: app.DriverPodName()}, driver); err != nil {
		t.Fatal(err)
	}
	var execPods []*corev1.Pod
	for id := 1; id <= 2; id++ {
		pod, err := executors.Build(driver, id, executors.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range pod.Spec.Containers {
			pod.Spec.Containers[i].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("10m")
		}
		if err := c.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		execPods = append(execPods, pod)
	}
	cluster.Eventually(t, 60*time.Second, "two running executors in the status", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(app), app)
		running := 0
		for _, s := range app.Status.ExecutorState {
			if s == v1beta2.ExecutorStateRunning {
				running++
			}
		}
		return running == 2, err
	})

	t.Run("list", func(t *testing.T) {
		wantRows(t, "list", mustSparkctl(t, ns, "list"), [][]string{
			{"NAME", "STATE", "ATTEMPTS", "SUBMITTED", "FINISHED", "AGE"},
			{name, "RUNNING", "1/1", "AGE", "<none>", "AGE"},
		})
		wantRows(t, "list -o wide", mustSparkctl(t, ns, "list", "-o", "wide"), [][]string{
			{"NAME", "STATE", "ATTEMPTS", "SUBMITTED", "FINISHED", "AGE", "TYPE", "DRIVER", "UI ADDRESS", "APPLICATION ID"},
			{name, "RUNNING", "1/1", "AGE", "<none>", "AGE", "Scala", app.DriverPodName(),
				orNone(app.Status.DriverInfo.WebUIAddress), orNone(app.Status.SparkApplicationID)},
		})
		all := rows(mustSparkctl(t, "", "list", "-A"))
		found := false
		for _, r := range all[1:] {
			found = found || cmp.Equal(r, []string{ns, name, "RUNNING", "1/1", "AGE", "<none>", "AGE"})
		}
		if !found || all[0][0] != "NAMESPACE" {
			t.Errorf("list -A has no row for %s/%s:\n%v", ns, name, all)
		}
		if diff := cmp.Diff("sparkapplication.sparkoperator.k8s.io/spark-pi\n", mustSparkctl(t, ns, "list", "-o", "name")); diff != "" {
			t.Errorf("list -o name (-want +got):\n%s", diff)
		}
		for _, format := range []string{"json", "yaml"} {
			out := mustSparkctl(t, ns, "list", "-o", format)
			for _, want := range []string{"SparkApplicationList", "kind", "spark-pi", "RUNNING"} {
				if !strings.Contains(out, want) {
					t.Errorf("list -o %s lacks %q:\n%s", format, want, out)
				}
			}
		}
	})

	t.Run("status", func(t *testing.T) {
		out := mustSparkctl(t, ns, "status", name)
		head, execTable, ok := strings.Cut(out, "\nExecutors:\n")
		if !ok {
			t.Fatalf("status has no executors table:\n%s", out)
		}
		for _, want := range []string{"State:                 RUNNING", "Driver pod:            " + app.DriverPodName(),
			"Submission attempts:   1", "Spark UI:              " + orNone(app.Status.DriverInfo.WebUIAddress)} {
			if !strings.Contains(head, want) {
				t.Errorf("status lacks %q:\n%s", want, out)
			}
		}
		wantRows(t, "executors", execTable, [][]string{
			{"ID", "POD", "STATE"},
			{"1", execPods[0].Name, "RUNNING"},
			{"2", execPods[1].Name, "RUNNING"},
		})
	})

	t.Run("status -o json and yaml", func(t *testing.T) {
		for format, unmarshal := range map[string]func([]byte, any) error{
			"json": json.Unmarshal,
			"yaml": func(b []byte, v any) error { return yaml.Unmarshal(b, v) },
		} {
			out := mustSparkctl(t, ns, "status", name, "-o", format)
			var got v1beta2.SparkApplication
			if err := unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("status -o %s: %v\n%s", format, err, out)
			}
			if got.Kind != "SparkApplication" || got.Name != name || got.Status.AppState.State != v1beta2.ApplicationStateRunning ||
				got.Status.DriverInfo.PodName != app.DriverPodName() || len(got.Status.ExecutorState) != 2 || got.ManagedFields != nil {
				t.Errorf("status -o %s: kind %q, name %q, state %q, driver %q, %d executors, managed fields %v",
					format, got.Kind, got.Name, got.Status.AppState.State, got.Status.DriverInfo.PodName, len(got.Status.ExecutorState), got.ManagedFields != nil)
			}
		}
	})

	t.Run("event", func(t *testing.T) {
		var table string
		defer func() {
			if t.Failed() {
				t.Logf("last event output:\n%s", table)
			}
		}()
		// The local cluster's kwok kubelets record no pod events; write some as a kubelet would
		// (core/v1), next to the operator's events.k8s.io ones: an old one about the driver,
		// and one about a pod of no concern.
		podEvent := func(pod, reason string, at time.Time) {
			ev := &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Namespace: ns, GenerateName: "sparkctl-test-"},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod, APIVersion: "v1"},
				Reason:         reason, Message: "image already present", Type: corev1.EventTypeNormal,
				FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at), Count: 1,
				Source: corev1.EventSource{Component: "kubelet"},
			}
			if err := c.Create(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
		podEvent(app.DriverPodName(), "Pulled", time.Now().Add(-time.Hour))
		podEvent("unrelated-pod", "Pulled", time.Now())
		cluster.Eventually(t, 30*time.Second, "the submission event", func() (bool, error) {
			out, _, err := sparkctl(t, ctx, "", ns, "event", name)
			table = out
			return strings.Contains(out, "SparkApplicationSubmitted") && strings.Contains(out, "SparkDriverRunning"), err
		})
		r := rows(table)
		var got [][]string
		for _, row := range r {
			if len(row) == 5 && row[3] == "pod/unrelated-pod" {
				t.Errorf("an event of another pod is shown: %v", row)
			}
			// Left out: events whose presence depends on timing, such as the scheduler's
			// (events.k8s.io) Scheduled events, which it records a little later at times.
			switch row[2] {
			case "Scheduled", "SparkExecutorFailed":
				continue
			}
			got = append(got, row[:4])
		}
		want := [][]string{
			{"LAST SEEN", "TYPE", "REASON", "OBJECT"},
			{"AGE", "Normal", "Pulled", "pod/" + app.DriverPodName()},
			{"AGE", "Normal", "SparkApplicationSubmitted", "sparkapplication/" + name},
			{"AGE", "Normal", "SparkDriverRunning", "sparkapplication/" + name},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}

		// -f prints what was there, then what comes, until cancelled.
		fctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var out, errOut syncBuffer
		wait := startSparkctl(t, fctx, "", ns, &out, &errOut, "event", name, "-f")
		cluster.Eventually(t, 10*time.Second, "the existing events", func() (bool, error) {
			return strings.Contains(out.String(), "SparkApplicationSubmitted"), nil
		})
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: ns, GenerateName: "sparkctl-test-"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: execPods[1].Name, UID: execPods[1].UID, APIVersion: "v1"},
			Reason:         "TestFollow", Message: "followed event", Type: corev1.EventTypeWarning,
			FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1,
			Source: corev1.EventSource{Component: "sparkctl-test"},
		}
		if err := c.Create(ctx, ev); err != nil {
			t.Fatal(err)
		}
		cluster.Eventually(t, 10*time.Second, "the followed event", func() (bool, error) {
			return strings.Contains(out.String(), "TestFollow"), nil
		})
		cancel()
		if err := wait(); err != nil {
			t.Errorf("event -f ended with %v: %s", err, errOut.String())
		}
		if !regexp.MustCompile(`Warning\s+TestFollow\s+pod/` + execPods[1].Name + `\s+followed event`).MatchString(out.String()) {
			t.Errorf("followed event row missing:\n%s", out.String())
		}
	})

	t.Run("log", func(t *testing.T) {
		lines := []string{"Pi is roughly 3.14159", "Stopped Spark web UI"}
		logFile := filepath.Join(t.TempDir(), "driver.log")
		var b strings.Builder
		for _, l := range lines {
			fmt.Fprintf(&b, "2026-01-01T00:00:00.000000000Z stdout F %s\n", l)
		}
		if err := os.WriteFile(logFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		createKwok(t, c, "Logs", ns, app.DriverPodName(), map[string]any{
			"logs": []any{map[string]any{
				"containers": []any{v1beta2.SparkDriverContainerName},
				"logsFile":   logFile,
			}},
		})
		want := strings.Join(lines, "\n") + "\n"
		var got string
		cluster.Eventually(t, 20*time.Second, "kwok to serve the driver log", func() (bool, error) {
			out, _, err := sparkctl(t, ctx, "", ns, "log", name)
			got = out
			return out == want, err
		})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("log (-want +got):\n%s", diff)
		}
		// An executor without a Logs object gets the cluster's default log.
		out := mustSparkctl(t, ns, "log", name, "-e", "2")
		if !strings.Contains(out, "kwok: this container is simulated") {
			t.Errorf("log -e 2: %q", out)
		}
		_, _, err := sparkctl(t, ctx, "", ns, "log", name, "-e", "7")
		if want := fmt.Sprintf("executor 7 of sparkapplication %q not found in namespace %q", name, ns); err == nil || err.Error() != want {
			t.Errorf("log -e 7: error %v, want %q", err, want)
		}
	})

	t.Run("log -f ends with the pod", func(t *testing.T) {
		// Executor 1 ends; following its log must end too.
		fctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		var out, errOut syncBuffer
		wait := startSparkctl(t, fctx, "", ns, &out, &errOut, "log", name, "-e", "1", "-f")
		cluster.Eventually(t, 20*time.Second, "the followed log", func() (bool, error) {
			return strings.Contains(out.String(), "kwok: this container is simulated"), nil
		})
		if err := executors.Fail(ctx, c, execPods[0], 1); err != nil {
			t.Fatal(err)
		}
		if err := wait(); err != nil {
			t.Errorf("log -f: %v: %s", err, errOut.String())
		}
		if fctx.Err() != nil {
			t.Errorf("log -f did not end when the pod ended")
		}
	})

	t.Run("forward", func(t *testing.T) {
		ui := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "Spark Jobs (%s)", r.URL.Path)
		}))
		defer ui.Close()
		uiPort := ui.Listener.Addr().(*net.TCPAddr).Port
		createKwok(t, c, "PortForward", ns, app.DriverPodName(), map[string]any{
			"forwards": []any{map[string]any{
				"ports":  []any{int64(4040)},
				"target": map[string]any{"address": "127.0.0.1", "port": int64(uiPort)},
			}},
		})

		fctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var out, errOut syncBuffer
		wait := startSparkctl(t, fctx, "", ns, &out, &errOut, "forward", name, "--local-port", "0")
		re := regexp.MustCompile(`^Forwarding from http://127\.0\.0\.1:([0-9]+) -> 4040\n$`)
		var url string
		cluster.Eventually(t, 20*time.Second, "the forwarding line", func() (bool, error) {
			m := re.FindStringSubmatch(out.String())
			if m != nil {
				url = "http://127.0.0.1:" + m[1]
			}
			return m != nil, nil
		})
		var body string
		// kwok may need a moment to pick up the PortForward object.
		cluster.Eventually(t, 20*time.Second, "the UI through the forwarded port", func() (bool, error) {
			resp, err := http.Get(url + "/jobs/")
			if err != nil {
				return false, nil
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			body = string(b)
			return err == nil && resp.StatusCode == http.StatusOK, nil
		})
		if diff := cmp.Diff("Spark Jobs (/jobs/)", body); diff != "" {
			t.Errorf("page (-want +got):\n%s", diff)
		}
		cancel()
		if err := wait(); err != nil {
			t.Errorf("forward ended with %v: %s", err, errOut.String())
		}
	})

	t.Run("create --logs", func(t *testing.T) {
		// The driver ends after 2 seconds; create --logs follows its log until then.
		manifest := strings.Replace(fmt.Sprintf(sparkPiYAML, "logged"), "  driver: {",
			"  driver: {annotations: {kwok.sparkop.dev/run-seconds: \"2\"}, ", 1)
		lctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		defer cancel()
		out, errOut, err := sparkctl(t, lctx, manifest, ns, "create", "-f", "-", "--logs")
		if err != nil || lctx.Err() != nil {
			t.Fatalf("create --logs: %v (context: %v): %s", err, lctx.Err(), errOut)
		}
		want := "sparkapplication \"logged\" created\n"
		if !strings.HasPrefix(out, want) || !strings.Contains(out, "kwok: this container is simulated") {
			t.Errorf("create --logs printed %q, want %q and the driver's log", out, want)
		}
	})

	t.Run("delete", func(t *testing.T) {
		if diff := cmp.Diff("sparkapplication \"spark-pi\" deleted\n", mustSparkctl(t, ns, "delete", name)); diff != "" {
			t.Errorf("delete (-want +got):\n%s", diff)
		}
		cluster.Eventually(t, 60*time.Second, "the application and its pods to be gone", func() (bool, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(app), &v1beta2.SparkApplication{})
			if !apierrors.IsNotFound(err) {
				return false, client.IgnoreNotFound(err)
			}
			var pods corev1.PodList
			err = c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{v1beta2.LabelAppName: name})
			return len(pods.Items) == 0, err
		})
		_, _, err := sparkctl(t, ctx, "", ns, "delete", name)
		if want := fmt.Sprintf("sparkapplication %q not found in namespace %q", name, ns); err == nil || err.Error() != want {
			t.Errorf("deleting it again: error %v, want %q", err, want)
		}
	})
}
