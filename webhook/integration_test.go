/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package webhook_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/submission/native"
	"github.com/sparkop/spark-operator/test/executors"
	"github.com/sparkop/spark-operator/webhook"
)

func TestWebhooks(t *testing.T) {
	e := startWebhook(t, func(o *webhook.Options) { o.EnableResourceQuota = true })
	ctx := context.Background()
	c := e.c

	app := customisedApp(e.ns)
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}

	t.Run("driver and executors get the customisations", func(t *testing.T) {
		driver := bareDriver(app)
		if err := c.Create(ctx, driver); err != nil {
			t.Fatal(err)
		}
		got := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(driver), got); err != nil {
			t.Fatal(err)
		}
		want := summary{
			Owners:         []string{"SparkApplication/custom"},
			Volumes:        []string{"data", "extra-vol", "gcp-volume", "hadoop-configmap-volume", "spark-conf-volume-driver", "spark-configmap-volume"},
			Mounts:         []string{"spark-conf-volume-driver:/opt/spark/conf", "spark-configmap-volume:/etc/spark/conf", "hadoop-configmap-volume:/etc/hadoop/conf", "extra-vol:/etc/extra", "gcp-volume:/mnt/gcp", "data:/data"},
			Env:            []string{"SPARK_USER=spark", "SPARK_CONF_DIR=/opt/spark/conf", "SPARK_CONF_DIR=/etc/spark/conf", "HADOOP_CONF_DIR=/etc/hadoop/conf", "GOOGLE_APPLICATION_CREDENTIALS=/mnt/gcp/key.json", "FROM_ENVVARS=2", "FROM_SECRET<-creds/password", "FROM_ENV=1"}, // the user's env last
			EnvFrom:        1,
			Containers:     []string{v1beta2.SparkDriverContainerName, "log-shipper"},
			InitContainers: []string{"setup"},
			Ports:          []string{"driver-rpc-port:7078", "extra:9999"},
			Limits:         map[string]string{"nvidia.com/gpu": "1", "memory": "2Gi"},
			NodeSelector:   map[string]string{"disk": "ssd"},
			Tolerations:    []string{"spark"},
			SchedulerName:  "my-scheduler",
			DNSPolicy:      corev1.DNSClusterFirst,
			HostAliases:    []string{"10.0.0.9=metastore"},
			DNSSearches:    []string{"example.com"},
			GracePeriod:    7, ShareProcessNamespace: true, RunAsUser: 185,
			PrivilegeEscalation: ptr(false), PreStop: true, Affinity: true,
		}
		if d := cmp.Diff(want, summarise(got, v1beta2.SparkDriverContainerName)); d != "" {
			t.Errorf("stored driver (-want +got):\n%s", d)
		}

		execs, err := executors.Create(ctx, c, got, 2, executors.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range execs {
			stored := &corev1.Pod{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(ex), stored); err != nil {
				t.Fatal(err)
			}
			s := summarise(stored, v1beta2.SparkExecutorContainerName)
			wantExec := summary{
				Owners:        []string{"Pod/" + got.Name, "SparkApplication/custom"}, // owned by the application too
				Volumes:       []string{"extra-vol", "prometheus-vol", "spark-configmap-volume", "hadoop-configmap-volume"},
				Mounts:        []string{"spark-configmap-volume:/etc/spark/conf", "hadoop-configmap-volume:/etc/hadoop/conf", "extra-vol:/etc/extra", "prometheus-vol:/etc/metrics/conf"},
				Containers:    []string{v1beta2.SparkExecutorContainerName},
				Ports:         []string{"blockmanager:7079", "jmx-exporter:8090"},
				NodeSelector:  map[string]string{"disk": "ssd"}, // copied from the driver by Spark
				Tolerations:   []string{"spark"},
				SchedulerName: "my-scheduler", // copied from the driver by Spark
				HostNetwork:   true, DNSPolicy: corev1.DNSClusterFirstWithHostNet,
				GracePeriod: 30,
			}
			sort.Strings(wantExec.Volumes)
			s.Env, s.Limits = nil, nil // Spark's own; checked below
			if d := cmp.Diff(wantExec, s); d != "" {
				t.Errorf("stored executor %s (-want +got):\n%s", stored.Name, d)
			}
			env := summarise(stored, v1beta2.SparkExecutorContainerName).Env
			for _, w := range []string{"SPARK_CONF_DIR=/etc/spark/conf", "HADOOP_CONF_DIR=/etc/hadoop/conf", "EXEC_ENV=x"} {
				if !contains(env, w) {
					t.Errorf("executor %s env %v lacks %s", stored.Name, env, w)
				}
			}
		}
	})

	t.Run("pods built by the native submitter get nothing twice", func(t *testing.T) {
		stored := &v1beta2.SparkApplication{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(app), stored); err != nil {
			t.Fatal(err)
		}
		// The native submitter applies the customisations it knows itself; what it leaves
		// to Spark (secrets, env from Spark properties) the webhook adds once.
		objs, err := native.Build(stored, submission.Attempt{SubmissionID: "s1", DriverPodName: "native-driver"},
			native.Options{Master: "k8s://https://127.0.0.1:6443", SparkUser: "spark"}, native.NewIDs(time.Now()))
		if err != nil {
			t.Fatal(err)
		}
		pod := objs.Pod
		sent := summarise(pod, v1beta2.SparkDriverContainerName)
		if err := c.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		got := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
			t.Fatal(err)
		}
		after := summarise(got, v1beta2.SparkDriverContainerName)
		if d := cmp.Diff(sent.Containers, after.Containers); d != "" {
			t.Errorf("containers changed (-sent +stored):\n%s", d)
		}
		if d := cmp.Diff(sent.Mounts, after.Mounts[:len(sent.Mounts)]); d != "" {
			t.Errorf("mounts changed (-sent +stored):\n%s", d)
		}
		// Env is the exception: Spark sets SPARK_CONF_DIR itself after the pod template's, so
		// the webhook appends the application's once more, last, where it takes effect.
		if d := cmp.Diff(sent.Env, after.Env[:len(sent.Env)]); d != "" {
			t.Errorf("env changed (-sent +stored):\n%s", d)
		}
		assertUnique(t, "added env", after.Env[len(sent.Env):])
		lastConfDir := ""
		for _, e := range after.Env {
			if strings.HasPrefix(e, "SPARK_CONF_DIR=") {
				lastConfDir = e
			}
		}
		if lastConfDir != "SPARK_CONF_DIR=/etc/spark/conf" && contains(sent.Env, "SPARK_CONF_DIR=/opt/spark/conf") {
			t.Errorf("the effective SPARK_CONF_DIR is not the application's: %s", lastConfDir)
		}
		assertUnique(t, "volumes", after.Volumes)
		assertUnique(t, "mounts", after.Mounts)
		assertUnique(t, "init containers", after.InitContainers)
		assertUnique(t, "containers", after.Containers)
		assertUnique(t, "owners", after.Owners)
	})

	t.Run("priority class", func(t *testing.T) {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "sparkop-webhook-test-" + e.token}, Value: 1000}
		if err := c.Create(ctx, pc); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), pc) })
		a := testApp(e.ns, "prio")
		a.Spec.Driver.PriorityClassName = ptr(pc.Name)
		if err := c.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		pod := bareDriver(a)
		if err := c.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		if pod.Spec.PriorityClassName != pc.Name || pod.Spec.Priority == nil || *pod.Spec.Priority != 1000 {
			t.Errorf("stored pod has priority class %q, priority %v; want %s, 1000", pod.Spec.PriorityClassName, pod.Spec.Priority, pc.Name)
		}
	})

	t.Run("duplicate mount path is refused", func(t *testing.T) {
		pod := bareDriver(app)
		pod.Name = "dup-driver"
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "mine", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "mine", MountPath: "/etc/spark/conf"})
		err := c.Create(ctx, pod)
		want := `cannot mount volume "spark-configmap-volume" at /etc/spark/conf: volume "mine" is already mounted there (duplicate mount path)`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want refusal containing %q", err, want)
		}
	})

	t.Run("other pods are not touched", func(t *testing.T) {
		pod := bareDriver(app)
		pod.Name = "unlabelled"
		delete(pod.Labels, v1beta2.LabelLaunchedByOperator)
		if err := c.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		if got := summarise(pod, v1beta2.SparkDriverContainerName); len(got.Owners) != 0 || len(got.Mounts) != 1 {
			t.Errorf("unlabelled pod was mutated: %+v", got)
		}
	})

	t.Run("validation", func(t *testing.T) {
		tests := []struct {
			name   string
			change func(a *v1beta2.SparkApplication)
			want   string
		}{
			{"name", func(a *v1beta2.SparkApplication) { a.Name = "x." + a.Name }, "metadata.name: Invalid value: \"x.invalid\": a DNS-1035 label"},
			{"template needs Spark 3", func(a *v1beta2.SparkApplication) {
				a.Spec.SparkVersion = "2.4.8"
				a.Spec.Driver.Template = &corev1.PodTemplateSpec{}
			}, "spec.driver.template: Forbidden: pod templates need Spark 3.0 or later"},
			{"node selector at both levels", func(a *v1beta2.SparkApplication) {
				a.Spec.NodeSelector = map[string]string{"a": "b"}
				a.Spec.Executor.NodeSelector = map[string]string{"a": "b"}
			}, "spec.executor.nodeSelector: Forbidden"},
			{"spark.master", func(a *v1beta2.SparkApplication) { a.Spec.SparkConf = map[string]string{"spark.master": "local"} }, "spec.sparkConf[spark.master]: Forbidden"},
			{"namespace", func(a *v1beta2.SparkApplication) {
				a.Spec.SparkConf = map[string]string{"spark.kubernetes.namespace": "elsewhere"}
			}, "spec.sparkConf[spark.kubernetes.namespace]: Forbidden"},
			{"image", func(a *v1beta2.SparkApplication) {
				a.Spec.SparkConf = map[string]string{"spark.kubernetes.executor.container.image": "x"}
			}, "spec.sparkConf[spark.kubernetes.executor.container.image]: Forbidden"},
			{"service account", func(a *v1beta2.SparkApplication) {
				a.Spec.SparkConf = map[string]string{"spark.kubernetes.authenticate.driver.serviceAccountName": "x"}
			}, "spec.sparkConf[spark.kubernetes.authenticate.driver.serviceAccountName]: Forbidden"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				a := testApp(e.ns, "invalid")
				tc.change(a)
				err := c.Create(ctx, a)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("got %v, want refusal containing %q", err, tc.want)
				}
			})
		}
		t.Run("update", func(t *testing.T) {
			a := testApp(e.ns, "updated")
			if err := c.Create(ctx, a); err != nil {
				t.Fatal(err)
			}
			a.Spec.SparkConf = map[string]string{"spark.master": "local"}
			if err := c.Update(ctx, a); err == nil || !strings.Contains(err.Error(), "spec.sparkConf[spark.master]") {
				t.Fatalf("update got %v, want refusal", err)
			}
		})
		t.Run("scheduled", func(t *testing.T) {
			ssa := &v1beta2.ScheduledSparkApplication{
				ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: e.ns},
				Spec:       v1beta2.ScheduledSparkApplicationSpec{Schedule: "61 * * * *", Template: testApp(e.ns, "x").Spec},
			}
			err := c.Create(ctx, ssa)
			if err == nil || !strings.Contains(err.Error(), "spec.schedule: Invalid value") {
				t.Fatalf("got %v, want refusal of spec.schedule", err)
			}
			ssa.Spec.Schedule = "@hourly"
			if err := c.Create(ctx, ssa); err != nil {
				t.Fatalf("valid ScheduledSparkApplication refused: %v", err)
			}
		})
	})

	t.Run("resource quota", func(t *testing.T) {
		// A namespace of its own: the pods above use the quota of the first one.
		ns := labelledNamespace(t, c, e.token)
		quota := &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: "small", Namespace: ns},
			Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse("3")}},
		}
		if err := c.Create(ctx, quota); err != nil {
			t.Fatal(err)
		}
		fits := testApp(ns, "fits") // 1 + 1 cores
		if err := c.Create(ctx, fits, client.DryRunAll); err != nil {
			t.Fatalf("application within the quota refused: %v", err)
		}
		big := testApp(ns, "big")
		big.Spec.Executor.Instances = ptr(int32(3)) // 1 + 3 cores
		err := c.Create(ctx, big)
		want := "the driver and executors need 4 requests.cpu, but ResourceQuota small has only"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want refusal containing %q", err, want)
		}
	})

	t.Run("latency metric", func(t *testing.T) {
		families, err := metrics.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		counts := map[string]uint64{}
		for _, f := range families {
			if f.GetName() != "spark_webhook_request_duration_seconds" {
				continue
			}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "webhook" {
						counts[l.GetValue()] += m.GetHistogram().GetSampleCount()
					}
				}
			}
		}
		for _, w := range []string{"pod-mutator", "sparkapplication-validator", "scheduledsparkapplication-validator"} {
			if counts[w] == 0 {
				t.Errorf("no spark_webhook_request_duration_seconds samples for webhook %q (have %v)", w, counts)
			}
		}
	})

	t.Run("restart reuses the certificates", func(t *testing.T) {
		key := client.ObjectKey{Namespace: e.opts.SecretNamespace, Name: e.opts.SecretName}
		before := &corev1.Secret{}
		if err := c.Get(ctx, key, before); err != nil {
			t.Fatal(err)
		}
		serial := e.servedCert(t)
		e.stop(t)
		e.start(t)
		after := &corev1.Secret{}
		if err := c.Get(ctx, key, after); err != nil {
			t.Fatal(err)
		}
		if after.ResourceVersion != before.ResourceVersion {
			t.Errorf("the Secret was rewritten on restart")
		}
		if got := e.servedCert(t); got != serial {
			t.Errorf("served certificate %s after restart, want %s", got, serial)
		}
	})
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func assertUnique(t *testing.T, what string, list []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, v := range list {
		if seen[v] {
			t.Errorf("%s: %q twice in %v", what, v, list)
		}
		seen[v] = true
	}
}
