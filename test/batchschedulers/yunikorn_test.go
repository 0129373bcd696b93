/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package batchschedulers

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/yunikorn"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/sparkplay"
)

// TestYuniKorn runs 20 applications, created at once, through YuniKorn (scheduler-plugin mode)
// on a cluster that fits 4 of them (2 nodes of 4 CPUs; a 1-CPU driver and a 1-CPU executor
// each), behind the operator's whole-gang admission: all complete, never more than 4 drivers
// run at once, and no executor of a running driver waits for room (no partial start). The pods
// carry the queue label and the yunikorn scheduler, and no task groups.
func TestYuniKorn(t *testing.T) {
	requireThirdParty(t, "yunikorn-k8shim-v1.8.0.tar.gz", "yunikorn-core-v1.8.0-1.tar.gz", "yunikorn-scheduler-interface-v1.8.0-0.tar.gz")
	kubeconfig, _ := ownCluster(t, "yunikorn", 2, 4)
	c, _ := cluster.Clients(t, kubeconfig)
	ns := cluster.Namespace(t, c, "yunikorn")
	f := newFixture(t, c, ns, sparkplay.Options{})
	t.Cleanup(f.describeOnFailure)

	cluster.StartOperator(t, "operator", "--kubeconfig", kubeconfig, "--namespaces", ns, "--enable-batch-scheduler",
		"--enable-spark-connect=false", "-logtostderr", "-v=1")

	apps := names("pi", 20)
	f.createAtOnce(apps, func(name string) *v1beta2.SparkApplication {
		app := f.app(name, yunikorn.Name, 1)
		app.Spec.BatchSchedulerOptions = &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To("root.spark")}
		app.Spec.NodeSelector = map[string]string{"type": "kwok"}
		return app
	})
	f.runToCompletion(8*time.Minute, apps, nil)

	t.Run("no partial starts", func(t *testing.T) {
		f.checkNoPartialStarts(t, 4)
		t.Logf("peak drivers %d", f.PeakDrivers())
	})

	t.Run("pods", func(t *testing.T) {
		pods, err := f.sparkPods()
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range apps {
			app := f.get(name)
			roles := map[string]int{}
			for _, p := range pods {
				if p.Labels[v1beta2.LabelAppName] != name || p.Labels[v1beta2.LabelSubmissionID] != app.Status.SubmissionID {
					continue
				}
				role := p.Labels[v1beta2.SparkRoleLabel]
				roles[role]++
				if p.Spec.SchedulerName != yunikorn.SchedulerName {
					t.Errorf("%s pod %s: schedulerName %q, want %q", role, p.Name, p.Spec.SchedulerName, yunikorn.SchedulerName)
				}
				if got := p.Labels[yunikorn.LabelQueue]; got != "root.spark" {
					t.Errorf("%s pod %s: label %s = %q, want root.spark", role, p.Name, yunikorn.LabelQueue, got)
				}
				for k := range p.Annotations {
					if strings.HasPrefix(k, "yunikorn.apache.org/task-group") {
						t.Errorf("%s pod %s: annotation %s: the operator holds the gang, not YuniKorn's task groups", role, p.Name, k)
					}
				}
			}
			if diff := cmp.Diff(map[string]int{v1beta2.SparkRoleDriver: 1, v1beta2.SparkRoleExecutor: 1}, roles); diff != "" {
				t.Errorf("%s: pods by role (-want +got):\n%s", name, diff)
			}
		}
	})
}

// cappedYuniKornQueue is a YuniKorn queue, root.capped, whose resources.max is cappedCPU
// (vcore), added to the configuration hack/batch-schedulers.sh gives YuniKorn (which reloads it
// on the change): YuniKorn binds no pod of the queue beyond it.
func cappedYuniKornQueue() *cappedQueue {
	return &cappedQueue{name: "root.capped", setup: func(t *testing.T, c client.Client) {
		ctx := context.Background()
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "yunikorn", Name: "yunikorn-configs"}, cm); err != nil {
			t.Fatal(err)
		}
		var conf struct {
			Partitions []map[string]any `json:"partitions"`
		}
		if err := yaml.Unmarshal([]byte(cm.Data["queues.yaml"]), &conf); err != nil {
			t.Fatal(err)
		}
		// partitions[0].queues[0] is root.
		root := conf.Partitions[0]["queues"].([]any)[0].(map[string]any)
		root["queues"] = append(root["queues"].([]any), map[string]any{"name": "capped",
			"properties": map[string]any{"application.sort.policy": "fifo"},
			"resources":  map[string]any{"max": map[string]any{"vcore": cappedCPU}}})
		b, err := yaml.Marshal(conf)
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["queues.yaml"] = string(b)
		if err := c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}}
}
