/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkconnect

// The state of a SparkConnect, decided from what was observed. Every transition is here:
//
//	from            observed                                   to
//	any             no server pod can be built from the spec   Failed (InvalidSpec)
//	any             the batch scheduler can never admit it     Failed (Rejected)
//	any             the batch scheduler holds the server back  Provisioning (Queued)
//	any             the server pod was just created            Provisioning
//	any             the server pod is ready                    Ready
//	any             the server pod terminated (Failed/Succ.)   Failed (ServerPodFailed)
//	"" / Provisioning / Failed   not ready, running or pending  Provisioning
//	Ready / NotReady  not ready, running or pending            NotReady
//
// A terminated server is not replaced (its pod stays for its logs); deleting the server pod gets
// a new one, as does deleting it in any other state.

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
)

// observation is what one reconcile saw.
type observation struct {
	// invalid is why no server pod can be built from the spec; empty when one can.
	invalid string
	// queued is why the session's batch scheduler holds its next server back; rejected why it
	// never admits it as it is. Both empty once admitted.
	queued, rejected string
	// retryAfter, for a queued session, is when to ask its batch scheduler again; 0 waits
	// for the scheduler to wake it.
	retryAfter time.Duration
	// server is the server pod (nil when absent); created tells it was created just now.
	server  *corev1.Pod
	created bool
	// admittedBy names the batch scheduler that admitted the server created just now.
	admittedBy string
	// replaced is the server pod being deleted (server is nil then).
	replaced *corev1.Pod
}

// verdict is the state and the ServerPodReady condition to record.
type verdict struct {
	state   v1alpha1.SparkConnectState
	status  metav1.ConditionStatus
	reason  string
	message string
}

// decide is the state machine of the table above.
func decide(prev v1alpha1.SparkConnectState, o observation) verdict {
	switch {
	case o.invalid != "":
		return verdict{v1alpha1.SparkConnectStateFailed, metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec, o.invalid}
	case o.rejected != "":
		return verdict{v1alpha1.SparkConnectStateFailed, metav1.ConditionFalse, v1alpha1.ReasonRejected, o.rejected}
	case o.queued != "":
		return verdict{v1alpha1.SparkConnectStateProvisioning, metav1.ConditionFalse, v1alpha1.ReasonQueued, o.queued}
	case o.server == nil:
		// Only while the pod is being replaced (it was deleted and is still terminating).
		return verdict{v1alpha1.SparkConnectStateProvisioning, metav1.ConditionFalse, v1alpha1.ReasonServerPodNotReady,
			"Server pod is being replaced"}
	case o.created:
		return verdict{v1alpha1.SparkConnectStateProvisioning, metav1.ConditionFalse, v1alpha1.ReasonServerPodNotReady,
			"Server pod created"}
	case podReady(o.server):
		return verdict{v1alpha1.SparkConnectStateReady, metav1.ConditionTrue, v1alpha1.ReasonServerPodReady, "Server pod is ready"}
	case o.server.Status.Phase == corev1.PodFailed || o.server.Status.Phase == corev1.PodSucceeded:
		return verdict{v1alpha1.SparkConnectStateFailed, metav1.ConditionFalse, v1alpha1.ReasonServerPodFailed,
			"Server pod terminated" + podDetail(o.server) + "; delete pod " + o.server.Name + " to start a new server"}
	}
	state := v1alpha1.SparkConnectStateProvisioning
	if prev == v1alpha1.SparkConnectStateReady || prev == v1alpha1.SparkConnectStateNotReady {
		state = v1alpha1.SparkConnectStateNotReady
	}
	return verdict{state, metav1.ConditionFalse, v1alpha1.ReasonServerPodNotReady, "Server pod is not ready" + podDetail(o.server)}
}

func podReady(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning || !pod.DeletionTimestamp.IsZero() {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podDetail says why a pod is not ready, as far as its status tells: ": <phase>, <reason>: ...".
func podDetail(pod *corev1.Pod) string {
	parts := []string{}
	if pod.Status.Phase != "" {
		parts = append(parts, string(pod.Status.Phase))
	}
	if !pod.DeletionTimestamp.IsZero() {
		parts = append(parts, "terminating")
	}
	for _, cs := range pod.Status.ContainerStatuses {
		switch {
		case cs.State.Waiting != nil && cs.State.Waiting.Reason != "":
			parts = append(parts, fmt.Sprintf("container %s %s", cs.Name, cs.State.Waiting.Reason))
		case cs.State.Terminated != nil:
			parts = append(parts, fmt.Sprintf("container %s exited with code %d", cs.Name, cs.State.Terminated.ExitCode))
		}
	}
	if pod.Status.Reason != "" {
		parts = append(parts, pod.Status.Reason)
	}
	if m := strings.TrimSpace(pod.Status.Message); m != "" {
		parts = append(parts, m)
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, ", ")
}

// executorCounts counts executor pods by phase, in lower case, as the Kubeflow operator does.
func executorCounts(pods []corev1.Pod) map[string]int {
	if len(pods) == 0 {
		return nil
	}
	counts := map[string]int{}
	for _, p := range pods {
		phase := strings.ToLower(string(p.Status.Phase))
		if phase == "" {
			phase = "pending"
		}
		counts[phase]++
	}
	return counts
}
