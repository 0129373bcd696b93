/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

func TestUnfinishedApps(t *testing.T) {
	app := func(name string, state v1beta2.ApplicationStateType, conds ...metav1.Condition) v1beta2.SparkApplication {
		a := v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Name: name}}
		a.Status.AppState.State = state
		a.Status.Conditions = conds
		return a
	}
	queued := metav1.Condition{Type: "Admitted", Status: metav1.ConditionFalse, Reason: "Waiting", Message: "no room"}
	apps := []v1beta2.SparkApplication{
		app("done", v1beta2.ApplicationStateCompleted),
		app("failed", v1beta2.ApplicationStateFailed),
		app("waiting", v1beta2.ApplicationStateSubmitted, queued),
		app("new", ""),
	}
	pods := []corev1.Pod{
		executorOf("waiting", "1", "", corev1.PodPending, t0),
		driverOf("waiting", corev1.PodRunning),
		driverOf("done", corev1.PodSucceeded),
		stepPod("", "", "load-1", "n3", corev1.PodRunning, "2", t0),
	}
	waiting := `waiting state="SUBMITTED" message="" conditions=[Admitted=False(Waiting: no room)] pods=[waiting-driver:Running@n1 waiting-exec-1:Pending@]`
	for _, tc := range []struct {
		name  string
		limit int
		want  []string
	}{
		{name: "all the unfinished", limit: 5, want: []string{waiting, `new state="" message="" conditions=[] pods=[]`}},
		{name: "more than the limit", limit: 1, want: []string{waiting, "…"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, unfinishedApps(apps, pods, tc.limit)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if got := unfinishedApps(apps[:2], pods, 5); got != nil {
		t.Errorf("all finished: got %q, want nothing", got)
	}
}
