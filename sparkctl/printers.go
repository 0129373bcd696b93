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
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

const none = "<none>"

// Column layout, as kubectl's: at least minColumnWidth wide, columnGap spaces apart.
const (
	minColumnWidth = 6
	columnGap      = 3
)

// table writes aligned columns the way kubectl does: upper-case headers, three spaces apart.
type table struct {
	w *tabwriter.Writer
}

func newTable(out io.Writer, headers ...string) *table {
	t := &table{w: tabwriter.NewWriter(out, minColumnWidth, 4, columnGap, ' ', 0)}
	if len(headers) > 0 {
		t.row(headers...)
	}
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		cells[i] = cleanCell(c)
	}
	fmt.Fprintln(t.w, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.w.Flush() }

// columnWidths are the widths table would give rows' columns, but for the last, which is not
// padded; for rows printed later under the same header (see eventPrinter).
func columnWidths(rows [][]string) []int {
	var widths []int
	for _, row := range rows {
		for i, cell := range row[:len(row)-1] {
			if i == len(widths) {
				widths = append(widths, minColumnWidth)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(cleanCell(cell))+columnGap)
		}
	}
	return widths
}

// writeRow writes row with each column padded to widths (a longer cell still gets the gap).
func writeRow(b *strings.Builder, row []string, widths []int) {
	for i, cell := range row {
		cell = cleanCell(cell)
		b.WriteString(cell)
		if i == len(row)-1 {
			break
		}
		width := columnGap
		if i < len(widths) {
			width = max(widths[i], utf8.RuneCountInString(cell)+columnGap)
		}
		b.WriteString(strings.Repeat(" ", width-utf8.RuneCountInString(cell)))
	}
	b.WriteByte('\n')
}

// cleanCell replaces tabs and newlines, which would break the alignment.
func cleanCell(c string) string { return strings.NewReplacer("\t", " ", "\n", " ").Replace(c) }

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
