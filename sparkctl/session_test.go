/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
)

func fixtureSessions(now time.Time) []v1alpha1.SparkConnect {
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	return []v1alpha1.SparkConnect{
		{ObjectMeta: metav1.ObjectMeta{Name: "fresh", Namespace: "data", CreationTimestamp: ago(time.Second)}},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: "data", CreationTimestamp: ago(time.Minute)},
			Status: v1alpha1.SparkConnectStatus{
				State: v1alpha1.SparkConnectStateProvisioning,
				Conditions: []metav1.Condition{{Type: v1alpha1.ConditionServerPodReady, Status: metav1.ConditionFalse,
					Reason: v1alpha1.ReasonQueued, Message: "behind 2 applications in queue default"}},
				Server: v1alpha1.SparkConnectServerStatus{ServiceName: "held-server"},
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "notebook", Namespace: "data", CreationTimestamp: ago(2 * time.Hour)},
			Status: v1alpha1.SparkConnectStatus{
				State: v1alpha1.SparkConnectStateReady,
				Conditions: []metav1.Condition{{Type: v1alpha1.ConditionServerPodReady, Status: metav1.ConditionTrue,
					Reason: v1alpha1.ReasonServerPodReady, Message: "Server pod is ready"}},
				Server:         v1alpha1.SparkConnectServerStatus{PodName: "notebook-server", PodIP: "10.0.0.7", ServiceName: "notebook-server"},
				Executors:      map[string]int{"running": 2, "failed": 1},
				StartTime:      ago(2 * time.Hour),
				LastUpdateTime: ago(5 * time.Minute),
			},
		},
	}
}

func TestPrintSessions(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	sessions := fixtureSessions(now)
	tests := []struct {
		name  string
		print func(*bytes.Buffer) error
		want  string
	}{{
		name:  "list",
		print: func(b *bytes.Buffer) error { return printSessionTable(b, sessions, false, now) },
		want: `NAME       STATE    SERVER            SERVICE           EXECUTORS   AGE
fresh      New      <none>            <none>            0/0         1s
held       Queued   <none>            held-server       0/0         60s
notebook   Ready    notebook-server   notebook-server   2/3         120m
`,
	}, {
		name:  "list all namespaces",
		print: func(b *bytes.Buffer) error { return printSessionTable(b, sessions[2:], true, now) },
		want: `NAMESPACE   NAME       STATE   SERVER            SERVICE           EXECUTORS   AGE
data        notebook   Ready   notebook-server   notebook-server   2/3         120m
`,
	}, {
		name:  "status",
		print: func(b *bytes.Buffer) error { return printSessionStatus(b, &sessions[2], now) },
		want: `Name:           notebook
Namespace:      data
State:          Ready
Server ready:   True (ServerPodReady: Server pod is ready)
Server pod:     notebook-server
Server IP:      10.0.0.7
Service:        notebook-server
Connect URL:    sc://notebook-server.data.svc:15002
Started:        2026-11-23T10:00:00Z (120m ago)
Last update:    2026-11-23T11:55:00Z (5m ago)
Executors:      failed 1, running 2
`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.print(&b); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}
