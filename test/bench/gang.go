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
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/executors"
)

// gangSizes are the executor counts of the mixed load, in turn (2 CPU each, 1-CPU drivers).
var gangSizes = []int32{2, 4, 8, 12}

// runGang is the gang scenario: --apps applications of mixed sizes created at once, run with
// the gang scheduler (--gang, the default) or without it, with this process playing Spark
// (executors once a driver runs, deleted when it ends) and kwok ending drivers. It prints
//
//	RESULT mode=gang apps=… decisions_per_s=… partial_starts=… utilisation=… makespan_s=…
//
// partial_starts counts applications whose driver ended with some of its executors never
// placed; utilisation is the mean share of the nodes' allocatable CPU requested by running
// pods, sampled over the run.
func runGang(ctx context.Context, c config) error {
	mode := "nogang"
	if c.gang {
		mode = "gang"
	}
	e, err := newBenchEnv(ctx, c, mode)
	if err != nil {
		return err
	}
	defer e.cleanup()
	var args []string
	if c.gang {
		q := &schedv1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}
		if err := e.cl.Create(ctx, q); err != nil {
			return err
		}
		defer func() { _ = e.cl.Delete(context.Background(), q) }()
		args = append(args, "--enable-gang-scheduler", "--default-batch-scheduler=gang")
	}
	op, err := startOperator(ctx, c, e.ns, "gang-"+mode, append(args, "--submission-workers", "32", "--enable-spark-connect=false")...)
	if err != nil {
		return err
	}
	defer op.stop()

	start := time.Now()
	if failed := inParallel(c.apps, 32, 0, func(i int) error {
		return e.cl.Create(ctx, gangApp(e.ns, i, c.gang))
	}); failed > 0 {
		return fmt.Errorf("%d of %d applications could not be created", failed, c.apps)
	}
	p := &sparkPlayer{cl: e.cl, ns: e.ns, started: map[string]bool{}, ended: map[string]bool{}}
	var utilSum float64
	var samples int
	deadline := time.Now().Add(c.timeout)
	for {
		done, util, err := p.step(ctx)
		if err != nil {
			return err
		}
		utilSum += util
		samples++
		if done == c.apps {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d applications finished after %s (operator log: %s)", done, c.apps, c.timeout, op.log)
		}
		time.Sleep(500 * time.Millisecond)
	}
	makespan := time.Since(start)
	decisionsPerS := 0.0
	if c.gang {
		decisions, busy, err := op.gangDecisions()
		if err != nil {
			return err
		}
		if busy > 0 {
			decisionsPerS = decisions / busy
		}
	}
	fmt.Printf("RESULT mode=%s apps=%d decisions_per_s=%.0f partial_starts=%d utilisation=%.3f makespan_s=%.1f\n",
		mode, c.apps, decisionsPerS, p.partial, utilSum/float64(max(samples, 1)), makespan.Seconds())
	return nil
}

func gangApp(ns string, i int, gang bool) *v1beta2.SparkApplication {
	app := benchApp(ns, i)
	app.Spec.Driver.Cores, app.Spec.Driver.CoreRequest = ptr.To[int32](1), nil
	app.Spec.Driver.Annotations = map[string]string{executors.AnnotationRunSeconds: fmt.Sprint(10 + 5*(i%3))}
	app.Spec.Executor.Cores = ptr.To[int32](2)
	app.Spec.Executor.Memory = ptr.To("1024m")
	app.Spec.Executor.Instances = ptr.To(gangSizes[i%len(gangSizes)])
	if gang {
		app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To(ns)}
	}
	return app
}

// sparkPlayer does what Spark's drivers would: start their executors from the executor pod
// template once they run, and stop them when they end.
type sparkPlayer struct {
	cl             client.Client
	ns             string
	started, ended map[string]bool
	partial        int
}

