/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package podcompare

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
)

// Allowed lists every accepted difference between the two submitters, by the path that
// Difference prints (properties of spark.properties as Properties["key"]). Keep it as short as
// the truth allows: a real difference is fixed in submission/native, not listed here.
// test/equivalence fails on an entry that none of its applications exercises, so the list
// cannot go stale.
var Allowed = []Allowance{
	{
		Path:            `Properties["spark.kubernetes.driver.podTemplateFile"]`,
		OnlySparkSubmit: true,
		Reason: "the spark-submit submitter passes the driver's customisations as a local pod " +
			"template file (a temporary path on the submitting host); the native submitter writes " +
			"them straight into the pod, so it has no template file to name",
	},
	{
		Path:            `Properties["spark.kubernetes.driver.podTemplateContainerName"]`,
		OnlySparkSubmit: true,
		Reason:          "goes with spark.kubernetes.driver.podTemplateFile, above",
	},
	{
		Path:       `Pod.ObjectMeta.Labels["sparkoperator.k8s.io/customised"]`,
		OnlyNative: `"true"`,
		Reason: "the native submitter writes the webhook's customisations into its driver pod and " +
			"so labels it, for the webhook's object selector to leave it out; the spark-submit " +
			"driver goes through the webhook",
	},
}

// Allowance is one accepted difference.
type Allowance struct {
	Path string
	// OnlySparkSubmit accepts the difference only when the value is absent natively: the
	// native submitter must not have a value of its own there.
	OnlySparkSubmit bool
	// OnlyNative, when set, accepts the difference only when spark-submit has no value and
	// the native submitter this one (JSON).
	OnlyNative string
	Reason     string
}

// Difference is one field in which the two snapshots differ.
type Difference struct {
	Path                string
	SparkSubmit, Native string // JSON of the values; "" when absent
}

func (d Difference) String() string {
	return fmt.Sprintf("%s: spark-submit %s, native %s", d.Path, orAbsent(d.SparkSubmit), orAbsent(d.Native))
}

func orAbsent(v string) string {
	if v == "" {
		return "(absent)"
	}
	return v
}

// AllowedBy returns the entry of Allowed that accepts d, if any.
func (d Difference) AllowedBy() (Allowance, bool) {
	for _, a := range Allowed {
		if a.Path == d.Path && (!a.OnlySparkSubmit || d.Native == "") &&
			(a.OnlyNative == "" || d.SparkSubmit == "" && d.Native == a.OnlyNative) {
			return a, true
		}
	}
	return Allowance{}, false
}

// Compare returns every leaf in which the snapshots differ. Lists are compared in order:
// the order of env variables matters for $(VAR) references, that of containers and volumes
// is kept by the API server.
func Compare(sparkSubmit, native *Snapshot) []Difference {
	var r diffReporter
	cmp.Equal(sparkSubmit, native, cmp.Reporter(&r))
	return r.diffs
}

// diffReporter collects the unequal leaves of a cmp comparison with readable paths.
type diffReporter struct {
	path  cmp.Path
	diffs []Difference
}

func (r *diffReporter) PushStep(ps cmp.PathStep) { r.path = append(r.path, ps) }
func (r *diffReporter) PopStep()                 { r.path = r.path[:len(r.path)-1] }

func (r *diffReporter) Report(rs cmp.Result) {
	if rs.Equal() {
		return
	}
	vx, vy := r.path.Last().Values()
	r.diffs = append(r.diffs, Difference{Path: pathString(r.path), SparkSubmit: jsonOf(vx), Native: jsonOf(vy)})
}

// pathString renders a cmp path as Go-like field access: Pod.Spec.Containers[0].Env[2].Value,
// Properties["spark.master"].
func pathString(p cmp.Path) string {
	var b strings.Builder
	for _, step := range p {
		switch s := step.(type) {
		case cmp.StructField:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Name())
		case cmp.SliceIndex:
			i := s.Key()
			if i < 0 {
				// An element only one side has: name its index on that side.
				x, y := s.SplitKeys()
				i = max(x, y)
			}
			b.WriteString("[" + strconv.Itoa(i) + "]")
		case cmp.MapIndex:
			if k := s.Key(); k.Kind() == reflect.String {
				b.WriteString("[" + strconv.Quote(k.String()) + "]")
			} else {
				fmt.Fprintf(&b, "[%v]", k)
			}
		}
	}
	return b.String()
}

func jsonOf(v reflect.Value) string {
	if !v.IsValid() || !v.CanInterface() {
		return ""
	}
	data, err := json.Marshal(v.Interface())
	if err != nil {
		return fmt.Sprintf("%v", v.Interface())
	}
	return string(data)
}
