/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package external_test

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkop/spark-operator/scheduler/external"
)

func answering(status int, body string, delay time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

// TestDecide: every way an answer can fail is an error, never an empty admission.
func TestDecide(t *testing.T) {
	ok := `{"apiVersion":"` + external.APIVersion + `","admit":[{"kind":"SparkApplication","namespace":"ns","name":"a","driver":"n1"}]}`
	tests := []struct {
		name    string
		handler http.HandlerFunc
		wantErr string
		admit   int
	}{
		{"an answer", answering(200, ok, 0), "", 1},
		{"another version", answering(200, `{"apiVersion":"v0"}`, 0), "speaks v0", 0},
		{"no version", answering(200, `{"admit":[]}`, 0), "no apiVersion", 0},
		{"not JSON", answering(200, `<html>`, 0), "not a Response", 0},
		{"an error status", answering(503, "overloaded", 0), "503 Service Unavailable: overloaded", 0},
		{"too slow", answering(200, ok, 2*time.Second), "Timeout", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			c, err := external.NewClient(external.Config{URL: srv.URL, Timeout: 500 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Decide(context.Background(), &external.Request{})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Decide: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Decide error = %v, want one saying %q", err, tt.wantErr)
			case tt.wantErr == "" && len(got.Admit) != tt.admit:
				t.Fatalf("admitted %d, want %d", len(got.Admit), tt.admit)
			}
		})
	}
}

// TestDecideUnreachable: nothing listening is an error.
func TestDecideUnreachable(t *testing.T) {
	srv := httptest.NewServer(answering(200, "{}", 0))
	url := srv.URL
	srv.Close()
	c, err := external.NewClient(external.Config{URL: url, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Decide(context.Background(), &external.Request{}); err == nil {
		t.Fatal("Decide against a closed server succeeded")
	}
}

// TestDecideTLS: an https scheduler is trusted through the CA bundle given, and not without it.
func TestDecideTLS(t *testing.T) {
	srv := httptest.NewTLSServer(answering(200, `{"apiVersion":"`+external.APIVersion+`"}`, 0))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	trusted, err := external.NewClient(external.Config{URL: srv.URL, CAFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trusted.Decide(context.Background(), &external.Request{}); err != nil {
		t.Errorf("with the CA bundle: %v", err)
	}
	untrusted, err := external.NewClient(external.Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := untrusted.Decide(context.Background(), &external.Request{}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA bundle: %v, want a certificate error", err)
	}
}

// TestNewClientRefusesBadConfig: a bad URL or CA bundle is refused at start, with why.
func TestNewClientRefusesBadConfig(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cfg  external.Config
		want string
	}{
		{external.Config{URL: "scheduler:8090"}, "not an http or https URL"},
		{external.Config{URL: "ftp://x/"}, "not an http or https URL"},
		{external.Config{URL: "http://x/", CAFile: notPEM}, "is not https"},
		{external.Config{URL: "https://x/", CAFile: notPEM}, "holds no PEM certificate"},
		{external.Config{URL: "https://x/", CAFile: "/nonexistent"}, "reading the external scheduler's CA bundle"},
	}
	for _, tt := range tests {
		if _, err := external.NewClient(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewClient(%+v) = %v, want an error saying %q", tt.cfg, err, tt.want)
		}
	}
}