// step acts once and returns how many applications have finished and the share of CPU in use.
func (p *sparkPlayer) step(ctx context.Context) (int, float64, error) {
	var apps v1beta2.SparkApplicationList
	if err := p.cl.List(ctx, &apps, client.InNamespace(p.ns)); err != nil {
		return 0, 0, err
	}
	var pods corev1.PodList
	if err := p.cl.List(ctx, &pods, client.InNamespace(p.ns)); err != nil {
		return 0, 0, err
	}
	var nodes corev1.NodeList
	if err := p.cl.List(ctx, &nodes); err != nil {
		return 0, 0, err
	}
	var alloc, used int64
	for _, n := range nodes.Items {
		q := n.Status.Allocatable[corev1.ResourceCPU]
		alloc += q.MilliValue()
	}
	drivers := map[string]*corev1.Pod{}
	unplaced := map[string]int{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Spec.NodeName != "" && pod.Status.Phase == corev1.PodRunning {
			for _, ctr := range pod.Spec.Containers {
				q := ctr.Resources.Requests[corev1.ResourceCPU]
				used += q.MilliValue()
			}
		}
		switch pod.Labels[v1beta2.SparkRoleLabel] {
		case v1beta2.SparkRoleDriver:
			drivers[pod.Name] = pod
		case v1beta2.SparkRoleExecutor:
			if pod.Spec.NodeName == "" {
				unplaced[pod.Labels[v1beta2.LabelAppName]]++
			}
		}
	}
	finished := 0
	for i := range apps.Items {
		app := &apps.Items[i]
		switch app.Status.AppState.State {
		case v1beta2.ApplicationStateCompleted, v1beta2.ApplicationStateFailed:
			finished++
		}
		d := drivers[app.DriverPodName()]
		if d == nil {
			continue
		}
		switch d.Status.Phase {
		case corev1.PodRunning:
			if p.started[d.Name] {
				continue
			}
			started, err := p.startExecutors(ctx, app, d)
			if err != nil {
				return 0, 0, err
			}
			p.started[d.Name] = started
		case corev1.PodSucceeded, corev1.PodFailed:
			if p.ended[d.Name] {
				continue
			}
			if unplaced[app.Name] > 0 {
				p.partial++
			}
			if err := p.cl.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(p.ns), client.MatchingLabels{
				v1beta2.LabelAppName: app.Name, v1beta2.SparkRoleLabel: v1beta2.SparkRoleExecutor,
			}); err != nil {
				return 0, 0, err
			}
			p.ended[d.Name] = true
		}
	}
	util := 0.0
	if alloc > 0 {
		util = float64(used) / float64(alloc)
	}
	return finished, util, nil
}

// startExecutors reports false, to be asked again, while the driver's template ConfigMap does
// not exist yet (the submitter creates it just after the driver; a kubelet would wait for it).
func (p *sparkPlayer) startExecutors(ctx context.Context, app *v1beta2.SparkApplication, driver *corev1.Pod) (bool, error) {
	template, err := executors.TemplateOf(ctx, p.cl, driver)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	n := int(ptr.Deref(app.Spec.Executor.Instances, 1))
	for id := 1; id <= n; id++ {
		pod, err := executors.Build(driver, id, executors.Options{Cores: 2, MemoryMiB: 1024, Template: template,
			Annotations: map[string]string{executors.AnnotationRunSeconds: "600"}})
		if err != nil {
			return false, err
		}
		if err := p.cl.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			return false, err
		}
	}
	return true, nil
}

// gangDecisions reads the gang scheduler's decision count and the time it spent deciding.
func (o *operatorProcess) gangDecisions() (decisions, seconds float64, err error) {
	resp, err := http.Get(o.metricsURL)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, 0, err
	}
	value := func(name string) (float64, error) {
		f, ok := families[name]
		if !ok || len(f.GetMetric()) == 0 {
			return 0, fmt.Errorf("the operator exposes no %s", name)
		}
		return f.GetMetric()[0].GetCounter().GetValue(), nil
	}
	if decisions, err = value("spark_operator_gang_decisions_total"); err != nil {
		return 0, 0, err
	}
	seconds, err = value("spark_operator_gang_schedule_seconds_total")
	return decisions, seconds, err
}
