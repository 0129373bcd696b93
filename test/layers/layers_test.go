/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package layers checks that imports run down the project's layers: a package imports only
// packages of a lower layer, or of its own top-level directory. A climbing import is how two
// copies of one fact start (the lower package cannot call the higher one, so it writes its own).
package layers

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/sparkop/spark-operator/"

// layer of each top-level directory, lowest first. Directories of one layer may not import each
// other either: they are peers.
var layer = map[string]int{
	"apis":        0,
	"internal":    1, // small helpers over the API types (names, cron schedules, filters)
	"sparkconf":   2, // spec → Spark properties
	"sparkpod":    3, // spec → pods and demand (reads sparkconf)
	"scheduler":   4, // batch schedulers decide on sparkpod's demand
	"submission":  4, // submitters build pods through sparkpod
	"webhook":     5, // admission: sparkpod's settings, the schedulers' validation and placement
	"controllers": 6,
	"sparkctl":    6,
	"cmd":         7,
	"test":        8,
	"examples":    7, // example programs (an external scheduler) built on the public packages; tests run them
	"hack":        9, // generators that read test helpers
}

func TestImportsRunDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		from := top(fields[0])
		fromLayer, known := layer[from]
		if !known {
			t.Errorf("package %s is in top-level directory %q, which has no layer here: add it to layer", fields[0], from)
			continue
		}
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			checked++
			to := top(imp)
			if to == from {
				continue
			}
			if toLayer, ok := layer[to]; !ok || toLayer >= fromLayer {
				t.Errorf("%s imports %s: %s (layer %d) may import only lower layers, and %s is layer %d",
					strings.TrimPrefix(fields[0], module), strings.TrimPrefix(imp, module), from, fromLayer, to, layer[to])
			}
		}
	}
	if checked == 0 {
		t.Fatal("no import of the module's own packages was seen: the check ran on nothing")
	}
}

// top is the top-level directory of a package of the module ("" for the module root).
func top(pkg string) string {
	rest := strings.TrimPrefix(pkg, module)
	dir, _, _ := strings.Cut(rest, "/")
	return dir
}
