/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
)

// TestShownReasons: what this process handed out wins; otherwise the status tells (a restarted
// operator does not wake workloads whose shown reason still holds): an application's Queued
// condition, a session's ServerPodReady condition with reason Queued.
func TestShownReasons(t *testing.T) {
	queued := func(name, msg string, status metav1.ConditionStatus) object {
		a := app(name, "s1", v1beta2.ApplicationStateNew, 1, nil)
		a.Status.Conditions = []metav1.Condition{{Type: scheduler.ConditionQueued, Status: status, Message: msg}}
		return applicationObject(&a)
	}
	sessionShowing := func(name, reason, msg string) object {
		c := session(name, "s1", v1alpha1.SparkConnectStateProvisioning, "", nil)
		c.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionServerPodReady, Status: metav1.ConditionFalse, Reason: reason, Message: msg}}
		return sessionObject(c, fixedDemand(1))
	}
	plain := app("d", "s1", v1beta2.ApplicationStateNew, 1, nil)
	workloads := []object{queued("a", "written before", metav1.ConditionTrue),
		queued("b", "written before", metav1.ConditionTrue), queued("c", "no longer queued", metav1.ConditionFalse),
		applicationObject(&plain), sessionShowing("a", v1alpha1.ReasonQueued, "session written before"),
		sessionShowing("e", v1alpha1.ReasonServerPodNotReady, "Server pod created")}
	appKey := func(name string) core.Key {
		return scheduler.ApplicationKey(types.NamespacedName{Namespace: "ns", Name: name})
	}
	sessionKey := core.Key{Kind: scheduler.KindSession, NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}
	handedOut := core.Reason{Message: "handed out", Kind: core.ReasonKind{Is: core.KindBehind, Queue: "q"}}
	got := shownReasons(workloads, map[core.Key]core.Reason{appKey("b"): handedOut})
	want := map[core.Key]core.Reason{appKey("a"): {Message: "written before"}, appKey("b"): handedOut, sessionKey: {Message: "session written before"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shown reasons (-want +got):\n%s", diff)
	}
}
