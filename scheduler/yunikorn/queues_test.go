/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package yunikorn

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/sparkop/spark-operator/scheduler/gang"
)

const queuesYAML = `partitions:
  - name: default
    placementrules:
      - name: provided
        create: true
    queues:
      - name: root
        queues:
          - name: default
          - name: Spark
            resources:
              guaranteed: {vcore: "2"}
              max: {vcore: 16, memory: 68719476736}
            childtemplate:
              resources:
                max: {vcore: "4"}
            queues:
              - name: etl
                resources:
                  max: {vcore: 8000m, pods: "20", nvidia.com/gpu: "1"}
`

// TestQueueLimits: the limits of a YuniKorn queue, from its configuration as YuniKorn reads it
// (yunikorn-configs over yunikorn-defaults): the queue's max, then its ancestors', vcore as
// cpu; a queue the provided rule creates gets its parent's child template; none without a max
// on the way, without a queue named, or without a configuration.
func TestQueueLimits(t *testing.T) {
	cm := func(name, queues string) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: name}, Data: map[string]string{queuesKey: queues}}
	}
	l := func(kv ...string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return out
	}
	spark := gang.ForeignQueue{Name: "root.spark", Max: l("cpu", "16", "memory", "64Gi")} // 68719476736 bytes
	rootQ := gang.ForeignQueue{Name: "root", Max: l()}
	tests := []struct {
		name, queue string
		objs        []client.Object
		want        []gang.ForeignQueue
	}{
		{name: "a configured queue, and its parent's max", queue: "root.spark.etl", objs: []client.Object{cm(configsConfigMap, queuesYAML)},
			want: []gang.ForeignQueue{{Name: "root.spark.etl", Max: l("cpu", "8", "pods", "20", "nvidia.com/gpu", "1")}, spark, rootQ}},
		{name: "a name under root, any case", queue: "SPARK", objs: []client.Object{cm(configsConfigMap, queuesYAML)},
			want: []gang.ForeignQueue{spark, rootQ}},
		{name: "a queue the placement rule creates: its parent's child template", queue: "root.spark.adhoc", objs: []client.Object{cm(configsConfigMap, queuesYAML)},
			want: []gang.ForeignQueue{{Name: "root.spark.adhoc", Max: l("cpu", "4")}, spark, rootQ}},
		{name: "no max on the way", queue: "root.default", objs: []client.Object{cm(configsConfigMap, queuesYAML)}},
		{name: "yunikorn-configs over yunikorn-defaults", queue: "root.spark",
			objs: []client.Object{cm(defaultsConfigMap, queuesYAML), cm(configsConfigMap, "partitions: [{name: default, queues: [{name: root}]}]")}},
		{name: "yunikorn-defaults alone", queue: "root.spark", objs: []client.Object{cm(defaultsConfigMap, queuesYAML)},
			want: []gang.ForeignQueue{spark, rootQ}},
		{name: "no queue named", objs: []client.Object{cm(configsConfigMap, queuesYAML)}},
		{name: "no configuration", queue: "root.spark"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(fake.NewClientBuilder().WithObjects(tt.objs...).Build())
			got, err := s.QueueLimits(context.Background(), tt.queue)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("limits (-want +got):\n%s", diff)
			}
		})
	}
}
