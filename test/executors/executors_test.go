/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package executors_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
)

func TestNames(t *testing.T) {
	pod := func(name, appLabel, uid string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(uid)}}
		if appLabel != "" {
			p.Labels = map[string]string{v1beta2.SparkAppNameLabel: appLabel}
		}
		return p
	}
	tests := []struct {
		name       string
		driver     *corev1.Pod
		wantPrefix string // without the 16 hex digits
	}{
		{name: "app label", driver: pod("x-driver", "spark-pi", "u1"), wantPrefix: "spark-pi-"},
		{name: "driver name", driver: pod("spark-pi-driver", "", "u1"), wantPrefix: "spark-pi-"},
		{name: "long name", driver: pod("d", strings.Repeat("a", 63), "u1"), wantPrefix: strings.Repeat("a", 30) + "-"},
		{name: "cut at a dash", driver: pod("d", strings.Repeat("a", 29)+"-bbb", "u1"), wantPrefix: strings.Repeat("a", 29) + "-"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prefix := executors.PodNamePrefix(tc.driver)
			if !strings.HasPrefix(prefix, tc.wantPrefix) || len(prefix) != len(tc.wantPrefix)+16 {
				t.Errorf("prefix %q, want %q and 16 hex digits", prefix, tc.wantPrefix)
			}
			name := executors.Name(tc.driver, 1000)
			if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
				t.Errorf("executor name %q: %v", name, msgs)
			}
			if again := executors.PodNamePrefix(tc.driver.DeepCopy()); again != prefix {
				t.Errorf("prefix not stable: %q then %q", prefix, again)
			}
		})
	}
	if executors.PodNamePrefix(pod("a-driver", "", "u1")) == executors.PodNamePrefix(pod("a-driver", "", "u2")) {
		t.Errorf("drivers with different UIDs share an executor prefix")
	}
}

