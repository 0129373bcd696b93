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
	"sync"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
)

// standIn runs jobs against the cluster: it reads from an informer cache of ns (and nodes)
// and makes the API calls with cl, at most apiCalls at once.
type standIn struct {
	cl    client.Client
	cache cache.Cache
	ns    string
	sem   chan struct{}
	// results carries finished actions back to the loop.
	results chan result
	// lag times the application's status behind its driver pod.
	lag *stateLag
	// writes counts the writes of each application.
	writes *appWrites
}

type result struct {
	a  action
	ok bool
}

// apiCalls bounds the stand-in's API calls in flight.
const apiCalls = 64

func newStandIn(ctx context.Context, cfg *rest.Config, cl client.Client, ns string) (*standIn, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: cluster.Scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		return nil, err
	}
	lag, writes := newStateLag(), newAppWrites()
	for _, obj := range []client.Object{&corev1.Pod{}, &v1beta2.SparkApplication{}, &corev1.Node{}, &corev1.ConfigMap{}} {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return nil, fmt.Errorf("watching %T: %w", obj, err)
		}
		var hs []toolscache.ResourceEventHandler
		switch obj.(type) {
		case *corev1.Pod:
			hs = append(hs, lag.podHandler())
		case *v1beta2.SparkApplication:
			hs = append(hs, lag.appHandler(), writes.handler())
		}
		for _, h := range hs {
			if _, err := inf.AddEventHandler(h); err != nil {
				return nil, err
			}
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the stand-in's cache did not sync")
	}
	return &standIn{cl: cl, cache: c, ns: ns, sem: make(chan struct{}, apiCalls), results: make(chan result, 1024), lag: lag, writes: writes}, nil
}

// watch adds h to the handlers of the stand-in's informer of obj's kind, starting it if
// needed; it returns once that informer has synced.
func (s *standIn) watch(ctx context.Context, obj client.Object, h toolscache.ResourceEventHandler) error {
	inf, err := s.cache.GetInformer(ctx, obj)
	if err != nil {
		return fmt.Errorf("watching %T: %w", obj, err)
	}
	_, err = inf.AddEventHandler(h)
	return err
}

// read returns what the cache holds now, without copying it: step only reads.
func (s *standIn) read(ctx context.Context) ([]v1beta2.SparkApplication, []corev1.Pod, []corev1.Node, error) {
	var apps v1beta2.SparkApplicationList
	var pods corev1.PodList
	var nodes corev1.NodeList
	for _, l := range []client.ObjectList{&apps, &pods, &nodes} {
		if err := s.cache.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			return nil, nil, nil, err
		}
	}
	return apps.Items, pods.Items, nodes.Items, nil
}

// reservations reads the applications' reservations from the cache, by application name.
func (s *standIn) reservations(ctx context.Context) (map[string]gang.Reservation, error) {
	var list schedv1alpha1.ReservationList
	if err := s.cache.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := make(map[string]gang.Reservation, len(list.Items))
	for i := range list.Items {
		if r, ok := gang.ReservationOf(&list.Items[i]); ok && list.Items[i].Spec.Workload.Kind == "SparkApplication" {
			out[list.Items[i].Spec.Workload.Name] = r
		}
	}
	return out, nil
}

// run carries out a, in its own goroutine, and reports on s.results.
func (s *standIn) run(ctx context.Context, a action) {
	go func() {
		var err error
		switch a.kind {
		case startExecutors:
			err = s.startExecutors(ctx, a.driver, a.count)
		case endJob:
			err = s.endJob(ctx, a.app, a.driver)
		}
		if err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) {
			fmt.Printf("stand-in: %s: %v\n", a.app, err)
		}
		s.results <- result{a, err == nil}
	}()
}

// call runs f within the bound on API calls in flight.
func (s *standIn) call(f func() error) error {
	s.sem <- struct{}{}
	defer func() { <-s.sem }()
	return f()
}

// startExecutors creates count executors of driver's application from its executor pod
// template, all at once. The template's ConfigMap is created just after the driver, so it may
// not be in the cache yet (NotFound): the loop asks again, as a kubelet would wait for it.
func (s *standIn) startExecutors(ctx context.Context, driver *corev1.Pod, count int) error {
	template, err := executors.TemplateOf(ctx, s.cache, driver)
	if err != nil {
		return err
	}
	errs := make([]error, count)
	var wg sync.WaitGroup
	for id := 1; id <= count; id++ {
		pod, err := executors.Build(driver, id, executors.Options{Cores: 2, MemoryMiB: 1024, Template: template})
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[id-1] = s.call(func() error {
				if err := s.cl.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
					return err
				}
				return nil
			})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// endJob stops app's executors, as a finishing Spark driver does, then ends the driver.
func (s *standIn) endJob(ctx context.Context, app string, driver *corev1.Pod) error {
	err := s.call(func() error {
		return s.cl.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(s.ns), client.MatchingLabels{
			v1beta2.LabelAppName: app, v1beta2.SparkRoleLabel: v1beta2.SparkRoleExecutor,
		})
	})
	if err != nil {
		return err
	}
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:"0"}}}`, executors.AnnotationExitCode))
	return s.call(func() error {
		d := &corev1.Pod{}
		d.Namespace, d.Name = driver.Namespace, driver.Name
		return s.cl.Patch(ctx, d, client.RawPatch(types.MergePatchType, patch))
	})
}
