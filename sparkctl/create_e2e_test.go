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
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// createKwok creates a kwok.x-k8s.io/v1alpha1 object of kind with spec.
func createKwok(t *testing.T, c client.Client, kind, ns, name string, spec map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1",
		"kind":       kind,
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       spec,
	}}
	if err := c.Create(context.Background(), u); err != nil {
		t.Fatalf("creating kwok %s: %v", kind, err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), u) })
}

// TestCreate covers create without the operator: what it refuses, --from and --delete.
func TestCreate(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "sparkctl-create")
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", fmt.Sprintf(sparkPiYAML, "good"))
	local := write("local.yaml", strings.Replace(fmt.Sprintf(sparkPiYAML, "local"),
		"local:///opt/spark/examples/jars/spark-examples.jar", "./target/app.jar", 1))
	otherNS := write("other-ns.yaml", strings.Replace(fmt.Sprintf(sparkPiYAML, "x"), "  name: x\n", "  name: x\n  namespace: elsewhere\n", 1))

	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"local main file", []string{"create", local},
			`spec.mainApplicationFile "./target/app.jar": a local file the cluster cannot read; give a URL (https://, s3a://, hdfs://, ...) or a local:// path inside the image (uploading with --upload-to is not supported yet)`},
		{"upload", []string{"create", local, "--upload-to", "s3a://bucket/deps"},
			"--upload-to: uploading local files is not supported yet; copy them where the cluster can read them and refer to them by URL"},
		{"namespace mismatch", []string{"create", otherNS},
			otherNS + `: the manifest's namespace "elsewhere" does not match the namespace "` + ns + `" given with -n`},
		{"missing scheduled app", []string{"create", "--from", "nope"},
			`scheduledsparkapplication "nope" not found in namespace "` + ns + `"`},
		{"nothing to create", []string{"create"}, "give either a manifest (FILE or -f FILE) or --from SCHEDULED_APP"},
		{"missing app", []string{"status", "nope"}, `sparkapplication "nope" not found in namespace "` + ns + `"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := sparkctl(t, ctx, "", ns, tc.args...)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("delete replaces", func(t *testing.T) {
		mustSparkctl(t, ns, "create", good)
		first := &v1beta2.SparkApplication{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "good"}, first); err != nil {
			t.Fatal(err)
		}
		out := mustSparkctl(t, ns, "create", good, "--delete")
		if diff := cmp.Diff("sparkapplication \"good\" deleted\nsparkapplication \"good\" created\n", out); diff != "" {
			t.Errorf("output (-want +got):\n%s", diff)
		}
		second := &v1beta2.SparkApplication{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "good"}, second); err != nil {
			t.Fatal(err)
		}
		if first.UID == second.UID {
			t.Error("--delete kept the old application")
		}
	})

	t.Run("from scheduled", func(t *testing.T) {
		app, err := decodeApp([]byte(fmt.Sprintf(sparkPiYAML, "unused")))
		if err != nil {
			t.Fatal(err)
		}
		ssa := &v1beta2.ScheduledSparkApplication{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly", Labels: map[string]string{"team": "data"}},
			Spec: v1beta2.ScheduledSparkApplicationSpec{Schedule: "@daily", Suspend: ptr.To(true),
				Template: app.Spec},
		}
		if err := c.Create(ctx, ssa); err != nil {
			t.Fatal(err)
		}
		before := time.Now().Unix()
		out := mustSparkctl(t, ns, "create", "--from", "nightly")
		m := regexp.MustCompile(`^sparkapplication "(nightly-manual-([0-9]+))" created\n$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("output %q", out)
		}
		if ts, _ := strconv.ParseInt(m[2], 10, 64); ts < before || ts > time.Now().Unix() {
			t.Errorf("run name %s does not carry the creation time", m[1])
		}
		run := &v1beta2.SparkApplication{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: m[1]}, run); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]string{"team": "data", v1beta2.LabelScheduledAppName: "nightly"}, run.Labels); diff != "" {
			t.Errorf("labels (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(ssa.Spec.Template.MainApplicationFile, run.Spec.MainApplicationFile); diff != "" {
			t.Errorf("spec (-want +got):\n%s", diff)
		}
		if len(run.OwnerReferences) != 1 || run.OwnerReferences[0].UID != ssa.UID || ptr.Deref(run.OwnerReferences[0].Controller, false) {
			t.Errorf("owner references %+v: want the scheduled application, not as controller", run.OwnerReferences)
		}
	})
}

// TestCompletion asks for completions the way a shell does (cobra's hidden __complete command)
// and checks the names come from the cluster, filtered by the typed prefix.
func TestCompletion(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "sparkctl-complete")
	for _, name := range []string{"pi-one", "pi-two", "other"} {
		if _, _, err := sparkctl(t, ctx, fmt.Sprintf(sparkPiYAML, name), ns, "create", "-f", "-"); err != nil {
			t.Fatal(err)
		}
	}
	nightly := &v1beta2.ScheduledSparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"},
		Spec: v1beta2.ScheduledSparkApplicationSpec{Schedule: "@daily", Template: v1beta2.SparkApplicationSpec{
			Type: v1beta2.SparkApplicationTypeScala, SparkVersion: "4.0.4", MainApplicationFile: "local:///app.jar"}}}
	if err := c.Create(ctx, nightly); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{args: []string{"__complete", "status", "pi-"}, want: []string{"pi-one", "pi-two"}},
		{args: []string{"__complete", "delete", ""}, want: []string{"other", "pi-one", "pi-two"}},
		{args: []string{"__complete", "status", "pi-one", ""}, want: nil}, // one name only
		{args: []string{"__complete", "create", "--from", "ni"}, want: []string{"nightly"}},
	} {
		t.Run(strings.Join(tc.args[1:], " "), func(t *testing.T) {
			out, _, err := sparkctl(t, ctx, "", ns, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				if line != "" && !strings.HasPrefix(line, ":") { // ":4" is cobra's directive line
					got = append(got, line)
				}
			}
			sort.Strings(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("completions (-want +got):\n%s", diff)
			}
		})
	}
}
