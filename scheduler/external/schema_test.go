/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package external_test

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkop/spark-operator/scheduler/external"
)

// TestSchemaMatchesTypes: the published schema (docs/external-scheduler.schema.json) names
// exactly the fields the Go types send and read, and the version this package speaks.
func TestSchemaMatchesTypes(t *testing.T) {
	data, err := os.ReadFile("../../docs/external-scheduler.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs map[string]struct {
			Properties map[string]struct {
				Const string `json:"const"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatalf("the schema does not read: %v", err)
	}
	for _, typ := range []any{external.Request{}, external.Response{}, external.Node{}, external.Queue{}, external.Workload{},
		external.Member{}, external.Pending{}, external.Placement{}, external.Reservation{}, external.Admission{}, external.Waiting{}} {
		rt := reflect.TypeOf(typ)
		def, ok := schema.Defs[rt.Name()]
		if !ok {
			t.Errorf("the schema has no definition of %s", rt.Name())
			continue
		}
		var inSchema []string
		for name := range def.Properties {
			inSchema = append(inSchema, name)
		}
		sort.Strings(inSchema)
		if diff := cmp.Diff(jsonFields(rt), inSchema); diff != "" {
			t.Errorf("%s: fields (-Go +schema):\n%s", rt.Name(), diff)
		}
		if v, ok := def.Properties["apiVersion"]; ok && v.Const != external.APIVersion {
			t.Errorf("%s: the schema's apiVersion is %q, the package speaks %q", rt.Name(), v.Const, external.APIVersion)
		}
	}
}

// jsonFields lists the JSON names of t's fields, embedded structs flattened, sorted.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
