/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package helm

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/sparkop/spark-operator/test/cluster"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// endpointRecord follows how many ready endpoints a Service has, from its EndpointSlices, and
// notes each moment it had none.
type endpointRecord struct {
	mu     sync.Mutex
	ready  map[string]int // EndpointSlice → its ready endpoints
	none   []string       // the events after which none was ready
	broken error
}

// recordReadyEndpoints watches the EndpointSlices of the Service ns/service until the test ends;
// the Service must have a ready endpoint to start with.
func recordReadyEndpoints(t *testing.T, cs kubernetes.Interface, ns, service string) *endpointRecord {
	t.Helper()
	e := &endpointRecord{ready: map[string]int{}}
	slices := cs.DiscoveryV1().EndpointSlices(ns)
	opts := metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + service}
	list, err := slices.List(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		e.ready[list.Items[i].Name] = readyEndpoints(&list.Items[i])
	}
	if e.total() == 0 {
		t.Fatalf("the Service %s/%s has no ready endpoint", ns, service)
	}
	cluster.RetryWatch(t, list.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.LabelSelector = opts.LabelSelector
		return slices.Watch(ctx, o)
	}, func(ev watch.Event) error {
		s, ok := ev.Object.(*discoveryv1.EndpointSlice)
		if !ok {
			return fmt.Errorf("the EndpointSlice watch got a %s event: %v", ev.Type, ev.Object)
		}
		if ev.Type == watch.Deleted {
			delete(e.ready, s.Name)
		} else {
			e.ready[s.Name] = readyEndpoints(s)
		}
		if e.total() == 0 {
			e.none = append(e.none, fmt.Sprintf("%s of %s (resourceVersion %s)", ev.Type, s.Name, s.ResourceVersion))
		}
		return nil
	}, &e.mu, &e.broken)
	return e
}

func readyEndpoints(s *discoveryv1.EndpointSlice) int {
	n := 0
	for _, ep := range s.Endpoints {
		if ptr.Deref(ep.Conditions.Ready, false) {
			n++
		}
	}
	return n
}

func (e *endpointRecord) total() int {
	n := 0
	for _, r := range e.ready {
		n += r
	}
	return n
}

// requireNeverNone fails the test if the Service was ever left without a ready endpoint.
func (e *endpointRecord) requireNeverNone(t *testing.T, service string) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.broken != nil {
		t.Error(e.broken)
	}
	for _, n := range e.none {
		t.Errorf("the Service %s had no ready endpoint after the %s", service, n)
	}
}
