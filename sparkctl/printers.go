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

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"
)

// outputFlags are -o and its companion flags as kubectl has them. Besides the command's own
// table (and -o wide), cli-runtime's printers write json, yaml, name, jsonpath=…,
// jsonpath-file=…, go-template=… and go-template-file=…; custom-columns=… is ours (kubectl's
// lives in kubectl itself, not in a library).
type outputFlags struct {
	print *genericclioptions.PrintFlags
	wide  bool // whether the command has a wide table
}

const (
	outputWide          = "wide"
	outputCustomColumns = "custom-columns="
)

func newOutputFlags(cmd *cobra.Command, wide bool) *outputFlags {
	f := &outputFlags{print: genericclioptions.NewPrintFlags("").WithTypeSetter(scheme), wide: wide}
	f.print.AddFlags(cmd)
	formats := f.print.AllowedFormats()
	if wide {
		formats = append(formats, outputWide)
	}
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(append(formats, outputCustomColumns), cobra.ShellCompDirectiveNoFileComp))
	return f
}

func (f *outputFlags) format() string { return *f.print.OutputFormat }

// printer returns the printer -o asks for, or nil for the command's own table.
func (f *outputFlags) printer() (printers.ResourcePrinter, error) {
	switch format := f.format(); {
	case format == "" || (f.wide && format == outputWide):
		return nil, nil
	case strings.HasPrefix(format, outputCustomColumns):
		return newCustomColumns(strings.TrimPrefix(format, outputCustomColumns))
	}
	p, err := f.print.ToPrinter()
	if genericclioptions.IsNoCompatiblePrinterError(err) {
		formats := f.print.AllowedFormats()
		if f.wide {
			formats = append(formats, outputWide)
		}
		return nil, fmt.Errorf("unknown output format %q: use %s or %sHEADER:JSONPATH,…", f.format(), strings.Join(formats, ", "), outputCustomColumns)
	}
	return p, err
}

// customColumns prints the columns -o custom-columns=NAME:.metadata.name,STATE:.status… names,
// one row per object, as kubectl does.
type customColumns struct {
	headers []string
	paths   []*jsonpath.JSONPath
}

func newCustomColumns(spec string) (*customColumns, error) {
	c := &customColumns{}
	for _, col := range strings.Split(spec, ",") {
		header, path, ok := strings.Cut(col, ":")
		if !ok || header == "" || path == "" {
			return nil, fmt.Errorf("custom-columns: %q is not HEADER:JSONPATH", col)
		}
		if !strings.HasPrefix(path, "{") {
			path = "{" + path + "}"
		}
		jp := jsonpath.New(header).AllowMissingKeys(true)
		if err := jp.Parse(path); err != nil {
			return nil, fmt.Errorf("custom-columns: %s: %w", header, err)
		}
		c.headers, c.paths = append(c.headers, header), append(c.paths, jp)
	}
	return c, nil
}

func (c *customColumns) PrintObj(obj runtime.Object, out io.Writer) error {
	items := []runtime.Object{obj}
	if meta.IsListType(obj) {
		var err error
		if items, err = meta.ExtractList(obj); err != nil {
			return err
		}
	}
	t := newTable(out, c.headers...)
	for _, item := range items {
		data, err := runtime.DefaultUnstructuredConverter.ToUnstructured(item)
		if err != nil {
			return err
		}
		row := make([]string, len(c.paths))
		for i, jp := range c.paths {
			values, err := jp.FindResults(data)
			if err != nil {
				return err
			}
			var cells []string
			for _, v := range values {
				for _, x := range v {
					cells = append(cells, fmt.Sprint(x.Interface()))
				}
			}
			row[i] = orNone(strings.Join(cells, ","))
		}
		t.row(row...)
	}
	return t.flush()
}

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
