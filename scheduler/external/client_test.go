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
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkop/spark-operator/scheduler/external"
)

func answering(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

// silent never answers: it holds each request until the client gives up on it (its
// connection closes), so the client's timeout is the only way the call can end. The request is
// read first: the server notices a closed connection only once it has the whole request.
func silent(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}

// TestDecide: every way an answer can fail is an error, never an empty admission. The servers
// that answer do so at once, and are given far longer than that; the one that is too slow never
// answers, so its short timeout is the only thing that can end the call.
func TestDecide(t *testing.T) {
	ok := `{"apiVersion":"` + external.APIVersion + `","admit":[{"kind":"SparkApplication","namespace":"ns","name":"a","driver":"n1"}]}`
	const answers, never = 30 * time.Second, 100 * time.Millisecond
	tests := []struct {
		name    string
		handler http.HandlerFunc
		timeout time.Duration
		wantErr string
		admit   int
	}{
		{"an answer", answering(200, ok), answers, "", 1},
		{"another version", answering(200, `{"apiVersion":"v0"}`), answers, "speaks v0", 0},
		{"no version", answering(200, `{"admit":[]}`), answers, "no apiVersion", 0},
		{"not JSON", answering(200, `<html>`), answers, "not a Response", 0},
		{"an error status", answering(503, "overloaded"), answers, "503 Service Unavailable: overloaded", 0},
		{"too slow", silent, never, "Timeout", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			c, err := external.NewClient(external.Config{URL: srv.URL, Timeout: tt.timeout})
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
	srv := httptest.NewServer(answering(200, "{}"))
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
	srv := httptest.NewTLSServer(answering(200, `{"apiVersion":"`+external.APIVersion+`"}`))
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
