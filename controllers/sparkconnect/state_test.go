/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkconnect

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
)

func serverPod(phase corev1.PodPhase, ready bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sc-server"}, Status: corev1.PodStatus{Phase: phase}}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	return p
}

func TestDecide(t *testing.T) {
	const (
		none         = v1alpha1.SparkConnectStateNew
		provisioning = v1alpha1.SparkConnectStateProvisioning
		ready        = v1alpha1.SparkConnectStateReady
		notReady     = v1alpha1.SparkConnectStateNotReady
		failed       = v1alpha1.SparkConnectStateFailed
	)
	tests := []struct {
		name       string
		prev       v1alpha1.SparkConnectState
		obs        observation
		want       v1alpha1.SparkConnectState
		wantReason string
	}{
		{"invalid spec", none, observation{invalid: "no image"}, failed, v1alpha1.ReasonInvalidSpec},
		{"just created", none, observation{server: serverPod("", false), created: true}, provisioning, v1alpha1.ReasonServerPodNotReady},
		{"recreated after being ready", ready, observation{server: serverPod("", false), created: true}, provisioning, v1alpha1.ReasonServerPodNotReady},
		{"pending", provisioning, observation{server: serverPod(corev1.PodPending, false)}, provisioning, v1alpha1.ReasonServerPodNotReady},
		{"running, not ready yet", provisioning, observation{server: serverPod(corev1.PodRunning, false)}, provisioning, v1alpha1.ReasonServerPodNotReady},
		{"ready", provisioning, observation{server: serverPod(corev1.PodRunning, true)}, ready, v1alpha1.ReasonServerPodReady},
		{"lost readiness", ready, observation{server: serverPod(corev1.PodRunning, false)}, notReady, v1alpha1.ReasonServerPodNotReady},
		{"still not ready", notReady, observation{server: serverPod(corev1.PodRunning, false)}, notReady, v1alpha1.ReasonServerPodNotReady},
		{"ready again", notReady, observation{server: serverPod(corev1.PodRunning, true)}, ready, v1alpha1.ReasonServerPodReady},
		{"terminated", ready, observation{server: serverPod(corev1.PodFailed, false)}, failed, v1alpha1.ReasonServerPodFailed},
		{"exited", ready, observation{server: serverPod(corev1.PodSucceeded, false)}, failed, v1alpha1.ReasonServerPodFailed},
		{"being replaced", ready, observation{}, provisioning, v1alpha1.ReasonServerPodNotReady},
		{"spec fixed after invalid", failed, observation{server: serverPod("", false), created: true}, provisioning, v1alpha1.ReasonServerPodNotReady},
		{"queued by its batch scheduler", none, observation{queued: "behind 2 applications"}, provisioning, v1alpha1.ReasonQueued},
		{"queued again after a ready server was deleted", ready, observation{queued: "over quota"}, provisioning, v1alpha1.ReasonQueued},
		{"rejected by its batch scheduler", provisioning, observation{rejected: "bigger than any node"}, failed, v1alpha1.ReasonRejected},
		{"admitted after being rejected and edited", failed, observation{server: serverPod("", false), created: true}, provisioning, v1alpha1.ReasonServerPodNotReady},
		{"being replaced, old pod terminating", ready, observation{replaced: serverPod(corev1.PodRunning, true)}, provisioning, v1alpha1.ReasonServerPodNotReady},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := decide(tt.prev, tt.obs)
			if v.state != tt.want || v.reason != tt.wantReason {
				t.Errorf("decide = %s/%s, want %s/%s (%s)", v.state, v.reason, tt.want, tt.wantReason, v.message)
			}
			if (v.status == metav1.ConditionTrue) != (tt.want == ready) {
				t.Errorf("condition status %s for state %s", v.status, v.state)
			}
		})
	}
}

func TestExecutorCounts(t *testing.T) {
	pods := []corev1.Pod{
		{Status: corev1.PodStatus{Phase: corev1.PodRunning}}, {Status: corev1.PodStatus{Phase: corev1.PodRunning}},
		{Status: corev1.PodStatus{Phase: corev1.PodPending}}, {}, {Status: corev1.PodStatus{Phase: corev1.PodFailed}},
	}
	if diff := cmp.Diff(map[string]int{"running": 2, "pending": 2, "failed": 1}, executorCounts(pods)); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if got := executorCounts(nil); got != nil {
		t.Errorf("no executors: %v, want nil", got)
	}
}
