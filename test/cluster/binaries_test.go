/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildCommandFromBinariesEnv: with BinariesEnv set, the binaries are taken from its folder,
// never built, and one missing there is an error that names the variable.
func TestBuildCommandFromBinariesEnv(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sparkctl"), []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BinariesEnv, dir)
	tests := []struct {
		name, want, err string
	}{
		{name: "sparkctl", want: filepath.Join(dir, "sparkctl")},
		{name: "spark-operator", err: BinariesEnv + " is set, but spark-operator is not built"},
	}
	for _, tt := range tests {
		got, err := buildCommand(tt.name)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("buildCommand(%q) = %q, %v; want %q, an error containing %q", tt.name, got, err, tt.want, tt.err)
		}
	}
}
