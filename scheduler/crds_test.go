/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package scheduler

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// failingMapper fails as discovery does when the API server cannot be reached.
type failingMapper struct{ meta.RESTMapper }

func (failingMapper) RESTMapping(schema.GroupKind, ...string) (*meta.RESTMapping, error) {
	return nil, errors.New("connection refused")
}

func TestRequireCRDs(t *testing.T) {
	pg := CRD{Name: "podgroups.scheduling.x-k8s.io", GVK: schema.GroupVersionKind{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroup"}}
	queue := CRD{Name: "queues.example.com", GVK: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Queue"}}
	installed := meta.NewDefaultRESTMapper(nil)
	installed.Add(pg.GVK, meta.RESTScopeNamespace)
	tests := []struct {
		name    string
		mapper  meta.RESTMapper
		crds    []CRD
		want    string
		missing bool
	}{
		{name: "installed", mapper: installed, crds: []CRD{pg}},
		{name: "the first missing one is named", mapper: installed, crds: []CRD{pg, queue}, missing: true,
			want: "batch scheduler x needs the CRD queues.example.com (example.com/v1, Kind=Queue), which is not installed in the cluster: install it from the manual"},
		{name: "discovery failing is no refusal", mapper: failingMapper{}, crds: []CRD{pg},
			want: "batch scheduler x: checking for the CRD podgroups.scheduling.x-k8s.io: connection refused"},
		{name: "no mapper", crds: []CRD{pg}, want: "batch scheduler x: no REST mapper to check its CRDs with"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := RequireCRDs(tt.mapper, "x", "the manual", tt.crds...)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want || IsMissingCRD(err) != tt.missing {
				t.Errorf("err = %q (missing CRD: %v), want %q (%v)", got, IsMissingCRD(err), tt.want, tt.missing)
			}
		})
	}
}