func TestBuildRejects(t *testing.T) {
	driver := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", UID: "u"}}
	tests := []struct {
		name   string
		driver *corev1.Pod
		id     int
	}{
		{name: "nil driver", id: 1},
		{name: "driver without UID", driver: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "d"}}, id: 1},
		{name: "ID 0", driver: driver, id: 0},
	}
	for _, tc := range tests {
		if _, err := executors.Build(tc.driver, tc.id, executors.Options{}); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestExecutorsAgainstCluster(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "executors")

	driver := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      "spark-pi-driver",
			Namespace: ns,
			Labels: map[string]string{
				v1beta2.SparkRoleLabel:          v1beta2.SparkRoleDriver,
				v1beta2.SparkAppSelectorLabel:   "spark-0123",
				v1beta2.SparkAppNameLabel:       "spark-pi",
				v1beta2.LabelAppName:            "spark-pi",
				v1beta2.LabelLaunchedByOperator: "true",
				v1beta2.LabelSubmissionID:       "sub-1",
				"team":                          "data",
			},
		},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: v1beta2.SparkDriverContainerName, Image: "spark:3.5.5", Args: []string{"driver"},
			}},
		},
	}
	if err := c.Create(ctx, driver); err != nil {
		t.Fatal(err)
	}
	if err := executors.WaitForPhase(ctx, c, driver, corev1.PodRunning, 30*time.Second); err != nil {
		t.Fatal(err)
	}

	pods, err := executors.Create(ctx, c, driver, 3, executors.Options{Annotations: map[string]string{"test": "yes"}})
	if err != nil {
		t.Fatal(err)
	}
	prefix := executors.PodNamePrefix(driver)
	type view struct {
		Name        string
		Labels      map[string]string
		Annotations map[string]string
		Owners      []metav1.OwnerReference
		Container   string
		Image       string
		Args        []string
		Env         map[string]string
	}
	yes := true
	var got, want []view
	for i, p := range pods {
		id := []string{"1", "2", "3"}[i]
		env := map[string]string{}
		for _, e := range p.Spec.Containers[0].Env {
			v := e.Value
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
				v = "field:" + e.ValueFrom.FieldRef.FieldPath
			}
			env[e.Name] = v
		}
		got = append(got, view{p.Name, p.Labels, p.Annotations, p.OwnerReferences, p.Spec.Containers[0].Name,
			p.Spec.Containers[0].Image, p.Spec.Containers[0].Args, env})
		want = append(want, view{
			Name: prefix + "-exec-" + id,
			Labels: map[string]string{
				v1beta2.SparkRoleLabel:          v1beta2.SparkRoleExecutor,
				v1beta2.SparkExecutorIDLabel:    id,
				"spark-resource-profile-id":     "0",
				v1beta2.SparkAppSelectorLabel:   "spark-0123",
				v1beta2.SparkAppNameLabel:       "spark-pi",
				v1beta2.LabelAppName:            "spark-pi",
				v1beta2.LabelLaunchedByOperator: "true",
				v1beta2.LabelSubmissionID:       "sub-1",
			},
			Annotations: map[string]string{"test": "yes"},
			Owners: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: driver.Name, UID: driver.UID, Controller: &yes,
			}},
			Container: "spark-kubernetes-executor",
			Image:     "spark:3.5.5",
			Args:      []string{"executor"},
			Env: map[string]string{
				"SPARK_USER":                "spark",
				"SPARK_DRIVER_URL":          "spark://CoarseGrainedScheduler@" + driver.Status.PodIP + ":7078",
				"SPARK_EXECUTOR_CORES":      "1",
				"SPARK_EXECUTOR_MEMORY":     "1024m",
				"SPARK_APPLICATION_ID":      "spark-0123",
				"SPARK_CONF_DIR":            "/opt/spark/conf",
				"SPARK_EXECUTOR_ID":         id,
				"SPARK_RESOURCE_PROFILE_ID": "0",
				"SPARK_EXECUTOR_POD_IP":     "field:status.podIP",
				"SPARK_EXECUTOR_POD_NAME":   "field:metadata.name",
			},
		})
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("executors (-want +got):\n%s", d)
	}
	if mem := pods[0].Spec.Containers[0].Resources.Requests[corev1.ResourceMemory]; mem.String() != "1408Mi" {
		t.Errorf("memory request %s, want 1408Mi", mem.String())
	}

	for _, p := range pods {
		if err := executors.WaitForPhase(ctx, c, p, corev1.PodRunning, 30*time.Second); err != nil {
			t.Fatal(err)
		}
	}

	// More executors continue the IDs, as with dynamic allocation.
	more, err := executors.Create(ctx, c, driver, 1, executors.Options{FirstID: 4, Cores: 2, MemoryMiB: 4096})
	if err != nil {
		t.Fatal(err)
	}
	res := more[0].Spec.Containers[0].Resources.Requests
	if more[0].Name != prefix+"-exec-4" || res.Cpu().String() != "2" || res.Memory().String() != "4505Mi" {
		t.Errorf("4th executor %s requests cpu %s memory %s; want %s-exec-4, 2, 4505Mi",
			more[0].Name, res.Cpu(), res.Memory(), prefix)
	}
	if _, err := executors.Create(ctx, c, driver, 1, executors.Options{FirstID: 4}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("creating executor 4 again: %v, want AlreadyExists", err)
	}

	if err := executors.Fail(ctx, c, pods[1], 137); err != nil {
		t.Fatal(err)
	}
	term := pods[1].Status.ContainerStatuses[0].State.Terminated
	if term == nil || term.ExitCode != 137 {
		t.Errorf("failed executor's container state %+v, want exit code 137", pods[1].Status.ContainerStatuses[0].State)
	}
	for _, p := range []*corev1.Pod{pods[0], pods[2]} {
		if err := c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			t.Fatal(err)
		}
		if p.Status.Phase != corev1.PodRunning {
			t.Errorf("%s is %s after another executor failed", p.Name, p.Status.Phase)
		}
	}

	if err := executors.Delete(ctx, c, more[0], more[0]); err != nil {
		t.Errorf("Delete: %v", err)
	}

	if err := c.Delete(ctx, driver, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 60*time.Second, "garbage collection of the executors", func() (bool, error) {
		var list corev1.PodList
		err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{v1beta2.SparkRoleLabel: v1beta2.SparkRoleExecutor})
		return err == nil && len(list.Items) == 0, err
	})
}
