/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package scheduler

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// failingMapper is a RESTMapper whose discovery fails.
type failingMapper struct{ meta.RESTMapper }

func (failingMapper) RESTMapping(schema.GroupKind, ...string) (*meta.RESTMapping, error) {
	return nil, errors.New("the server is currently unable to handle the request")
}

func TestCheckCRDInstalled(t *testing.T) {
	kind := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Group"}
	want := MissingCRDError{Scheduler: "ex", Kind: kind, CRD: "groups.example.com", Install: "Example"}
	served := meta.NewDefaultRESTMapper(nil)
	served.Add(kind, meta.RESTScopeNamespace)
	tests := []struct {
		name        string
		mapper      meta.RESTMapper
		wantMissing bool
		wantErr     string
	}{
		{name: "served", mapper: served},
		{name: "not served: a MissingCRDError saying what to install", mapper: meta.NewDefaultRESTMapper(nil), wantMissing: true,
			wantErr: "batch scheduler ex needs the groups.example.com CRD (example.com/v1 Group), which is not installed in this cluster: install Example, or name another batch scheduler"},
		{name: "discovery failing: another error, to retry", mapper: failingMapper{}, wantErr: "batch scheduler ex: looking up example.com/v1, Kind=Group: the server is currently unable"},
		{name: "no mapper", wantErr: "no RESTMapper"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckCRDInstalled(tt.mapper, want)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
			}
			if IsMissingCRD(err) != tt.wantMissing {
				t.Errorf("IsMissingCRD = %t, want %t", !tt.wantMissing, tt.wantMissing)
			}
		})
	}
}
