/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

// The restart and failover scenarios. --apps finished SparkApplications are made present, an
// operator runs over them, and is stopped; an application is created at the moment of the
// signal, and what is timed is how long until its driver pod exists. restart kills the operator
// (SIGKILL, as a crash or an OOM kill) and starts a fresh one at once (no leader election: a
// restarted single replica). failover runs replicas with leader election and times two
// takeovers by a standby: from a leader stopped with SIGTERM (a rolling update: it releases the
// lease as it stops), and from a leader killed with SIGKILL (its lease must run out first).
//
//	RESULT scenario=restart finished=10000 driver_after_kill_ms=…
//	RESULT scenario=failover finished=10000 lease_s=15 graceful_ms=… killed_ms=… driver_after_kill_ms=…
//
// driver_after_kill_ms is killed_ms, under the name earlier runs printed it.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// leaseDuration is the operator's default --leader-election-lease-duration, which the
// failover target is stated against.
const leaseDuration = 15 * time.Second

func runRestart(ctx context.Context, c config) error {
	e, err := newBenchEnv(ctx, c, "restart")
	if err != nil {
		return err
	}
	defer e.cleanup()
	if err := e.finishedApps(ctx, c); err != nil {
		return err
	}
	op, err := startOperator(ctx, c, e.ns, "restart-1")
	if err != nil {
		return err
	}
	if err := waitIdle(ctx, op); err != nil {
		op.stop()
		return err
	}
	op.kill()
	// The kill and the create are the same moment; the operator restarts at once, as the
	// kubelet restarts a crashed container.
	elapsed, err := e.timeToDriver(ctx, "after-kill", nil, func() error {
		next, err := startOperator(ctx, c, e.ns, "restart-2")
		if err != nil {
			return err
		}
		op = next
		return nil
	})
	defer op.stop() // the restarted one, or the killed one if the restart failed
	if err != nil {
		return err
	}
	fmt.Printf("restart: a new application's driver %.1f s after the kill, %d finished applications present\n",
		elapsed.Seconds(), c.apps)
	fmt.Printf("RESULT scenario=restart finished=%d driver_after_kill_ms=%.0f\n", c.apps, ms(elapsed))
	return nil
}

func runFailover(ctx context.Context, c config) error {
	e, err := newBenchEnv(ctx, c, "failover")
	if err != nil {
		return err
	}
	defer e.cleanup()
	if err := e.finishedApps(ctx, c); err != nil {
		return err
	}
	elect := []string{"--leader-elect", "--leader-election-namespace", e.ns, "--leader-election-id", "bench-lock"}
	// Three replicas in turn: the first leads and is stopped with SIGTERM (a rolling update),
	// the second takes over and is killed (a crash), the third takes over from it.
	first, err := startOperator(ctx, c, e.ns, "failover-1", elect...)
	if err != nil {
		return err
	}
	// The first holds the lease before the second starts, so which one leads is known.
	if err := e.waitHolder(ctx, ""); err != nil {
		first.stop()
		return fmt.Errorf("no leader elected (log: %s): %w", first.log, err)
	}
	second, err := startOperator(ctx, c, e.ns, "failover-2", elect...)
	if err != nil {
		first.stop()
		return err
	}
	defer second.stop()
	if err := waitIdle(ctx, first); err != nil {
		first.stop()
		return err
	}
	// The signal first, then the application: the stopping leader's controllers must not take
	// it up on their way out (the create is milliseconds; their stop, microseconds).
	graceful, err := e.timeToDriver(ctx, "after-sigterm", func() error {
		return first.cmd.Process.Signal(syscall.SIGTERM)
	}, nil)
	// It has been signalled: wait for it to exit (a second signal would make it exit at once).
	select {
	case <-first.done():
	case <-time.After(time.Minute):
		first.kill()
	}
	if err != nil {
		return fmt.Errorf("%w (logs: %s, %s)", err, first.log, second.log)
	}
	fmt.Printf("failover: a new application's driver %.1f s after the leader was sent SIGTERM (lease %s)\n",
		graceful.Seconds(), leaseDuration)

	third, err := startOperator(ctx, c, e.ns, "failover-3", elect...)
	if err != nil {
		return err
	}
	defer third.stop()
	if err := waitIdle(ctx, second); err != nil {
		return err
	}
	// The third must be a standby in its steady state when the leader dies: caches filled and
	// controllers warmed, which the manager does before it enters the election.
	if err := waitLog(ctx, third, "Attempting to acquire leader lease"); err != nil {
		return err
	}
	second.kill()
	killed, err := e.timeToDriver(ctx, "after-kill", nil, nil)
	if err != nil {
		return fmt.Errorf("%w (standby log: %s)", err, third.log)
	}
	fmt.Printf("failover: a new application's driver %.1f s after the leader was killed (lease %s), %d finished applications present\n",
		killed.Seconds(), leaseDuration, c.apps)
	fmt.Printf("RESULT scenario=failover finished=%d lease_s=%.0f graceful_ms=%.0f killed_ms=%.0f driver_after_kill_ms=%.0f\n",
		c.apps, leaseDuration.Seconds(), ms(graceful), ms(killed), ms(killed))
	return nil
}

// waitHolder waits until the bench's Lease has a holder other than not.
func (e *benchEnv) waitHolder(ctx context.Context, not string) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		lease := &coordinationv1.Lease{}
		err := e.cl.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "bench-lock"}, lease)
		return err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "" && *lease.Spec.HolderIdentity != not, nil
	})
}

