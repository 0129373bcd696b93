/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package external

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// maxResponse bounds what is read of an answer: a scheduler gone wrong must not exhaust the
// operator's memory.
const maxResponse = 16 << 20

// Config says where the external scheduler is.
type Config struct {
	// URL receives the requests (http or https).
	URL string
	// Timeout bounds each request, answer included. Default 5 seconds.
	Timeout time.Duration
	// CAFile, for an https URL, is a PEM bundle of the CAs to trust instead of the system's.
	CAFile string
}

// Client asks the external scheduler.
type Client struct {
	url  string
	http *http.Client
}

// NewClient checks cfg and returns a client for it.
func NewClient(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the external scheduler's URL %q is not an http or https URL", cfg.URL)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.CAFile != "" {
		if u.Scheme != "https" {
			return nil, fmt.Errorf("a CA bundle (%s) is given for the external scheduler, but its URL %s is not https", cfg.CAFile, cfg.URL)
		}
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading the external scheduler's CA bundle: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the external scheduler's CA bundle %s holds no PEM certificate", cfg.CAFile)
		}
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &Client{url: cfg.URL, http: &http.Client{Timeout: cfg.Timeout, Transport: transport}}, nil
}

// URL is where the client sends requests.
func (c *Client) URL() string { return c.url }

// Decide sends req and returns the answer. Any failure (unreachable, a timeout, a status other
// than 200, an answer that does not read or speaks another version) is an error: the caller
// then admits nothing.
func (c *Client) Decide(ctx context.Context, req *Request) (*Response, error) {
	req.APIVersion = APIVersion
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encoding the request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(data) > maxResponse {
		return nil, fmt.Errorf("the answer is larger than %d bytes", maxResponse)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("answered %s: %s", resp.Status, snippet(data))
	}
	return ParseResponse(data)
}

// ParseResponse reads an answer, checking its version.
func ParseResponse(data []byte) (*Response, error) {
	var out Response
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("the answer is not a Response: %w (%s)", err, snippet(data))
	}
	switch out.APIVersion {
	case APIVersion:
	case "":
		return nil, errors.New("the answer has no apiVersion (" + APIVersion + " expected)")
	default:
		return nil, fmt.Errorf("the answer speaks %s; the operator speaks %s", out.APIVersion, APIVersion)
	}
	return &out, nil
}

// snippet is the start of an answer, for a message.
func snippet(data []byte) string {
	s := strings.TrimSpace(string(data))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
