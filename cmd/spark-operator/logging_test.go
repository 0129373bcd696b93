/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestJSONLogger: with --zap-encoder=json every entry is one JSON object a line, carrying its
// message, key-value pairs and error; V levels above -v are left out.
func TestJSONLogger(t *testing.T) {
	var out bytes.Buffer
	log := newLogger(&options{logEncoder: "json", logVerbosity: 1}, &out).WithName("sparkapplication")
	log.Info("submitted", "app", "default/pi", "attempt", 2)
	log.V(1).Info("transition", "to", "RUNNING")
	log.V(2).Info("too verbose")
	log.Error(errors.New("boom"), "write failed")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3 (V(2) left out):\n%s", len(lines), out.String())
	}
	for i, want := range []map[string]any{
		{"msg": "submitted", "app": "default/pi", "attempt": 2.0, "logger": "sparkapplication"},
		{"msg": "transition", "to": "RUNNING", "level": 1.0},
		{"msg": "write failed", "error": "boom"},
	} {
		var got map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatalf("line %d is not JSON: %q", i, lines[i])
		}
		if got["ts"] == nil {
			t.Errorf("line %d has no timestamp: %q", i, lines[i])
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("line %d: %s = %#v, want %#v (%q)", i, k, got[k], v, lines[i])
			}
		}
	}
}
