/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package cluster

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Probe creates pod, waits until the pod scheduler has decided on it (bound it to a node, or
// found no room for it: PodScheduled False with reason Unschedulable), deletes it and returns it
// as decided.
//
// It is the event a test waits for before it checks that something did not happen to pods it
// created earlier. The scheduler takes pods in through one watch, in the order the API server
// wrote them, and takes pods of equal priority from its active queue in the order they came; a
// pod one of its PreEnqueue plugins holds back (a member of a gang short of its minCount) never
// enters that queue. So once a probe created after those pods, of their priority, is decided,
// the scheduler has taken them in and tried every one it was going to try; and the probe's
// verdict says what room it found.
func Probe(t testing.TB, c client.Client, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	if err := c.Create(ctx, pod); err != nil {
		t.Fatalf("creating probe pod %s: %v", pod.Name, err)
	}
	Eventually(t, 60*time.Second, "the scheduler's verdict on probe pod "+pod.Name, func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return false, err
		}
		return pod.Spec.NodeName != "" || Unschedulable(pod), nil
	})
	if err := c.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
		t.Fatalf("deleting probe pod %s: %v", pod.Name, err)
	}
	return pod
}

// Unschedulable reports whether the pod scheduler tried pod and found no room for it.
func Unschedulable(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
		}
	}
	return false
}
