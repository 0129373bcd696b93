/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

const none = "<none>"

// table writes aligned columns the way kubectl does: upper-case headers, three spaces apart.
type table struct {
	w *tabwriter.Writer
}

func newTable(out io.Writer, headers ...string) *table {
	t := &table{w: tabwriter.NewWriter(out, 6, 4, 3, ' ', 0)}
	if len(headers) > 0 {
		t.row(headers...)
	}
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		// A tab or newline inside a cell would break the alignment.
		cells[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(c)
	}
	fmt.Fprintln(t.w, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.w.Flush() }

// age is how long ago t was, as kubectl prints it ("5m", "2d3h"), or <none> for no time.
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return none
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// orNone returns s, or <none> when it is empty.
func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}
