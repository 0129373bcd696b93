/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package doclinks checks the repository's Markdown: every relative link names a file that
// exists, and every #anchor a heading of the page it points into, as GitHub renders them. A
// section moved or renamed then fails here instead of leaving readers at the top of a page.
package doclinks

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// link matches an inline Markdown link's target: [text](target), without a title.
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// heading matches an ATX heading line.
var heading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)

// fence matches the start or end of a fenced code block, in which nothing is a link.
var fence = regexp.MustCompile("^\\s*(```|~~~)")

// notAnchor are the characters GitHub drops when it makes a heading's anchor.
var notAnchor = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)

// anchor is the id GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens.
func anchor(text string) string {
	text = strings.ToLower(strings.TrimSpace(text))
	text = notAnchor.ReplaceAllString(text, "")
	return strings.ReplaceAll(text, " ", "-")
}

// page is one Markdown file: its links (outside code) and its headings' anchors.
type page struct {
	links   []string
	anchors map[string]bool
}

func read(t *testing.T, path string) page {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := page{anchors: map[string]bool{}}
	seen := map[string]int{}
	inCode := false
	for _, line := range strings.Split(string(data), "\n") {
		if fence.MatchString(line) {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			a := anchor(m[1])
			if n := seen[a]; n > 0 {
				p.anchors[a+"-"+strconv.Itoa(n)] = true
			} else {
				p.anchors[a] = true
			}
			seen[a]++
		}
		// Inline code is no link.
		for i, part := range strings.Split(line, "`") {
			if i%2 == 1 {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(part, -1) {
				p.links = append(p.links, m[1])
			}
		}
	}
	return p
}

// root is the repository's top directory: the nearest parent holding go.mod.
func root(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

func TestLinks(t *testing.T) {
	top := root(t)
	pages := map[string]page{}
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != top && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages[path] = read(t, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 10 {
		t.Fatalf("found %d Markdown files under %s: the check would run on next to nothing", len(pages), top)
	}
	checked := 0
	for path, p := range pages {
		rel, _ := filepath.Rel(top, path)
		for _, target := range p.links {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			file, frag, _ := strings.Cut(target, "#")
			dest := path
			if file != "" {
				dest = filepath.Join(filepath.Dir(path), file)
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %q: %s does not exist", rel, target, file)
					continue
				}
			}
			if frag == "" {
				continue
			}
			to, ok := pages[dest]
			if !ok {
				continue // an anchor into a file that is not Markdown (a line of code, say)
			}
			if !to.anchors[frag] {
				t.Errorf("%s: link %q: %s has no heading with anchor #%s", rel, target, filepath.Base(dest), frag)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link was checked")
	}
}

func TestAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"Enforcement: reserved capacity stays reserved":           "enforcement-reserved-capacity-stays-reserved",
		"The Workload API: `batchScheduler: kubernetes`":          "the-workload-api-batchscheduler-kubernetes",
		"Kubeflow's batch schedulers":                             "kubeflows-batch-schedulers",
		"Gang scheduling (`make bench-gang`)":                     "gang-scheduling-make-bench-gang",
		"State in seconds at 1,000 applications (#25 §1)":         "state-in-seconds-at-1000-applications-25-1",
		"Where the figures fall short, and why":                   "where-the-figures-fall-short-and-why",
		"Gang schedulers side by side":                            "gang-schedulers-side-by-side",
		"Restarts and failover":                                   "restarts-and-failover",
		"SparkConnect sessions":                                   "sparkconnect-sessions",
		"Why counting pods is not enough for Spark":               "why-counting-pods-is-not-enough-for-spark",
		"The design: our admission, the Workload API's placement": "the-design-our-admission-the-workload-apis-placement",
	} {
		if got := anchor(heading); got != want {
			t.Errorf("anchor(%q) = %q, want %q", heading, got, want)
		}
	}
}
