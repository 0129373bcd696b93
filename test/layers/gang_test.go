/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package layers

import (
	"os/exec"
	"strings"
	"testing"
)

// rooms are the gang scheduler's packages, lowest first: each may import, of the module's
// packages under scheduler/, only those named in its row (and everything of a lower top-level
// layer, which TestImportsRunDown checks). None may reach a package named in noDeps, directly
// or through another: the decision core decides over a snapshot, it talks to no cluster.
var rooms = []struct {
	pkg    string
	may    []string // packages under scheduler/ it may import
	noDeps []string // import path prefixes it must not depend on at all
}{
	{pkg: "scheduler/key", noDeps: clients},
	{pkg: "scheduler/gang/core", may: []string{"scheduler/key", "scheduler/external"}, noDeps: clients},
	{pkg: "scheduler/gang/gangtest", may: []string{"scheduler/key", "scheduler/gang/core"}, noDeps: clients},
	{pkg: "scheduler/gang/status", may: []string{"scheduler/gang/core"}, noDeps: clients},
	// Placeholder pods, their PriorityClass and the book of swaps: it writes the class, so it
	// may reach the clients.
	{pkg: "scheduler/gang/placeholder", may: []string{"scheduler/gang/core", "scheduler/reservation"}},
	// Releasing gated pods onto their nodes: it patches pods, so it may reach the clients.
	{pkg: "scheduler/gang/release", may: []string{"scheduler/reservation"}},
}

// clients are the packages that talk to the API server.
var clients = []string{"k8s.io/client-go/", "sigs.k8s.io/controller-runtime/"}

func TestGangRoomsRunDown(t *testing.T) {
	for _, r := range rooms {
		t.Run(r.pkg, func(t *testing.T) {
			for _, imp := range goList(t, "{{join .Imports \"\\n\"}}", r.pkg) {
				rel, ok := strings.CutPrefix(imp, module)
				if !ok || top(imp) != "scheduler" {
					continue
				}
				allowed := false
				for _, m := range r.may {
					allowed = allowed || rel == m
				}
				if !allowed {
					t.Errorf("%s imports %s: it may import, under scheduler/, only %v", r.pkg, rel, r.may)
				}
			}
			deps := goList(t, "{{join .Deps \"\\n\"}}", r.pkg)
			for _, no := range r.noDeps {
				for _, dep := range deps {
					if strings.HasPrefix(dep, no) {
						t.Errorf("%s depends on %s: it must not reach %s at all", r.pkg, dep, no)
						break
					}
				}
			}
		})
	}
}

// TestGangRoomsListed fails when a package under scheduler/gang/ has no row in rooms.
func TestGangRoomsListed(t *testing.T) {
	listed := map[string]bool{"scheduler/gang": true} // the controller: it may import every room
	for _, r := range rooms {
		listed[r.pkg] = true
	}
	for _, pkg := range goList(t, "{{.ImportPath}}", "scheduler/gang/...") {
		if rel := strings.TrimPrefix(pkg, module); !listed[rel] {
			t.Errorf("package %s has no row in rooms: say what it may import", rel)
		}
	}
}

// goList runs go list -f format on the module's package pkg and returns its output's lines.
func goList(t *testing.T, format, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", format, module+pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}
