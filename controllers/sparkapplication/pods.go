/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

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
		if m := lastLines(term.Message, terminationLines, terminationBytes); m != "" {
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

// A failed driver's termination message is the end of its log (sparkpod asks the kubelet for
// that): the status keeps its last lines, within a size that leaves the status small.
const (
	terminationLines = 10
	terminationBytes = 1024
)

// lastLines returns at most n of s's last non-blank lines, and at most max bytes of them (cut
// at a line's start where it can be, never inside a character).
func lastLines(s string, n, max int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	kept := make([]string, 0, n)
	for i := len(lines) - 1; i >= 0 && len(kept) < n; i-- {
		if l := strings.TrimRight(lines[i], " \t\r"); strings.TrimSpace(l) != "" {
			kept = append(kept, l)
		}
	}
	slices.Reverse(kept)
	out := strings.Join(kept, "\n")
	for len(out) > max {
		if i := strings.IndexByte(out, '\n'); i >= 0 && len(out)-i-1 > 0 {
			out = out[i+1:]
			continue
		}
		cut := len(out) - max
		for cut < len(out) && !utf8.RuneStart(out[cut]) {
			cut++
		}
		out = out[cut:]
	}
	return out
}

// driverLost says when a driver pod that was deleted is still not gone, nor reported finished,
// more than slack past its deletion deadline (deletionTimestamp, the end of its grace period):
// the kubelet of its node is not acting on it, and the node is lost to the run (stopped, or cut
// off; the node controller evicts a pod from a node that stopped answering, 5 minutes after by
// default). Before then it returns how much longer to wait; for any other pod, nothing.
func driverLost(pod *corev1.Pod, now time.Time, slack time.Duration) (string, time.Duration) {
	if pod == nil || pod.DeletionTimestamp == nil || driverState(pod).IsTerminal() {
		return "", 0
	}
	deadline := pod.DeletionTimestamp.Add(slack)
	if wait := deadline.Sub(now); wait > 0 {
		return "", wait
	}
	node := pod.Spec.NodeName
	if node == "" {
		node = "(none)"
	}
	return fmt.Sprintf("driver pod %s is lost: deleted at %s, its node %s has not stopped it %s later",
		pod.Name, pod.DeletionTimestamp.UTC().Format(time.RFC3339), node, now.Sub(pod.DeletionTimestamp.Time).Round(time.Second)), 0
}

// unschedulable returns the scheduler's PodScheduled=False condition of a pending pod, which
// says why no node can take it, or nil while the pod is placed or not yet looked at.
func unschedulable(pod *corev1.Pod) *corev1.PodCondition {
	if pod == nil || pod.Spec.NodeName != "" {
		return nil
	}
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		// A gated pod is not the scheduler's to place yet (notPickedUp speaks of it): the
		// condition the API server gives it says so, and is no verdict.
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != corev1.PodReasonSchedulingGated {
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

// notPickedUp says, once a pending driver has waited threshold since it was created without
// any scheduler looking at it (no PodScheduled condition at all: a scheduler that cannot place
// a pod says so in that condition) or with scheduling gates no one removed, which scheduler or
// gates it waits for. Before then it returns how much longer to wait; for a placed pod, or one
// a scheduler has looked at, nothing. A batch scheduler's gate (the gang scheduler's until the
// driver's room is held) is lifted within moments: a driver is not said to wait for it, nor
// written, before the threshold.
func notPickedUp(pod *corev1.Pod, now time.Time, threshold time.Duration) (string, time.Duration) {
	if pod == nil || pod.Spec.NodeName != "" {
		return "", 0
	}
	gated := len(pod.Spec.SchedulingGates) > 0
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && !gated {
			return "", 0
		}
	}
	waited := now.Sub(pod.CreationTimestamp.Time)
	if waited < threshold {
		return "", threshold - waited
	}
	if gated {
		gates := make([]string, len(pod.Spec.SchedulingGates))
		for i, g := range pod.Spec.SchedulingGates {
			gates[i] = g.Name
		}
		return fmt.Sprintf("driver pod %s waits for its scheduling gates to be removed (%s): no scheduler may place it until they are, and none was in %s",
			pod.Name, strings.Join(gates, ", "), threshold), 0
	}
	name := pod.Spec.SchedulerName
	if name == "" {
		name = corev1.DefaultSchedulerName
	}
	return fmt.Sprintf("driver pod %s waits for scheduler %q: no scheduler has picked it up in %s",
		pod.Name, name, threshold), 0
}

// beyondEveryNode says which of a pod's requests exceed what the largest node can allocate,
// each compared with the largest node's (nodes holds each node's allocatable). Such a pod can
// never be placed, however long it waits. Nothing is said when no node is known.
func beyondEveryNode(pod *corev1.Pod, nodes []corev1.ResourceList) string {
	if pod == nil || len(nodes) == 0 {
		return ""
	}
	requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	var over []string
	for _, name := range sortedResourceNames(requests) {
		want := requests[name]
		if want.IsZero() {
			continue
		}
		var largest resource.Quantity
		for _, n := range nodes {
			if q, ok := n[name]; ok && q.Cmp(largest) > 0 {
				largest = q
			}
		}
		if want.Cmp(largest) > 0 {
			over = append(over, fmt.Sprintf("%s %s (largest node: %s)", name, want.String(), largest.String()))
		}
	}
	if len(over) == 0 {
		return ""
	}
	return "the driver pod asks for more than any node has: " + strings.Join(over, ", ")
}

func sortedResourceNames(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
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

// countExecutors counts the running, the failed and the completed executors, for metrics.
func countExecutors(states map[string]v1beta2.ExecutorState) (running, failed, completed int) {
	for _, s := range states {
		switch s {
		case v1beta2.ExecutorStateRunning:
			running++
		case v1beta2.ExecutorStateFailed:
			failed++
		case v1beta2.ExecutorStateCompleted:
			completed++
		}
	}
	return running, failed, completed
}

// TrimPodForCache is a cache transform for the pods the operator watches. The controller reads
// a pod's metadata and status only; a driver's spec (its env, volumes, ports, the Spark
// properties it points at) is most of its size, and with thousands of applications present the
// cache would otherwise hold all of it. What remains is enough to tell pods apart and follow
// them: metadata without managedFields, the node and the scheduler, the container names, what
// the pod requests (to tell a driver that no node can ever take), and the status.
func TrimPodForCache(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	trimmed := &corev1.Pod{
		TypeMeta:   pod.TypeMeta,
		ObjectMeta: pod.ObjectMeta,
		Spec: corev1.PodSpec{NodeName: pod.Spec.NodeName, SchedulerName: pod.Spec.SchedulerName,
			Overhead: pod.Spec.Overhead},
		Status: pod.Status,
	}
	trimmed.ManagedFields = nil
	if r := pod.Spec.Resources; r != nil && len(r.Requests) > 0 {
		trimmed.Spec.Resources = &corev1.ResourceRequirements{Requests: r.Requests}
	}
	for _, c := range pod.Spec.InitContainers {
		trimmed.Spec.InitContainers = append(trimmed.Spec.InitContainers, corev1.Container{Name: c.Name,
			Resources: corev1.ResourceRequirements{Requests: c.Resources.Requests}, RestartPolicy: c.RestartPolicy})
	}
	for _, c := range pod.Spec.Containers {
		trimmed.Spec.Containers = append(trimmed.Spec.Containers, corev1.Container{Name: c.Name,
			Resources: corev1.ResourceRequirements{Requests: c.Resources.Requests}})
	}
	return trimmed, nil
}
