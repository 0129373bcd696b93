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
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/test/executors"
)

// The competing load (--load competing): plain pods, not Spark's, that arrive and leave at a
// steady rate and take about competingShare of the nodes' CPU, as a cluster's other workloads
// do. Each asks for competingCPU and runs competingSeconds (kwok ends it), then is deleted; the
// load keeps competingShare of the CPU asked for by live pods (pending or running), so they
// arrive at about that many over competingSeconds each second.
const (
	competingShare   = 0.3
	competingCPU     = 2
	competingSeconds = 30
	labelLoad        = "bench.sparkop.dev/load"
)

// competingLoad runs the load in ns until ctx ends, on nodes of totalCPU; created counts the
// pods it created.
type competingLoad struct {
	cl      client.Client
	ns      string
	target  int
	created atomic.Int64
}

func newCompetingLoad(cl client.Client, ns string, totalCPU int64) *competingLoad {
	return &competingLoad{cl: cl, ns: ns, target: int(float64(totalCPU) * competingShare / competingCPU)}
}

// run keeps the load at its target every tick until ctx ends.
func (l *competingLoad) run(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if err := l.step(ctx); err != nil && ctx.Err() == nil {
			fmt.Printf("competing load: %v\n", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (l *competingLoad) step(ctx context.Context) error {
	var pods corev1.PodList
	if err := l.cl.List(ctx, &pods, client.InNamespace(l.ns), client.HasLabels{labelLoad}); err != nil {
		return err
	}
	live := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		switch {
		case !p.DeletionTimestamp.IsZero():
		case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
			if err := l.cl.Delete(ctx, p, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
				return err
			}
		default:
			live++
		}
	}
	// A second's arrivals at most, so the load arrives steadily rather than all at once.
	for range min(l.target-live, l.target/competingSeconds+1) {
		n := l.created.Add(1)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "load-" + strconv.FormatInt(n, 10),
				Labels:      map[string]string{labelLoad: "competing"},
				Annotations: map[string]string{executors.AnnotationRunSeconds: strconv.Itoa(competingSeconds)}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: new(int64),
				Containers: []corev1.Container{{Name: "work", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: *resource.NewQuantity(competingCPU, resource.DecimalSI), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}},
		}
		if err := l.cl.Create(ctx, pod); err != nil {
			return err
		}
	}
	return nil
}
