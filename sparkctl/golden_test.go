/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got; -update rewrites it):\n%s", path, diff)
	}
}

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func fixtureApps() []v1beta2.SparkApplication {
	return []v1beta2.SparkApplication{
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "new-app", CreationTimestamp: ago(3 * time.Second)},
			Spec:       v1beta2.SparkApplicationSpec{Type: v1beta2.SparkApplicationTypePython},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "spark-pi", CreationTimestamp: ago(90 * time.Minute)},
			Spec:       v1beta2.SparkApplicationSpec{Type: v1beta2.SparkApplicationTypeScala},
			Status: v1beta2.SparkApplicationStatus{
				SparkApplicationID:        "spark-0a1b2c3d",
				LastSubmissionAttemptTime: ago(89 * time.Minute),
				AppState:                  v1beta2.ApplicationState{State: v1beta2.ApplicationStateRunning},
				DriverInfo:                v1beta2.DriverInfo{PodName: "spark-pi-driver", WebUIAddress: "10.96.4.2:4040", WebUIServiceName: "spark-pi-ui-svc", WebUIPort: 4040},
				SubmissionAttempts:        1, ExecutionAttempts: 1,
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "nightly-report-1772280000", CreationTimestamp: ago(50 * time.Hour)},
			Spec:       v1beta2.SparkApplicationSpec{Type: v1beta2.SparkApplicationTypeJava},
			Status: v1beta2.SparkApplicationStatus{
				LastSubmissionAttemptTime: ago(49 * time.Hour),
				TerminationTime:           ago(48 * time.Hour),
				AppState:                  v1beta2.ApplicationState{State: v1beta2.ApplicationStateFailed, ErrorMessage: "driver pod failed with exit code 1: java.lang.OutOfMemoryError"},
				DriverInfo:                v1beta2.DriverInfo{PodName: "nightly-report-1772280000-driver"},
				SubmissionAttempts:        3, ExecutionAttempts: 3,
			},
		},
	}
}

func TestListTableGolden(t *testing.T) {
	for _, tc := range []struct {
		golden        string
		allNamespaces bool
		wide          bool
	}{
		{"list.golden", false, false},
		{"list-all-namespaces.golden", true, false},
		{"list-wide.golden", false, true},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			var out bytes.Buffer
			if err := printAppTable(&out, fixtureApps(), tc.allNamespaces, tc.wide, now); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.golden, out.String())
		})
	}
}

func TestStatusGolden(t *testing.T) {
	running := fixtureApps()[1]
	running.Status.ExecutorState = map[string]v1beta2.ExecutorState{
		"spark-pi-5f1e2d3c4b5a6978-exec-10": v1beta2.ExecutorStateRunning,
		"spark-pi-5f1e2d3c4b5a6978-exec-2":  v1beta2.ExecutorStateFailed,
		"spark-pi-5f1e2d3c4b5a6978-exec-1":  v1beta2.ExecutorStateRunning,
		"custom-executor-name":              v1beta2.ExecutorStatePending,
	}
	ids := map[string]string{"custom-executor-name": "11"}
	for _, tc := range []struct {
		golden string
		app    v1beta2.SparkApplication
		ids    map[string]string
	}{
		{"status-new.golden", fixtureApps()[0], nil},
		{"status-running.golden", running, ids},
		{"status-failed.golden", fixtureApps()[2], nil},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			var out bytes.Buffer
			if err := printStatus(&out, &tc.app, tc.ids, now); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.golden, out.String())
		})
	}
}

