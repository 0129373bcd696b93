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
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// The real-node scenario runs real Spark on a cluster up with --real-node: --apps small SparkPi
// applications created at once, first through native submission, then through spark-submit (the
// Kubeflow operator's way), each mode with an operator of its own running the gang scheduler, so
// that applications start whole as the node's 2 CPUs allow. Each application is timed from its
// create call to its driver running, its first executor running and its state COMPLETED, as
// seen by polling every 100 ms:
//
//	RESULT scenario=real-node mode=native|spark-submit apps=10 to_driver_running_p50_ms=… to_driver_running_max_ms=… to_executor_p50_ms=… to_executor_max_ms=… to_completed_p50_ms=… to_completed_max_ms=…
func runRealNode(ctx context.Context, c config) error {
	if c.sparkHome == "" {
		return fmt.Errorf("--spark-home is required: the scenario runs spark-submit too")
	}
	e, err := newBenchEnv(ctx, c, "realnode")
	if err != nil {
		return err
	}
	defer e.cleanup()
	if err := sparkRole(ctx, e); err != nil {
		return err
	}
	for _, mode := range []string{"native", "spark-submit"} {
		if err := realNodeRun(ctx, c, e, mode); err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
	}
	return nil
}

// realNodeRun creates the applications of one mode and waits until all have completed.
func realNodeRun(ctx context.Context, c config, e *benchEnv, mode string) error {
	c.mode = mode
	op, err := startOperator(ctx, c, e.ns, "realnode-"+mode, "--enable-gang-scheduler", "--default-batch-scheduler=gang")
	if err != nil {
		return err
	}
	defer op.stop()
	created := map[string]time.Time{}
	for i := range c.apps {
		app := realNodeApp(e.ns, fmt.Sprintf("%s-%02d", mode, i))
		created[app.Name] = time.Now()
		if err := e.cl.Create(ctx, app); err != nil {
			return err
		}
	}
	seen := newMilestones()
	deadline := time.Now().Add(c.timeout)
	for seen.completed() < c.apps {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d applications completed within %s (operator log: %s)", seen.completed(), c.apps, c.timeout, op.log)
		}
		if err := seen.poll(ctx, e, created); err != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	driver, executor, completed := seen.latencies(created)
	fmt.Printf("%-13s %5s %22s %22s %22s\n", "mode", "apps", "driver running p50/max", "executor p50/max", "completed p50/max")
	fmt.Printf("%-13s %5d %10.0f/%-11.0f %10.0f/%-11.0f %10.0f/%-11.0f\n", mode, c.apps,
		ms(percentile(driver, 50)), ms(percentile(driver, 100)), ms(percentile(executor, 50)), ms(percentile(executor, 100)),
		ms(percentile(completed, 50)), ms(percentile(completed, 100)))
	fmt.Printf("RESULT scenario=real-node mode=%s apps=%d to_driver_running_p50_ms=%.0f to_driver_running_max_ms=%.0f to_executor_p50_ms=%.0f to_executor_max_ms=%.0f to_completed_p50_ms=%.0f to_completed_max_ms=%.0f\n",
		mode, c.apps, ms(percentile(driver, 50)), ms(percentile(driver, 100)), ms(percentile(executor, 50)), ms(percentile(executor, 100)),
		ms(percentile(completed, 50)), ms(percentile(completed, 100)))
	return nil
}

// milestones are the first times each application's driver ran, an executor of it ran, and it
// was COMPLETED.
type milestones struct {
	driver, executor, done map[string]time.Time
}

func newMilestones() *milestones {
	return &milestones{driver: map[string]time.Time{}, executor: map[string]time.Time{}, done: map[string]time.Time{}}
}

func (m *milestones) completed() int { return len(m.done) }

func (m *milestones) poll(ctx context.Context, e *benchEnv, created map[string]time.Time) error {
	now := time.Now()
	var pods corev1.PodList
	if err := e.cl.List(ctx, &pods, client.InNamespace(e.ns), client.HasLabels{v1beta2.LabelAppName}); err != nil {
		return err
	}
	for _, p := range pods.Items {
		app := p.Labels[v1beta2.LabelAppName]
		if _, ours := created[app]; !ours || p.Status.Phase != corev1.PodRunning {
			continue
		}
		first := m.executor
		if p.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleDriver {
			first = m.driver
		}
		if _, ok := first[app]; !ok {
			first[app] = now
		}
	}
	var apps v1beta2.SparkApplicationList
	if err := e.cl.List(ctx, &apps, client.InNamespace(e.ns)); err != nil {
		return err
	}
	for _, a := range apps.Items {
		if _, ours := created[a.Name]; !ours {
			continue
		}
		switch a.Status.AppState.State {
		case v1beta2.ApplicationStateCompleted:
			if _, ok := m.done[a.Name]; !ok {
				m.done[a.Name] = now
			}
		case v1beta2.ApplicationStateFailed, v1beta2.ApplicationStateFailedSubmission:
			return fmt.Errorf("%s ended %s: %s", a.Name, a.Status.AppState.State, a.Status.AppState.ErrorMessage)
		}
	}
	return nil
}

// latencies are each milestone's time from create, sorted. A driver or executor that ran
// between two polls is timed at the poll that first saw the next state, its completion.
func (m *milestones) latencies(created map[string]time.Time) (driver, executor, completed []time.Duration) {
	for app, t0 := range created {
		done := m.done[app]
		driver = append(driver, firstOr(m.driver, app, done).Sub(t0))
		executor = append(executor, firstOr(m.executor, app, done).Sub(t0))
		completed = append(completed, done.Sub(t0))
	}
	slices.Sort(driver)
	slices.Sort(executor)
	slices.Sort(completed)
	return driver, executor, completed
}

func firstOr(seen map[string]time.Time, app string, or time.Time) time.Time {
	if t, ok := seen[app]; ok {
		return t
	}
	return or
}

// realNodeApp is a small SparkPi: a fifth of a CPU and 512 MiB for the driver and its executor.
func realNodeApp(ns, name string) *v1beta2.SparkApplication {
	app := benchApp(ns, 0)
	app.Name = name
	app.Spec.ImagePullPolicy = ptr.To("IfNotPresent")
	app.Spec.Driver.CoreRequest = ptr.To("200m")
	app.Spec.Executor.CoreRequest = ptr.To("200m")
	return app
}

// sparkRole lets the bench's "spark" service account do what a driver does: make executor pods,
// their Services and ConfigMaps.
func sparkRole(ctx context.Context, e *benchEnv) error {
	for _, o := range []client.Object{
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "spark"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"pods", "services", "configmaps", "persistentvolumeclaims"}, Verbs: []string{"*"},
		}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "spark"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "spark"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "spark", Namespace: e.ns}}},
	} {
		if err := e.cl.Create(ctx, o); err != nil {
			return err
		}
	}
	return nil
}
