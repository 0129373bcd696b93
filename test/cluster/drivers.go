/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package cluster

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// DriverRecord is every driver pod created in a namespace, per application, from a watch that
// starts before the applications and resumes where it left off if its connection drops: a
// driver created and deleted between two looks is still counted.
type DriverRecord struct {
	mu       sync.Mutex
	ever     map[string]map[types.UID]bool // application → every driver pod seen
	live     map[string]map[types.UID]bool // application → driver pods not ended
	overlaps []string                      // two live drivers of one application, when seen
	broken   error                         // why the watch ended early
}

// RecordDrivers watches the driver pods of ns until the test ends.
func RecordDrivers(t *testing.T, cs kubernetes.Interface, ns string) *DriverRecord {
	t.Helper()
	d := &DriverRecord{ever: map[string]map[types.UID]bool{}, live: map[string]map[types.UID]bool{}}
	pods := cs.CoreV1().Pods(ns)
	opts := metav1.ListOptions{LabelSelector: v1beta2.SparkRoleLabel + "=" + v1beta2.SparkRoleDriver}
	list, err := pods.List(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		d.seen(&list.Items[i], false)
	}
	RetryWatch(t, list.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
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

// RetryWatch watches from resourceVersion rv until the test ends, resuming where it left off
// if the connection drops (client-go's RetryWatcher), and hands each event to handle under mu.
// The first error handle returns ends the watch and is stored in *broken.
func RetryWatch(t *testing.T, rv string, watchFunc cache.WatchFuncWithContext, handle func(watch.Event) error, mu *sync.Mutex, broken *error) {
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
func (d *DriverRecord) seen(pod *corev1.Pod, deleted bool) {
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

// Count is how many driver pods the record has seen in all.
func (d *DriverRecord) Count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, uids := range d.ever {
		n += len(uids)
	}
	return n
}

// RequireOneEach fails the test unless each of apps had exactly one driver pod, and no
// application ever had two live at once.
func (d *DriverRecord) RequireOneEach(t *testing.T, apps []string) {
	t.Helper()
	want := map[string]int{}
	for _, app := range apps {
		want[app] = 1
	}
	d.Require(t, want)
}

// Require fails the test unless each application had as many driver pods as want says (one
// for each of its runs), and no application ever had two live at once.
func (d *DriverRecord) Require(t *testing.T, want map[string]int) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.broken != nil {
		t.Error(d.broken)
	}
	for _, o := range d.overlaps {
		t.Errorf("submitted twice: %s", o)
	}
	for app, n := range want {
		if got := len(d.ever[app]); got != n {
			t.Errorf("%s had %d driver pods (%v), want %d", app, got, keys(d.ever[app]), n)
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
