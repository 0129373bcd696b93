/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestSessionCommands lists, shows and deletes a SparkConnect stored in the API server, with the
// status an operator would have written.
func TestSessionCommands(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "sparkctl-session")
	run := func(args ...string) (string, string, error) {
		return sparkctl(t, ctx, "", ns, append([]string{"session"}, args...)...)
	}
	if _, errOut, err := run("list"); err != nil || !strings.Contains(errOut, "No sparkconnects found in namespace") {
		t.Errorf("list of none: err %v, stderr %q", err, errOut)
	}

	conn := &v1alpha1.SparkConnect{
		ObjectMeta: metav1.ObjectMeta{Name: "notebook", Namespace: ns},
		Spec:       v1alpha1.SparkConnectSpec{SparkVersion: "4.0.4", Image: ptr.To("spark:4")},
	}
	if err := c.Create(ctx, conn); err != nil {
		t.Fatal(err)
	}
	conn.Status = v1alpha1.SparkConnectStatus{
		State:     v1alpha1.SparkConnectStateReady,
		Server:    v1alpha1.SparkConnectServerStatus{PodName: "notebook-server", PodIP: "10.0.0.9", ServiceName: "notebook-server"},
		Executors: map[string]int{"running": 2, "pending": 1},
		StartTime: metav1.Now(),
	}
	if err := c.Status().Update(ctx, conn); err != nil {
		t.Fatal(err)
	}

	out, errOut, err := run("list")
	if err != nil {
		t.Fatalf("list: %v (%s)", err, errOut)
	}
	wantRows(t, "session list", out, [][]string{
		{"NAME", "STATE", "SERVER", "SERVICE", "EXECUTORS", "AGE"},
		{"notebook", "Ready", "notebook-server", "notebook-server", "2/3", "AGE"},
	})
	if out, _, _ := run("ls", "-o", "name"); out != "sparkconnect.sparkoperator.k8s.io/notebook\n" {
		t.Errorf("list -o name = %q", out)
	}
	out, errOut, err = run("status", "notebook")
	if err != nil {
		t.Fatalf("status: %v (%s)", err, errOut)
	}
	oneSpace := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"State: Ready", "Connect URL: sc://notebook-server." + ns + ".svc:15002",
		"Executors: pending 1, running 2"} {
		if !strings.Contains(oneSpace, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if out, _, _ := run("status", "notebook", "-o", "yaml"); !strings.Contains(out, "kind: SparkConnect") || !strings.Contains(out, "podIp: 10.0.0.9") {
		t.Errorf("status -o yaml:\n%s", out)
	}
	if _, _, err := run("status", "missing"); err == nil || err.Error() != `sparkconnect "missing" not found in namespace "`+ns+`"` {
		t.Errorf("status of a missing session: %v", err)
	}

	if out, errOut, err := run("delete", "notebook"); err != nil || out != "sparkconnect \"notebook\" deleted\n" {
		t.Fatalf("delete: %q, %v (%s)", out, err, errOut)
	}
	cluster.Eventually(t, 30*time.Second, "the SparkConnect to be gone", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(conn), &v1alpha1.SparkConnect{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}
