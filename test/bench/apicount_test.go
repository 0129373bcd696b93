/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestRequestOf: the benchmark counts its own requests as the API server does, so that they
// can be taken out of the API server's count.
func TestRequestOf(t *testing.T) {
	tests := []struct {
		method, url, contentType string
		want                     requestKey
	}{
		{"POST", "/api/v1/namespaces/ns/pods", "", requestKey{"POST", "pods"}},
		{"PATCH", "/api/v1/namespaces/ns/pods/p", "application/merge-patch+json", requestKey{"PATCH", "pods"}},
		{"PATCH", "/apis/sparkoperator.k8s.io/v1beta2/namespaces/ns/sparkapplications/a/status", "application/apply-patch+yaml", requestKey{"APPLY", "sparkapplications/status"}},
		{"PUT", "/api/v1/namespaces/ns/pods/p/status", "", requestKey{"PUT", "pods/status"}},
		{"DELETE", "/api/v1/namespaces/ns/pods?labelSelector=a", "", requestKey{"DELETE", "pods"}},
		{"DELETE", "/api/v1/namespaces/ns", "", requestKey{"DELETE", "namespaces"}},
		{"GET", "/api/v1/namespaces/ns/configmaps/c", "", requestKey{"GET", "configmaps"}},
		{"GET", "/api/v1/namespaces/ns/pods?watch=true", "", requestKey{"WATCH", "pods"}},
		{"GET", "/api/v1/nodes", "", requestKey{"LIST", "nodes"}},
		{"GET", "/apis/sparkoperator.k8s.io/v1beta2/namespaces/ns/sparkapplications", "", requestKey{"LIST", "sparkapplications"}},
		{"POST", "/api/v1/namespaces", "", requestKey{"POST", "namespaces"}},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.url, http.NoBody)
		if tt.contentType != "" {
			r.Header.Set("Content-Type", tt.contentType)
		}
		if got := requestOf(r); got != tt.want {
			t.Errorf("%s %s = %v, want %v", tt.method, tt.url, got, tt.want)
		}
	}
}
