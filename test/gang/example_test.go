/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestGangExample runs examples/spark-queue.yaml and examples/spark-pi-gang.yaml as the
// examples' README does: the Queue, the application, and a second copy of it. The queue's quota
// holds one at a time, so the copy waits over quota while the first runs, and starts once the
// first has completed. Both files are read as a user applies them; only what ties them to this
// test's slice of the cluster changes (the namespace, the queue's name, the pool's nodes).
func TestGangExample(t *testing.T) {
	f := newFixture(t)
	// Room on the nodes for both at once: what holds the second back is the queue's quota.
	f.node("a", "8", nil)
	f.startOperator()

	q := &schedv1alpha1.Queue{}
	readExample(t, "spark-queue.yaml", q)
	queue := f.queue(q.Name, q.Spec)

	first := &v1beta2.SparkApplication{}
	readExample(t, "spark-pi-gang.yaml", first)
	if got := ptr.Deref(first.Spec.BatchScheduler, ""); got != "gang" {
		t.Fatalf("spark-pi-gang.yaml names batch scheduler %q, want gang", got)
	}
	if got := ptr.Deref(first.Spec.BatchSchedulerOptions.Queue, ""); got != q.Name {
		t.Fatalf("spark-pi-gang.yaml names queue %q, spark-queue.yaml is %q", got, q.Name)
	}
	first.Namespace = f.ns
	first.Spec.BatchSchedulerOptions.Queue = ptr.To(queue)
	// The pool's nodes only, as every application of this package.
	pool := f.app("pool", queue, 0)
	first.Spec.NodeSelector = pool.Spec.NodeSelector
	first.Spec.Driver.Tolerations = pool.Spec.Driver.Tolerations
	first.Spec.Executor.Tolerations = pool.Spec.Executor.Tolerations
	runFor(first, 5)
	if sa := ptr.Deref(first.Spec.Driver.ServiceAccount, ""); sa != "" {
		if err := f.c.Create(f.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: sa}}); err != nil {
			t.Fatal(err)
		}
	}
	second := first.DeepCopy()
	second.Name += "-2"

	f.create(first)
	f.waitRunning(first.Name)
	f.create(second)
	f.waitWaiting(second.Name, "over quota in queue "+queue)
	f.waitState(first.Name, v1beta2.ApplicationStateCompleted)
	f.waitState(second.Name, v1beta2.ApplicationStateCompleted)
}

// readExample decodes examples/name strictly into obj.
func readExample(t *testing.T, name string, obj any) {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}