// finishedApps makes --apps COMPLETED applications present. One application is run to the end
// by an operator, so that its status is what the operator itself writes; the others get a
// copy of that status (their specs are the same, so is the hash of the spec the status
// records), under their own names, written while no operator runs.
func (e *benchEnv) finishedApps(ctx context.Context, c config) error {
	if c.namespace != "" {
		list := &v1beta2.SparkApplicationList{}
		if err := e.cl.List(ctx, list, client.InNamespace(e.ns)); err != nil {
			return err
		}
		finished := 0
		for _, app := range list.Items {
			if app.IsFinished() {
				finished++
			}
			if app.Name == "after-kill" || app.Name == "after-failover" || app.Name == "after-sigterm" {
				// Left by the earlier run; it must be gone before it is created again.
				if err := e.cl.Delete(ctx, &app); err != nil {
					return err
				}
				if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
					err := e.cl.Get(ctx, client.ObjectKeyFromObject(&app), &v1beta2.SparkApplication{})
					return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
				}); err != nil {
					return err
				}
			}
		}
		if finished < c.apps {
			return fmt.Errorf("namespace %s holds %d finished applications, not --apps %d", e.ns, finished, c.apps)
		}
		fmt.Printf("%d finished applications present in %s\n", finished, e.ns)
		return nil
	}
	op, err := startOperator(ctx, c, e.ns, "seed")
	if err != nil {
		return err
	}
	seed := finishedApp(e.ns, "seed")
	err = e.cl.Create(ctx, seed)
	if err == nil {
		err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			err := e.cl.Get(ctx, client.ObjectKeyFromObject(seed), seed)
			return err == nil && seed.Status.AppState.State == v1beta2.ApplicationStateCompleted, nil
		})
	}
	op.stop()
	if err != nil {
		return fmt.Errorf("the seed application did not complete (log: %s): %w", op.log, err)
	}

	start := time.Now()
	failed := inParallel(c.apps-1, 32, 0, func(i int) error {
		app := finishedApp(e.ns, fmt.Sprintf("done-%05d", i))
		if err := e.cl.Create(ctx, app); err != nil {
			return fmt.Errorf("create: %w", err)
		}
		app.Status = *seed.Status.DeepCopy()
		app.Status.SubmissionID = fmt.Sprintf("bench-%05d", i)
		app.Status.SparkApplicationID = "spark-" + app.Status.SubmissionID
		app.Status.DriverInfo = v1beta2.DriverInfo{PodName: app.DriverPodName()}
		if err := e.cl.Status().Update(ctx, app); err != nil {
			return fmt.Errorf("status: %w", err)
		}
		return nil
	})
	if failed > 0 {
		return fmt.Errorf("%d finished applications could not be made", failed)
	}
	fmt.Printf("%d finished applications present (made in %.0f s)\n", c.apps, time.Since(start).Seconds())
	return nil
}

// finishedApp is an application whose driver completes as soon as it runs.
func finishedApp(ns, name string) *v1beta2.SparkApplication {
	app := benchApp(ns, 0)
	app.Name = name
	app.Spec.Driver.Annotations = map[string]string{"kwok.sparkop.dev/run-seconds": "0"}
	return app
}

// waitIdle waits until an operator that just started over the finished applications has
// started its SparkApplication controller and drained its queue (by its own workqueue
// metrics), so that the kill finds it in its steady state.
func waitIdle(ctx context.Context, op *operatorProcess) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 5*time.Minute, true, func(context.Context) (bool, error) {
		families, err := op.metrics()
		if err != nil {
			return false, nil
		}
		depth, ok := queueDepth(families, "sparkapplication")
		return ok && depth == 0, nil
	})
	if err != nil {
		return fmt.Errorf("the operator did not become idle (log: %s): %w", op.log, err)
	}
	return nil
}

// waitLog waits until op's log has a line containing text.
func waitLog(ctx context.Context, op *operatorProcess, text string) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 5*time.Minute, true, func(context.Context) (bool, error) {
		b, err := os.ReadFile(op.log)
		return err == nil && strings.Contains(string(b), text), nil
	})
	if err != nil {
		return fmt.Errorf("no %q in the operator's log %s: %w", text, op.log, err)
	}
	return nil
}

// timeToDriver runs before (if any), creates an application, runs then (if any), and returns
// how long after the start (before, or else the create call) the application's driver pod
// appeared.
func (e *benchEnv) timeToDriver(ctx context.Context, name string, before, then func() error) (time.Duration, error) {
	app := benchApp(e.ns, 0)
	app.Name = name
	w, err := e.cs.CoreV1().Pods(e.ns).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", app.DriverPodName()).String(),
	})
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	t0 := time.Now()
	if before != nil {
		if err := before(); err != nil {
			return 0, err
		}
	}
	if err := e.cl.Create(ctx, app); err != nil {
		return 0, err
	}
	if then != nil {
		if err := then(); err != nil {
			return 0, err
		}
	}
	timeout := time.After(5 * time.Minute)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return 0, fmt.Errorf("the watch of %s ended", app.DriverPodName())
			}
			if _, isPod := ev.Object.(*corev1.Pod); isPod && ev.Type == watch.Added {
				return time.Since(t0), nil
			}
		case <-timeout:
			return 0, fmt.Errorf("no driver for %s within 5 minutes of the kill", name)
		}
	}
}
