/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// spreadColumns are the gang RESULT fields the spread table shows, with their headings and
// how many decimals they are shown with.
var spreadColumns = []struct {
	field, heading string
	decimals       int
}{
	{"partial_starts", "partial starts (peak)", 0},
	{"beyond_fit", "drivers beyond fit (peak)", 0},
	{"unschedulable_executors", "unschedulable executors", 0},
	{"utilisation", "CPU at work", 3},
	{"makespan_s", "makespan s", 0},
	{"finished", "finished", 0},
}

// runSpread is the spread scenario: it reads the gang scenario's RESULT lines from the files
// named as arguments (standard input without any) and prints, as a Markdown table, each
// comparison's runs and the spread (least–most) of its figures over them. A comparison is a
// scheduler (none without gang) with its enforcement and load where they are not the defaults,
// in the order first seen.
func runSpread(_ context.Context, c config) error {
	var in []io.Reader
	for _, name := range c.files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		in = append(in, f)
	}
	if len(in) == 0 {
		in = append(in, os.Stdin)
	}
	runs, order, err := readGangResults(io.MultiReader(in...))
	if err != nil {
		return err
	}
	if len(order) == 0 {
		return fmt.Errorf("spread: no gang RESULT line in the input")
	}
	fmt.Print(spreadTable(runs, order))
	return nil
}

// readGangResults parses the gang RESULT lines of r into their fields, by comparison.
func readGangResults(r io.Reader) (runs map[string][]map[string]string, order []string, err error) {
	runs = map[string][]map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "RESULT ")
		if !ok {
			continue
		}
		fields := map[string]string{}
		for _, kv := range strings.Fields(line) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				fields[k] = v
			}
		}
		if fields["mode"] != "gang" && fields["mode"] != "nogang" {
			continue
		}
		key := comparisonOf(fields)
		if _, seen := runs[key]; !seen {
			order = append(order, key)
		}
		runs[key] = append(runs[key], fields)
	}
	return runs, order, sc.Err()
}

// comparisonOf names the comparison a RESULT line belongs to.
func comparisonOf(fields map[string]string) string {
	name := fields["scheduler"]
	if fields["mode"] == "nogang" || name == "" {
		name = "none"
	}
	if e := fields["enforcement"]; e != "" && e != "advisory" {
		name += " (" + e + ")"
	}
	if l := fields["load"]; l != "" && l != "none" {
		name += ", " + l + " load"
	}
	return name
}

// spreadTable renders the comparisons' runs: a row each, every column the least–most of its
// field over the runs ("–" where no run has it).
func spreadTable(runs map[string][]map[string]string, order []string) string {
	var b strings.Builder
	b.WriteString("| scheduler | runs | apps |")
	sep := "| --- | ---: | ---: |"
	for _, col := range spreadColumns {
		b.WriteString(" " + col.heading + " |")
		sep += " ---: |"
	}
	b.WriteString("\n" + sep + "\n")
	for _, key := range order {
		rs := runs[key]
		fmt.Fprintf(&b, "| `%s` | %d | %s |", key, len(rs), spreadOf(rs, "apps", 0))
		for _, col := range spreadColumns {
			b.WriteString(" " + spreadOf(rs, col.field, col.decimals) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// spreadOf is "least–most" of field over rs (one value when they agree), or "–" where none
// has it as a number.
func spreadOf(rs []map[string]string, field string, decimals int) string {
	var vs []float64
	for _, r := range rs {
		if v, err := strconv.ParseFloat(r[field], 64); err == nil {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return "–"
	}
	lo, hi := slices.Min(vs), slices.Max(vs)
	format := func(v float64) string { return strconv.FormatFloat(v, 'f', decimals, 64) }
	if format(lo) == format(hi) {
		return format(lo)
	}
	return format(lo) + "–" + format(hi)
}
