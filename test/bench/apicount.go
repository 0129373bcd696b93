/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
)

// What a run costs the API server, from its own count (apiserver_request_total) taken before
// and after, less the requests the benchmark itself sent (counted by its transport): what the
// operator, the kube-scheduler, the controller manager and kwok's kubelets did for the
// applications. Node heartbeats (leases, node status) happen whatever runs and are left out;
// watches are long-running and counted apart from reads.

// requestKey is one verb on one resource ("PATCH pods/status").
type requestKey struct{ verb, resource string }

func (k requestKey) write() bool {
	switch k.verb {
	case "POST", "PUT", "PATCH", "DELETE", "APPLY":
		return true
	}
	return false
}

func (k requestKey) read() bool { return k.verb == "GET" || k.verb == "LIST" }

// background resources are written whatever runs.
func background(resource string) bool {
	base, _, _ := strings.Cut(resource, "/")
	return base == "leases" || base == "nodes"
}

// apiServerRequests reads the API server's request counts.
func apiServerRequests(ctx context.Context, cs kubernetes.Interface) (map[requestKey]float64, error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(raw)))
	if err != nil {
		return nil, err
	}
	return requestCounts(families["apiserver_request_total"]), nil
}

func requestCounts(f *dto.MetricFamily) map[requestKey]float64 {
	out := map[requestKey]float64{}
	for _, m := range f.GetMetric() {
		res := labelValue(m, "resource")
		if sub := labelValue(m, "subresource"); sub != "" {
			res += "/" + sub
		}
		out[requestKey{labelValue(m, "verb"), res}] += m.GetCounter().GetValue()
	}
	return out
}

// countingTransport counts the benchmark's own requests, as the API server would.
type countingTransport struct {
	next http.RoundTripper
	mu   *sync.Mutex
	n    map[requestKey]float64
}

// ownRequests is shared by every client the benchmark makes from its rest.Config.
type ownRequests struct {
	mu sync.Mutex
	n  map[requestKey]float64
}

func (o *ownRequests) wrap(rt http.RoundTripper) http.RoundTripper {
	return countingTransport{next: rt, mu: &o.mu, n: o.n}
}

func (o *ownRequests) snapshot() map[requestKey]float64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[requestKey]float64, len(o.n))
	for k, v := range o.n {
		out[k] = v
	}
	return out
}

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.mu.Lock()
	t.n[requestOf(r)]++
	t.mu.Unlock()
	return t.next.RoundTrip(r)
}

// requestOf is how the API server counts r (apiserver_request_total's verb label): its verb, and
// the resource (with subresource).
func requestOf(r *http.Request) requestKey {
	resource, named := resourceOf(r.URL.Path)
	k := requestKey{resource: resource}
	switch r.Method {
	case http.MethodPost:
		k.verb = "POST"
	case http.MethodPut:
		k.verb = "PUT"
	case http.MethodPatch:
		k.verb = "PATCH"
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/apply-patch") {
			k.verb = "APPLY"
		}
	case http.MethodDelete:
		k.verb = "DELETE" // of one object or a collection alike
	case http.MethodGet:
		switch {
		case r.URL.Query().Get("watch") == "true":
			k.verb = "WATCH"
		case named:
			k.verb = "GET"
		default:
			k.verb = "LIST"
		}
	}
	return k
}

// resourceOf is the resource (and subresource) a request path names, and whether it names one
// object: /api/v1/namespaces/ns/pods/name/status, /apis/g/v/namespaces/ns/r, /api/v1/nodes/n.
func resourceOf(path string) (resource string, named bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	i := 2 // after api/v1
	if len(parts) > 0 && parts[0] == "apis" {
		i = 3 // after apis/group/version
	}
	if len(parts) > i+2 && parts[i] == "namespaces" {
		i += 2 // a namespaced resource, not the namespace itself
	}
	if len(parts) <= i {
		return "", false
	}
	resource = parts[i]
	if len(parts) > i+2 {
		resource += "/" + parts[i+2]
	}
	return resource, len(parts) > i+1
}

// apiCost is a run's count, started by startAPICost and read by per.
type apiCost struct {
	cs     kubernetes.Interface
	own    *ownRequests
	before map[requestKey]float64
	mine   map[requestKey]float64
}

func startAPICost(ctx context.Context, e *benchEnv) (*apiCost, error) {
	before, err := apiServerRequests(ctx, e.cs)
	if err != nil {
		return nil, err
	}
	return &apiCost{cs: e.cs, own: e.own, before: before, mine: e.own.snapshot()}, nil
}

// apiUse is what the run cost per application.
type apiUse struct {
	writes, reads float64
	top           string // the largest writes and reads, per application
}

// per reads the counts now and divides what the run cost by apps.
func (a *apiCost) per(ctx context.Context, apps int) (apiUse, error) {
	after, err := apiServerRequests(ctx, a.cs)
	if err != nil {
		return apiUse{}, err
	}
	mine := a.own.snapshot()
	delta := map[requestKey]float64{}
	for k, v := range after {
		if background(k.resource) {
			continue
		}
		d := v - a.before[k] - (mine[k] - a.mine[k])
		if d > 0 {
			delta[k] = d
		}
	}
	var use apiUse
	type item struct {
		k requestKey
		n float64
	}
	var writes, reads []item
	for k, n := range delta {
		switch {
		case k.write():
			use.writes += n
			writes = append(writes, item{k, n})
		case k.read():
			use.reads += n
			reads = append(reads, item{k, n})
		}
	}
	use.writes /= float64(apps)
	use.reads /= float64(apps)
	largest := func(items []item, n int) string {
		sort.Slice(items, func(i, j int) bool { return items[i].n > items[j].n })
		var top []string
		for _, w := range items[:min(len(items), n)] {
			top = append(top, fmt.Sprintf("%s_%s=%.1f", w.k.verb, w.k.resource, w.n/float64(apps)))
		}
		return strings.Join(top, " ")
	}
	use.top = "api_writes_per_app " + largest(writes, 10) + "; api_reads_per_app " + largest(reads, 6)
	return use, nil
}
