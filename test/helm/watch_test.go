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
	"sort"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// driverRecord is every driver pod created in a namespace, per application, from a watch that
// starts before the applications and resumes where it left off if its connection drops: a
// driver created and deleted between two looks is still counted.
type driverRecord struct {
	mu       sync.Mutex
	ever     map[string]map[types.UID]bool // application → every driver pod seen
	live     map[string]map[types.UID]bool // application → driver pods not ended
	overlaps []string                      // two live drivers of one application, when seen
	broken   error                         // why the watch ended early
}

// recordDrivers watches the driver pods of ns until the test ends.
func recordDrivers(t *testing.T, cs kubernetes.Interface, ns string) *driverRecord {
	t.Helper()
	d := &driverRecord{ever: map[string]map[types.UID]bool{}, live: map[string]map[types.UID]bool{}}
	pods := cs.CoreV1().Pods(ns)
	opts := metav1.ListOptions{LabelSelector: v1beta2.SparkRoleLabel + "=" + v1beta2.SparkRoleDriver}
	list, err := pods.List(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		d.seen(&list.Items[i], false)
	}
	retryWatch(t, list.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.LabelSelector = opts.LabelSelector
		return pods.Watch(ctx, o)
	}, func(ev watch.Event) error {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			return fmt.Errorf("the driver watch got a %s event: %v", ev.Type, ev.Object)
		}
		d.seen(pod, ev.Type == watch.Deleted)
		return nil
	}, &d.mu, &d.broken)
	return d
}

// retryWatch watches from resourceVersion rv until the test ends, resuming where it left off
// if the connection drops (client-go's RetryWatcher), and hands each event to handle under mu.
// The first error handle returns ends the watch and is stored in *broken.
func retryWatch(t *testing.T, rv string, watchFunc cache.WatchFuncWithContext, handle func(watch.Event) error, mu *sync.Mutex, broken *error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := watchtools.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{WatchFuncWithContext: watchFunc})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			mu.Lock()
			err := handle(ev)
			if err != nil {
				*broken = err
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		w.Stop()
		<-done
	})
}

// seen records a driver pod's event; the caller holds d.mu or is the only one using d.
func (d *driverRecord) seen(pod *corev1.Pod, deleted bool) {
	app := pod.Labels[v1beta2.LabelAppName]
	if d.ever[app] == nil {
		d.ever[app], d.live[app] = map[types.UID]bool{}, map[types.UID]bool{}
	}
	d.ever[app][pod.UID] = true
	ended := deleted || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	if ended {
		delete(d.live[app], pod.UID)
		return
	}
	d.live[app][pod.UID] = true
	if len(d.live[app]) > 1 {
		d.overlaps = append(d.overlaps, fmt.Sprintf("%s: %d drivers live at once (%v)", app, len(d.live[app]), keys(d.live[app])))
	}
}

// count is how many driver pods the record has seen in all.
func (d *driverRecord) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, uids := range d.ever {
		n += len(uids)
	}
	return n
}

// requireOneEach fails the test unless each of apps had exactly one driver pod, and no
// application ever had two live at once.
func (d *driverRecord) requireOneEach(t *testing.T, apps []string) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.broken != nil {
		t.Error(d.broken)
	}
	for _, o := range d.overlaps {
		t.Errorf("submitted twice: %s", o)
	}
	for _, app := range apps {
		if n := len(d.ever[app]); n != 1 {
			t.Errorf("%s had %d driver pods (%v), want 1", app, n, keys(d.ever[app]))
		}
	}
}

func keys(m map[types.UID]bool) []string {
	var s []string
	for k := range m {
		s = append(s, string(k))
	}
	sort.Strings(s)
	return s
}

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
	retryWatch(t, list.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
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
