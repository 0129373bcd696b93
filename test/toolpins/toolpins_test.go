/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package toolpins checks that the modules of the binaries make test builds (hack/tools/*,
// cmd/spark-scheduler) take the Kubernetes libraries, and the golang.org/x modules under them,
// at the operator's versions: Go's build cache then compiles those libraries once for all of
// them, which is most of a cold build's time. Kueue and scheduler-plugins are left out: each
// builds on the older Kubernetes release it was made for.
package toolpins

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// shared are the modules whose versions every module below takes from the operator's.
var shared = []string{"k8s.io/api", "k8s.io/apimachinery", "k8s.io/client-go"}

// sharedX are the golang.org/x modules the Kubernetes libraries build on.
var sharedX = []string{"golang.org/x/crypto", "golang.org/x/net", "golang.org/x/sync",
	"golang.org/x/sys", "golang.org/x/term", "golang.org/x/text"}

func TestToolsBuildOnTheOperatorsLibraries(t *testing.T) {
	root := filepath.Join("..", "..")
	want := versions(t, root)
	for _, m := range []struct {
		dir string
		// withX: the module takes the operator's golang.org/x versions too. The real node's
		// modules need other ones (containerd's CRI tools, CoreDNS).
		withX bool
	}{
		{dir: "hack/tools/kubernetes", withX: true},
		{dir: "cmd/spark-scheduler", withX: true},
		{dir: "hack/tools/helm", withX: true},
		{dir: "hack/tools/kwok", withX: true},
		{dir: "hack/tools/cert-manager", withX: true},
		{dir: "hack/tools/coredns"},
		{dir: "hack/tools/node"},
	} {
		t.Run(m.dir, func(t *testing.T) {
			got := versions(t, filepath.Join(root, m.dir))
			check := shared
			if m.withX {
				check = append(append([]string{}, shared...), sharedX...)
			}
			for _, path := range check {
				if got[path] != want[path] {
					t.Errorf("%s takes %s %s, the operator %s: the two builds would each compile it and what builds on it "+
						"(in %s: go get %s@%s, then go mod tidy; for the k8s.io modules of hack/tools/kubernetes and cmd/spark-scheduler, "+
						"their replace lines and k8s.io/kubernetes's release)", m.dir, path, got[path], want[path], m.dir, path, want[path])
				}
			}
		})
	}
}

// versions maps each module of the build list of the module in dir to the version it builds
// with (a replacement's, where one is given).
func versions(t *testing.T, dir string) map[string]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Path}} {{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}", "all")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list -m all in %s: %v\n%s", dir, err, msg)
	}
	v := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, version, ok := strings.Cut(line, " "); ok {
			v[path] = version
		}
	}
	return v
}
