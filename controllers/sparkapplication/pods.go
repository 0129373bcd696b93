/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
)

// This file holds the pod monitor: pure functions from the pods of one submission to what the
// application's status says about them.

// driverState maps a driver pod's phase to the driver's state. A nil pod is UNKNOWN.
func driverState(pod *corev1.Pod) v1beta2.DriverState {
	if pod == nil {
		return v1beta2.DriverStateUnknown
	}
	switch pod.Status.Phase {
	case corev1.PodPending:
		return v1beta2.DriverStatePending
	case corev1.PodRunning:
		return v1beta2.DriverStateRunning
	case corev1.PodSucceeded:
		return v1beta2.DriverStateCompleted
	case corev1.PodFailed:
		return v1beta2.DriverStateFailed
	case "":
		// Not looked at by the kubelet yet.
		return v1beta2.DriverStatePending
	}
	return v1beta2.DriverStateUnknown
}

// executorState maps an executor pod's phase to the executor's state.
func executorState(pod *corev1.Pod) v1beta2.ExecutorState {
	switch pod.Status.Phase {
	case corev1.PodPending, "":
		return v1beta2.ExecutorStatePending
	case corev1.PodRunning:
		return v1beta2.ExecutorStateRunning
	case corev1.PodSucceeded:
		return v1beta2.ExecutorStateCompleted
	case corev1.PodFailed:
		return v1beta2.ExecutorStateFailed
	}
	return v1beta2.ExecutorStateUnknown
}

// driverFailureMessage explains why a failed driver pod failed, with the exit code of the
// driver container when there is one, so users see it without reading the pod.
func driverFailureMessage(pod *corev1.Pod) string {
	if pod == nil {
		return "driver pod failed"
	}
	var term *corev1.ContainerStateTerminated
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		t := cs.State.Terminated
		if t == nil {
			t = cs.LastTerminationState.Terminated
		}
		if t == nil {
			continue
		}
		// Prefer Spark's driver container; a sidecar's exit says less.
		if cs.Name == v1beta2.SparkDriverContainerName || term == nil {
			term = t
		}
	}
	msg := fmt.Sprintf("driver pod %s failed", pod.Name)
	if term != nil {
		msg += fmt.Sprintf(" with exit code %d", term.ExitCode)
		if term.Reason != "" {
			msg += " (" + term.Reason + ")"
		}
		if m := strings.TrimSpace(term.Message); m != "" {
			msg += ": " + m
		}
		return msg
	}
	if pod.Status.Reason != "" {
		msg += " (" + pod.Status.Reason + ")"
	}
	if m := strings.TrimSpace(pod.Status.Message); m != "" {
		msg += ": " + m
	}
	return msg
}

// unschedulable returns the scheduler's PodScheduled=False condition of a pending pod, which
// says why no node can take it, or nil while the pod is placed or not yet looked at.
func unschedulable(pod *corev1.Pod) *corev1.PodCondition {
	if pod == nil || pod.Spec.NodeName != "" {
		return nil
	}
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return c
		}
	}
	return nil
}

// unschedulableMessage is how the application's status and events say that its driver cannot
// be placed, in the scheduler's words.
func unschedulableMessage(pod *corev1.Pod, c *corev1.PodCondition) string {
	msg := fmt.Sprintf("driver pod %s cannot be scheduled", pod.Name)
	if c.Reason != "" {
		msg += " (" + c.Reason + ")"
	}
	if m := strings.TrimSpace(c.Message); m != "" {
		msg += ": " + m
	}
	return msg
}

// sparkAppID is the Spark application ID that Spark puts on its pods.
func sparkAppID(pod *corev1.Pod) string {
	if pod == nil {
		return ""
	}
	return pod.Labels[v1beta2.SparkAppSelectorLabel]
}

// ofSubmission reports whether pod belongs to the given submission. Pods of an earlier
// submission linger while they terminate and must not move the current run.
func ofSubmission(pod *corev1.Pod, submissionID string) bool {
	return pod != nil && submissionID != "" && pod.Labels[v1beta2.LabelSubmissionID] == submissionID
}

// executorStates merges the executor pods seen now into the states recorded before. Pods of
// other submissions and non-executor pods are ignored. An executor whose pod is gone keeps its
// final state; one that vanished before finishing is COMPLETED when the driver succeeded,
// UNKNOWN while the driver runs and FAILED otherwise. At most max executors are kept, those
// with the highest executor IDs (the most recent), so a long run with many replaced executors
// cannot grow the status without bound.
func executorStates(prev map[string]v1beta2.ExecutorState, pods []corev1.Pod, submissionID string,
	driver v1beta2.DriverState, max int) map[string]v1beta2.ExecutorState {
	out := map[string]v1beta2.ExecutorState{}
	ids := map[string]int{}
	for i := range pods {
		pod := &pods[i]
		if pod.Labels[v1beta2.SparkRoleLabel] != v1beta2.SparkRoleExecutor || !ofSubmission(pod, submissionID) {
			continue
		}
		out[pod.Name] = executorState(pod)
		ids[pod.Name], _ = sparkpod.ExecutorID(pod.Name, pod.Labels)
	}
	for name, state := range prev {
		if _, seen := out[name]; seen {
			continue
		}
		if !state.IsTerminal() {
			switch driver {
			case v1beta2.DriverStateCompleted:
				state = v1beta2.ExecutorStateCompleted
			case v1beta2.DriverStateRunning, v1beta2.DriverStatePending:
				state = v1beta2.ExecutorStateUnknown
			default:
				state = v1beta2.ExecutorStateFailed
			}
		}
		out[name] = state
		ids[name], _ = sparkpod.ExecutorID(name, nil)
	}
	if max <= 0 || len(out) <= max {
		if len(out) == 0 {
			return nil
		}
		return out
	}
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if ids[names[i]] != ids[names[j]] {
			return ids[names[i]] > ids[names[j]]
		}
		return names[i] > names[j]
	})
	for _, n := range names[max:] {
		delete(out, n)
	}
	return out
}

// newlyFailedExecutors lists, sorted, the executors that are FAILED now but were not before.
func newlyFailedExecutors(prev, now map[string]v1beta2.ExecutorState) []string {
	var out []string
	for name, s := range now {
		if s == v1beta2.ExecutorStateFailed && prev[name] != v1beta2.ExecutorStateFailed {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// countExecutors counts the running and the failed executors, for metrics.
func countExecutors(states map[string]v1beta2.ExecutorState) (running, failed int) {
	for _, s := range states {
		switch s {
		case v1beta2.ExecutorStateRunning:
			running++
		case v1beta2.ExecutorStateFailed:
			failed++
		}
	}
	return running, failed
}

// TrimPodForCache is a cache transform for the pods the operator watches. The controller reads
// a pod's metadata and status only; a driver's spec (its env, volumes, ports, the Spark
// properties it points at) is most of its size, and with thousands of applications present the
// cache would otherwise hold all of it. What remains is enough to tell pods apart and follow
// them: metadata without managedFields, the node, the container names, and the status.
func TrimPodForCache(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	trimmed := &corev1.Pod{
		TypeMeta:   pod.TypeMeta,
		ObjectMeta: pod.ObjectMeta,
		Spec:       corev1.PodSpec{NodeName: pod.Spec.NodeName},
		Status:     pod.Status,
	}
	trimmed.ManagedFields = nil
	for _, c := range pod.Spec.Containers {
		trimmed.Spec.Containers = append(trimmed.Spec.Containers, corev1.Container{Name: c.Name})
	}
	return trimmed, nil
}
