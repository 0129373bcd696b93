/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spf13/cobra"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// logGrace is how long a followed log may keep streaming after its pod ended, so that the
// last lines still arrive before sparkctl stops reading.
const logGrace = 2 * time.Second

type logOptions struct {
	*rootOptions
	executor string
	follow   bool
	tail     int64
	since    time.Duration
	previous bool
}

func newLogCommand(root *rootOptions) *cobra.Command {
	o := &logOptions{rootOptions: root}
	cmd := &cobra.Command{
		Use:     "log NAME",
		Aliases: []string{"logs"},
		Short:   "Print the log of a SparkApplication's driver or of one of its executors",
		Example: `  sparkctl log spark-pi
  sparkctl log spark-pi -e 2 -f`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: root.completeApps,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), args[0])
		},
	}
	cmd.Flags().StringVarP(&o.executor, "executor", "e", "", "the ID of the executor whose log to print, instead of the driver's")
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "keep printing the log until the pod ends")
	cmd.Flags().Int64Var(&o.tail, "tail", -1, "print only the last lines of the log, this many; -1 prints all of it")
	cmd.Flags().DurationVar(&o.since, "since", 0, "print only the lines of this last while, such as 5m; 0 prints all of it")
	cmd.Flags().BoolVarP(&o.previous, "previous", "p", false, "print the log of the container's previous run (before it restarted)")
	return cmd
}

func (o *logOptions) run(ctx context.Context, name string) error {
	c, err := o.clients()
	if err != nil {
		return err
	}
	app, err := c.getApp(ctx, name)
	if err != nil {
		return err
	}
	var pod *corev1.Pod
	var container string
	if o.executor != "" {
		if pod, err = executorPod(ctx, c, app, o.executor); err != nil {
			return err
		}
		container = sparkContainer(pod, v1beta2.SparkExecutorContainerName)
	} else {
		pod = &corev1.Pod{}
		if err := c.ctrl.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: driverPodName(app)}, pod); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("sparkapplication %q in namespace %q has no driver pod (state %s)", app.Name, app.Namespace, stateString(app.Status.AppState.State))
			}
			return err
		}
		container = driverContainer(pod)
	}
	opts := corev1.PodLogOptions{Container: container, Follow: o.follow, Previous: o.previous}
	if o.tail >= 0 {
		opts.TailLines = &o.tail
	}
	if o.since > 0 {
		secs := max(int64(o.since/time.Second), 1)
		opts.SinceSeconds = &secs
	}
	return streamLog(ctx, c, pod, opts, o.streams.Out)
}

// executorPod finds the pod of executor id, preferring the current submission's pod when
// pods of several submissions are left.
func executorPod(ctx context.Context, c *clients, app *v1beta2.SparkApplication, id string) (*corev1.Pod, error) {
	if _, err := strconv.Atoi(id); err != nil {
		return nil, fmt.Errorf("executor ID %q is not a number", id)
	}
	var pods corev1.PodList
	if err := c.ctrl.List(ctx, &pods, client.InNamespace(app.Namespace), client.MatchingLabels{
		v1beta2.LabelAppName:         app.Name,
		v1beta2.SparkRoleLabel:       v1beta2.SparkRoleExecutor,
		v1beta2.SparkExecutorIDLabel: id,
	}); err != nil {
		return nil, err
	}
	if len(pods.Items) == 0 {
		return nil, fmt.Errorf("executor %s of sparkapplication %q not found in namespace %q", id, app.Name, app.Namespace)
	}
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int {
		aCur := a.Labels[v1beta2.LabelSubmissionID] == app.Status.SubmissionID
		bCur := b.Labels[v1beta2.LabelSubmissionID] == app.Status.SubmissionID
		if aCur != bCur {
			if aCur {
				return -1
			}
			return 1
		}
		return b.CreationTimestamp.Compare(a.CreationTimestamp.Time) // newest first
	})
	return &pods.Items[0], nil
}

func driverContainer(pod *corev1.Pod) string {
	return sparkContainer(pod, v1beta2.SparkDriverContainerName)
}

// sparkContainer is the container named want, or the pod's first container: a pod template
// may rename Spark's container or add sidecars before it.
func sparkContainer(pod *corev1.Pod, want string) string {
	for _, c := range pod.Spec.Containers {
		if c.Name == want {
			return want
		}
	}
	if len(pod.Spec.Containers) > 0 {
		return pod.Spec.Containers[0].Name
	}
	return ""
}

// streamLog copies a container's log to out. Following, it waits for the container to start
// and stops when the pod has ended (or the user interrupts).
func streamLog(ctx context.Context, c *clients, pod *corev1.Pod, opts corev1.PodLogOptions, out io.Writer) error {
	follow := opts.Follow
	if follow && pod.Status.Phase == corev1.PodPending {
		err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			p, err := c.kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				return false, objectError(err, "pod", pod.Namespace, pod.Name)
			}
			return p.Status.Phase != corev1.PodPending, nil
		})
		if err != nil {
			return interrupted(ctx, err)
		}
	}
	streamCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if follow {
		go func() {
			if podEnded(streamCtx, c, pod) {
				select {
				case <-time.After(logGrace):
					cancel()
				case <-streamCtx.Done():
				}
			}
		}()
	}
	rc, err := c.kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name,
		&opts).Stream(streamCtx)
	if err != nil {
		if streamCtx.Err() != nil {
			return interrupted(ctx, streamCtx.Err())
		}
		return fmt.Errorf("reading the log of pod %q in namespace %q: %s", pod.Name, pod.Namespace, apiMessage(err))
	}
	defer rc.Close()
	if _, err := io.Copy(out, rc); err != nil && streamCtx.Err() == nil {
		return fmt.Errorf("reading the log of pod %q: %w", pod.Name, err)
	}
	return interrupted(ctx, nil)
}

// podEnded waits until the pod has succeeded, failed or gone, and reports whether it did
// (false when ctx ended first).
func podEnded(ctx context.Context, c *clients, pod *corev1.Pod) bool {
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := c.kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return true, nil
		case err != nil:
			return false, nil // a passing API error: try again
		case p.UID != pod.UID:
			return true, nil // replaced by a pod of the same name
		}
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed, nil
	})
	return err == nil
}

// interrupted turns the end of ctx (Ctrl-C) into a clean exit.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled) || errors.Is(err, ctx.Err())) {
		return nil
	}
	return err
}
