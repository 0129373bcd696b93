/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package eventnote

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestCut(t *testing.T) {
	long := strings.Repeat("a", 10_000)
	keep := Limit - len(CutMark)
	for _, tc := range []struct {
		name, note string
		limit      int
		want       string
	}{
		{"short", "driver pod pi-driver created", Limit, "driver pod pi-driver created"},
		{"exactly the limit", long[:Limit], Limit, long[:Limit]},
		{"one byte over", long[:Limit+1], Limit, long[:keep] + CutMark},
		{"long", long, Limit, long[:keep] + CutMark},
		// "é" is two bytes: the cut falls inside the character at the boundary and drops it.
		{"multi-byte at the cut", "x" + strings.Repeat("é", 100), 60, "x" + strings.Repeat("é", (60-len(CutMark)-1)/2) + CutMark},
		// "世" is three bytes.
		{"three-byte characters", strings.Repeat("世", 400), Limit, strings.Repeat("世", keep/3) + CutMark},
		{"no room for the mark", long, 5, "… ("},
	} {
		got := Cut(tc.note, tc.limit)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
		if len(got) > tc.limit || !utf8.ValidString(got) {
			t.Errorf("%s: %d bytes (limit %d), valid UTF-8 %v", tc.name, len(got), tc.limit, utf8.ValidString(got))
		}
	}
}

type seen struct{ notes []string }

func (s *seen) Eventf(_, _ runtime.Object, _, _, _, note string, args ...any) {
	s.notes = append(s.notes, fmt.Sprintf(note, args...))
}

func (s *seen) AnnotatedEventf(regarding, related runtime.Object, _ map[string]string, typ, reason, action, note string, args ...any) {
	s.Eventf(regarding, related, typ, reason, action, note, args...)
}

// TestRecorder: the wrapper formats the note as the recorder would, cuts it, and hands it on
// as a literal, so a '%' in a value is not read as a verb a second time.
func TestRecorder(t *testing.T) {
	next := &seen{}
	r := Wrap(next)
	if Wrap(r) != r {
		t.Error("wrapping twice should keep one wrapper")
	}
	r.Eventf(nil, nil, "Warning", "SubmissionFailed", "Submit", "%s", strings.Repeat("x", 5000))
	r.AnnotatedEventf(nil, nil, nil, "Normal", "Created", "Create", "pod %s at 100%%", "p")
	want := []string{strings.Repeat("x", Limit-len(CutMark)) + CutMark, "pod p at 100%"}
	if diff := cmp.Diff(want, next.notes); diff != "" {
		t.Errorf("notes passed on (-want +got):\n%s", diff)
	}
}
