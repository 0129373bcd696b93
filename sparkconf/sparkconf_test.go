/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkconf

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

var testAttempt = Options{SubmissionID: "sub-1", DriverPodName: "pi-driver"}

func baseApp() *v1beta2.SparkApplication {
	app := &v1beta2.SparkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns"},
		Spec: v1beta2.SparkApplicationSpec{
			Type:                v1beta2.SparkApplicationTypeScala,
			MainClass:           ptr.To("org.apache.spark.examples.SparkPi"),
			MainApplicationFile: "local:///app.jar",
			Arguments:           []string{"10"},
			Deps:                v1beta2.Dependencies{Jars: []string{"a.jar", "b.jar"}},
		},
	}
	v1beta2.SetSparkApplicationDefaults(app)
	return app
}

func TestBuildCommandLineValues(t *testing.T) {
	app := baseApp()
	app.Spec.ProxyUser = ptr.To("bob")
	got, err := Build(app, testAttempt)
	if err != nil {
		t.Fatal(err)
	}
	got.Conf = nil
	want := &Submit{
		DeployMode:          "cluster",
		MainClass:           "org.apache.spark.examples.SparkPi",
		Name:                "pi",
		ProxyUser:           "bob",
		Jars:                []string{"a.jar", "b.jar"},
		MainApplicationFile: "local:///app.jar",
		Arguments:           []string{"10"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Build (-want +got):\n%s", diff)
	}
}

func TestBuildMap(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*v1beta2.SparkApplication)
		opts   Options
		want   map[string]string // a subset of Map()
	}{{
		name: "operator-owned keys win over sparkConf",
		modify: func(a *v1beta2.SparkApplication) {
			a.Spec.SparkConf = map[string]string{KeyNamespace: "elsewhere", KeyDriverTemplate: "/x", "spark.foo": "bar"}
		},
		want: map[string]string{KeyNamespace: "ns", KeyDriverTemplate: "", "spark.foo": "bar"},
	}, {
		name: "spec fields win over sparkConf, hadoopConf prefixed",
		modify: func(a *v1beta2.SparkApplication) {
			a.Spec.SparkConf = map[string]string{"spark.driver.memory": "8g"}
			a.Spec.HadoopConf = map[string]string{"fs.s3a.impl": "S3"}
			a.Spec.Driver.Memory = ptr.To("2g")
		},
		want: map[string]string{"spark.driver.memory": "2g", "spark.hadoop.fs.s3a.impl": "S3"},
	}, {
		// A pod so labelled skips the pod-mutating webhook: only the native submitter sets it.
		name: "the customised label is the operator's",
		modify: func(a *v1beta2.SparkApplication) {
			a.Labels = map[string]string{v1beta2.LabelCustomised: "true", "team": "a"}
			a.Spec.Executor.Labels = map[string]string{v1beta2.LabelCustomised: "true"}
			a.Spec.SparkConf = map[string]string{"spark.kubernetes.driver.label." + v1beta2.LabelCustomised: "true"}
		},
		want: map[string]string{
			"spark.kubernetes.driver.label." + v1beta2.LabelCustomised:   "",
			"spark.kubernetes.executor.label." + v1beta2.LabelCustomised: "",
			"spark.kubernetes.driver.label.team":                         "a",
		},
	}, {
		name: "templates",
		opts: Options{DriverPodTemplateFile: "/t/d.yaml"},
		want: map[string]string{
			KeyDriverTemplate:    "/t/d.yaml",
			KeyDriverTemplateCtr: v1beta2.SparkDriverContainerName,
			KeyExecutorTemplate:  "",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := baseApp()
			if tt.modify != nil {
				tt.modify(app)
			}
			opts := tt.opts
			opts.SubmissionID, opts.DriverPodName = testAttempt.SubmissionID, testAttempt.DriverPodName
			s, err := Build(app, opts)
			if err != nil {
				t.Fatal(err)
			}
			m := s.Map()
			got := map[string]string{}
			for k := range tt.want {
				got[k] = m[k]
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Map (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfVolumesAndMetricsPort(t *testing.T) {
	app := baseApp()
	app.Spec.Volumes = []corev1.Volume{
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "shared", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
	}
	app.Spec.Executor.VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/s"}, {Name: "shared", MountPath: "/sh"}, {Name: "cm", MountPath: "/c"}}
	app.Spec.Executor.Sidecars = []corev1.Container{{Name: "side", VolumeMounts: []corev1.VolumeMount{{Name: "shared", MountPath: "/sh"}}}}
	app.Spec.Monitoring = &v1beta2.MonitoringSpec{ExposeExecutorMetrics: true, Prometheus: &v1beta2.PrometheusSpec{JmxExporterJar: "/j.jar"}}

	tests := []struct {
		role     Role
		wantVols map[string]bool
		wantPort *corev1.ContainerPort
	}{
		{role: Driver, wantVols: map[string]bool{}},
		{role: Executor, wantVols: map[string]bool{"scratch": true}, wantPort: &corev1.ContainerPort{Name: "jmx-exporter", ContainerPort: 8090, Protocol: corev1.ProtocolTCP}},
	}
	for _, tt := range tests {
		t.Run(string(tt.role), func(t *testing.T) {
			vols, err := ConfVolumes(app, tt.role)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantVols, vols); diff != "" {
				t.Errorf("ConfVolumes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantPort, MetricsPort(app, tt.role)); diff != "" {
				t.Errorf("MetricsPort (-want +got):\n%s", diff)
			}
		})
	}
}

// The scheduler of each role's pods: the batch scheduler's choice, else the spec's field, else
// the user's properties (the role's key over the global one, as Spark reads them).
func TestSchedulerNamePrecedence(t *testing.T) {
	const (
		drv  = "spark.kubernetes.driver.scheduler.name"
		exe  = "spark.kubernetes.executor.scheduler.name"
		glob = "spark.kubernetes.scheduler.name"
	)
	tests := []struct {
		name      string
		sparkConf map[string]string
		spec      [2]string // driver, executor schedulerName
		batch     [2]string
		want      map[string]string // the three keys as Spark reads them; absent = ""
	}{
		{name: "none", want: map[string]string{}},
		{name: "properties only", sparkConf: map[string]string{glob: "g", drv: "d"},
			want: map[string]string{glob: "g", drv: "d"}},
		{name: "spec over properties", sparkConf: map[string]string{glob: "g", drv: "d", exe: "e"}, spec: [2]string{"sd", "se"},
			want: map[string]string{glob: "g", drv: "sd", exe: "se"}},
		{name: "spec over the global key", sparkConf: map[string]string{glob: "g"}, spec: [2]string{"", "se"},
			want: map[string]string{glob: "g", exe: "se"}},
		{name: "batch scheduler over spec and properties", sparkConf: map[string]string{drv: "d"}, spec: [2]string{"sd", "se"},
			batch: [2]string{"gang", "gang"}, want: map[string]string{drv: "gang", exe: "gang"}},
		{name: "batch scheduler for one role", spec: [2]string{"sd", "se"}, batch: [2]string{"", "gang"},
			want: map[string]string{drv: "sd", exe: "gang"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := baseApp()
			app.Spec.SparkConf = tt.sparkConf
			if tt.spec[0] != "" {
				app.Spec.Driver.SchedulerName = ptr.To(tt.spec[0])
			}
			if tt.spec[1] != "" {
				app.Spec.Executor.SchedulerName = ptr.To(tt.spec[1])
			}
			opts := testAttempt
			opts.Decided = [2]Decided{{SchedulerName: tt.batch[0]}, {SchedulerName: tt.batch[1]}}
			s, err := Build(app, opts)
			if err != nil {
				t.Fatal(err)
			}
			m, got := s.Map(), map[string]string{}
			for _, k := range []string{drv, exe, glob} {
				if v, ok := m[k]; ok {
					got[k] = v
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scheduler properties (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNodeSelectorPrecedence: a batch scheduler's node selector entries are passed after the
// spec's and the user's, so Spark sets them over both (the precedence rule).
func TestNodeSelectorPrecedence(t *testing.T) {
	app := baseApp()
	app.Spec.SparkConf = map[string]string{"spark.kubernetes.executor.node.selector.zone": "user"}
	app.Spec.NodeSelector = map[string]string{"zone": "spec", "disk": "ssd"}
	opts := testAttempt
	opts.Decided = [2]Decided{{NodeSelector: map[string]string{"pool": "gang"}}, {NodeSelector: map[string]string{"zone": "planned"}}}
	s, err := Build(app, opts)
	if err != nil {
		t.Fatal(err)
	}
	m := s.Map()
	want := map[string]string{
		"spark.kubernetes.node.selector.zone":          "spec",
		"spark.kubernetes.node.selector.disk":          "ssd",
		"spark.kubernetes.driver.node.selector.pool":   "gang",
		"spark.kubernetes.executor.node.selector.zone": "planned",
	}
	got := map[string]string{}
	for k := range want {
		got[k] = m[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("node selector properties (-want +got):\n%s", diff)
	}
}
