/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package promnames finds the metric names that the chart's Grafana dashboard and Prometheus
// rules query, and tells whether a scrape serves them, so that tests can hold the two to what
// the operator serves.
package promnames

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

var (
	quoted     = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	braces     = regexp.MustCompile(`\{[^{}]*\}`)
	brackets   = regexp.MustCompile(`\[[^\[\]]*\]`)
	grouping   = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	identifier = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	// keywords are PromQL's words that are not metric names when not followed by "(".
	keywords = []string{"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "inf", "nan"}
)

// InExpr returns the metric names that a PromQL expression selects, sorted and without repeats.
// It knows PromQL's shape well enough for the chart's queries: label matchers, ranges, grouping
// clauses and strings are removed, then every identifier that is neither a function (followed
// by "(") nor a keyword nor a number is a metric name.
func InExpr(expr string) []string {
	s := quoted.ReplaceAllString(expr, `""`)
	s = braces.ReplaceAllString(s, " ")
	s = brackets.ReplaceAllString(s, " ")
	s = grouping.ReplaceAllString(s, " ")
	var names []string
	for _, loc := range identifier.FindAllStringIndex(s, -1) {
		name := s[loc[0]:loc[1]]
		if loc[0] > 0 && (s[loc[0]-1] >= '0' && s[loc[0]-1] <= '9' || s[loc[0]-1] == '.') {
			continue // the exponent or unit of a number: 1e3, 5m
		}
		rest := strings.TrimLeft(s[loc[1]:], " \t\n")
		if strings.HasPrefix(rest, "(") || slices.Contains(keywords, strings.ToLower(name)) {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// InDashboard returns the metric names the expressions of a Grafana dashboard's panels (and
// the panels of its rows) select.
func InDashboard(dashboard []byte) ([]string, error) {
	type panel struct {
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
		Panels []json.RawMessage `json:"panels"`
	}
	var d panel
	if err := json.Unmarshal(dashboard, &d); err != nil {
		return nil, err
	}
	var exprs []string
	var walk func(p panel) error
	walk = func(p panel) error {
		for _, t := range p.Targets {
			exprs = append(exprs, t.Expr)
		}
		for _, raw := range p.Panels {
			var sub panel
			if err := json.Unmarshal(raw, &sub); err != nil {
				return err
			}
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(d); err != nil {
		return nil, err
	}
	if len(exprs) == 0 {
		return nil, fmt.Errorf("no panel has a query")
	}
	return namesOf(exprs), nil
}

// InRules returns the metric names the expressions of Prometheus rule groups select (the
// "groups:" document, as a PrometheusRule's spec holds it).
func InRules(rules []byte) ([]string, error) {
	var doc struct {
		Groups []struct {
			Name     string `json:"name"`
			Interval string `json:"interval,omitempty"`
			Rules    []struct {
				Alert         string            `json:"alert,omitempty"`
				Record        string            `json:"record,omitempty"`
				Expr          string            `json:"expr"`
				For           string            `json:"for,omitempty"`
				KeepFiringFor string            `json:"keep_firing_for,omitempty"`
				Labels        map[string]string `json:"labels,omitempty"`
				Annotations   map[string]string `json:"annotations,omitempty"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(rules, &doc); err != nil {
		return nil, err
	}
	var exprs []string
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	if len(exprs) == 0 {
		return nil, fmt.Errorf("no rule has an expression")
	}
	return namesOf(exprs), nil
}

func namesOf(exprs []string) []string {
	var names []string
	for _, e := range exprs {
		names = append(names, InExpr(e)...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Served is what a scrape of a /metrics endpoint serves: each family's type by name.
type Served map[string]dto.MetricType

// Parse reads a scrape in Prometheus's text format.
func Parse(r io.Reader) (Served, error) {
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	s := Served{}
	for name, f := range families {
		s[name] = f.GetType()
	}
	return s, nil
}

// Has reports whether a query may select name: a family of that name, or the _bucket, _sum or
// _count series of a histogram or summary family.
func (s Served) Has(name string) bool {
	if _, ok := s[name]; ok {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		switch s[base] {
		case dto.MetricType_HISTOGRAM:
			return true
		case dto.MetricType_SUMMARY:
			return suffix != "_bucket"
		}
	}
	return false
}