func TestEventsGolden(t *testing.T) {
	events := []corev1.Event{
		{ // written through events.k8s.io/v1: only eventTime is set
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "spark-pi-driver"},
			Type:           corev1.EventTypeNormal, Reason: "SparkDriverRunning", Message: "driver pod spark-pi-driver is running",
			EventTime: metav1.NewMicroTime(now.Add(-10 * time.Second)),
		},
		{ // a core/v1 event repeated several times
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "spark-pi-driver"},
			Type:           corev1.EventTypeNormal, Reason: "Scheduled", Message: "Successfully assigned team-a/spark-pi-driver to kwok-node-0",
			FirstTimestamp: ago(time.Minute), LastTimestamp: ago(50 * time.Second),
		},
		{
			InvolvedObject: corev1.ObjectReference{Kind: "SparkApplication", Name: "spark-pi"},
			Type:           corev1.EventTypeNormal, Reason: "SparkApplicationSubmitted", Message: "submitted\n",
			EventTime: metav1.NewMicroTime(now.Add(-55 * time.Second)),
		},
	}
	var out bytes.Buffer
	printer := &eventPrinter{out: &out}
	if err := printer.print(events, now); err != nil {
		t.Fatal(err)
	}
	golden(t, "events.golden", out.String())
	header, _, _ := strings.Cut(out.String(), "\n")

	// A followed event, printed alone, stays under the header; a cell longer than its column
	// pushes only the rest of its own row.
	for _, tc := range []struct{ reason, object string }{{"Pulled", "spark-pi-driver"}, {"AReasonLongerThanAnyBefore", "spark-pi-driver"}} {
		out.Reset()
		followed := []corev1.Event{{
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: tc.object}, Type: corev1.EventTypeNormal,
			Reason: tc.reason, Message: "m", LastTimestamp: ago(time.Second),
		}}
		if err := printer.print(followed, now); err != nil {
			t.Fatal(err)
		}
		row := out.String()
		for _, col := range []string{"TYPE", "REASON"} {
			if want, got := strings.Index(header, col), strings.Index(row, map[string]string{"TYPE": "Normal", "REASON": tc.reason}[col]); want != got {
				t.Errorf("followed row %q: %s at %d, header's at %d", row, col, got, want)
			}
		}
		if tc.reason == "Pulled" && strings.Index(row, "pod/") != strings.Index(header, "OBJECT") {
			t.Errorf("followed row %q: OBJECT not under its header %q", row, header)
		}
	}
}

func TestCheckRemoteFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec v1beta2.SparkApplicationSpec
		want string // "" for no error, else a part of the error
	}{
		{"image path", v1beta2.SparkApplicationSpec{MainApplicationFile: "local:///opt/spark/examples/jars/spark-examples.jar"}, ""},
		{"remote URLs", v1beta2.SparkApplicationSpec{MainApplicationFile: "s3a://bucket/app.py",
			Deps: v1beta2.Dependencies{PyFiles: []string{"https://example.com/lib.zip"}, Jars: []string{"hdfs://nn/x.jar"},
				Packages: []string{"org.apache.hadoop:hadoop-aws:3.4.1"}}}, ""},
		{"plain path", v1beta2.SparkApplicationSpec{MainApplicationFile: "app.py"}, `spec.mainApplicationFile "app.py"`},
		{"file URL", v1beta2.SparkApplicationSpec{MainApplicationFile: "file:///home/me/app.jar"}, `spec.mainApplicationFile "file:///home/me/app.jar"`},
		{"local deps", v1beta2.SparkApplicationSpec{MainApplicationFile: "local:///app.py",
			Deps: v1beta2.Dependencies{Jars: []string{"gs://b/ok.jar", "lib/dep.jar"}, Files: []string{"/etc/conf.txt"},
				PyFiles: []string{"util.py"}, Archives: []string{"file:///env.tgz"}}},
			`spec.deps.jars[1] "lib/dep.jar", spec.deps.files[0] "/etc/conf.txt", spec.deps.pyFiles[0] "util.py", spec.deps.archives[0] "file:///env.tgz"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkRemoteFiles(&tc.spec)
			got := ""
			if err != nil {
				got = err.Error()
				if !strings.Contains(got, tc.want) || tc.want == "" {
					t.Fatalf("error %q, want one containing %q", got, tc.want)
				}
				return
			}
			if tc.want != "" {
				t.Fatalf("no error, want one containing %q", tc.want)
			}
		})
	}
}

func TestDecodeApp(t *testing.T) {
	for _, tc := range []struct {
		name, manifest, wantErr string
	}{
		{"ok", "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: a}\nspec: {type: Scala, sparkVersion: 4.0.4, mainApplicationFile: local:///a.jar, driver: {}, executor: {}}\n", ""},
		{"other kind", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n", `found kind "Pod" of apiVersion "v1"`},
		{"typo", "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: a}\nspec: {mainAplicationFile: x}\n", `unknown field "mainAplicationFile"`},
		{"two documents", "# comment\napiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: a}\n---\napiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: b}\n", "found 2 documents"},
		{"no name", "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nspec: {}\n", "no metadata.name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeApp([]byte(tc.manifest))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if (tc.wantErr == "") != (got == "") || !strings.Contains(got, tc.wantErr) {
				t.Fatalf("error %q, want one containing %q", got, tc.wantErr)
			}
		})
	}
}

func TestCommandName(t *testing.T) {
	for _, tc := range []struct{ argv0, use, display string }{
		{"/usr/local/bin/sparkctl", "sparkctl", ""},
		{"sparkctl.test", "sparkctl", ""},
		{"/home/me/bin/kubectl-spark", "kubectl-spark", "kubectl spark"},
		{`C:\bin\kubectl-spark.exe`, "kubectl-spark", "kubectl spark"},
		{"kubectl-spark_app", "kubectl-spark_app", "kubectl spark-app"},
	} {
		use, display := commandName(tc.argv0)
		if diff := cmp.Diff([]string{tc.use, tc.display}, []string{use, display}); diff != "" {
			t.Errorf("commandName(%q) (-want +got):\n%s", tc.argv0, diff)
		}
	}
	if testing.Short() {
		return
	}
	if manualRunName("nightly", now) != "nightly-manual-1772366400" {
		t.Errorf("manualRunName = %q", manualRunName("nightly", now))
	}
}

func TestOfflineCommands(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    string // a regular expression the output must match
		wantErr string
	}{
		{[]string{"version"}, `^sparkctl \S+ \(go[0-9.]+\S*, \w+/\w+\)\n$`, ""},
		{[]string{"completion", "bash"}, `(?s)^# bash completion V2 for sparkctl.*__start_sparkctl`, ""},
		{[]string{"completion", "zsh"}, `(?s)^#compdef sparkctl`, ""},
		{[]string{"completion", "fish"}, `(?s)^# fish completion for sparkctl`, ""},
		{[]string{"completion", "tcsh"}, `^$`, `invalid argument "tcsh" for "sparkctl completion"`},
		{[]string{"list", "-o", "table"}, `^$`, `unknown output format "table": use json, yaml, kyaml, name, go-template, go-template-file, ` +
			`template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file, wide or custom-columns=HEADER:JSONPATH,…`},
		{[]string{"status", "app", "-o", "wide"}, `^$`, `unknown output format "wide": use json, yaml, kyaml, name, go-template, go-template-file, ` +
			`template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file or custom-columns=HEADER:JSONPATH,…`},
		{[]string{"list", "-o", "custom-columns=NAME"}, `^$`, `custom-columns: "NAME" is not HEADER:JSONPATH`},
		{[]string{"delete"}, `^$`, `name a sparkapplication, give a pattern such as 'nightly-*', or select by label with -l`},
		{[]string{"status", "[nightly"}, `^$`, `bad pattern "[nightly": syntax error in pattern`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd := NewRootCommand(IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			cmd.SetArgs(tc.args)
			err := cmd.Execute()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if !regexp.MustCompile(tc.want).MatchString(out.String()) {
				t.Errorf("output does not match %s:\n%.300s", tc.want, out.String())
			}
		})
	}
}

func TestCustomColumns(t *testing.T) {
	list := &v1beta2.SparkApplicationList{Items: fixtureApps()}
	p, err := newCustomColumns("NAME:.metadata.name,STATE:.status.applicationState.state,EXECUTORS:.spec.executor.instances")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := p.PrintObj(list, &out); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	tw := newTable(&want, "NAME", "STATE", "EXECUTORS")
	for _, app := range list.Items {
		instances := none
		if app.Spec.Executor.Instances != nil {
			instances = fmt.Sprint(*app.Spec.Executor.Instances)
		}
		tw.row(app.Name, orNone(string(app.Status.AppState.State)), instances)
	}
	if err := tw.flush(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.String(), out.String()); diff != "" {
		t.Errorf("custom columns (-want +got):\n%s", diff)
	}
}

func TestMatches(t *testing.T) {
	app := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Name: "nightly-report-1"}}
	app.Status.SubmissionID = "3f2a-77"
	for _, tc := range []struct {
		pattern string
		want    bool
	}{
		{"nightly-*", true},
		{"nightly-report-?", true},
		{"nightly", false},
		{"3f2a-*", true},
		{"*-77", true},
		{"weekly-*", false},
		{"[a-z]*", true},
	} {
		if got := matches(tc.pattern, app); got != tc.want {
			t.Errorf("matches(%q) = %v, want %v", tc.pattern, got, tc.want)
		}
	}
	if matches("*", &v1beta2.SparkApplication{}) {
		t.Errorf("an empty submission ID matched")
	}
}
