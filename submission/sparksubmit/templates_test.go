/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparksubmit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
)

func TestPodTemplates(t *testing.T) {
	app := baseApp()
	app.Spec.Volumes = []corev1.Volume{
		{Name: "shared", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	app.Spec.SparkConfigMap = ptr("spark-conf")
	app.Spec.Driver.Template = &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"from": "template"}},
		Spec: corev1.PodSpec{
			Containers:  []corev1.Container{{Name: "spark-kubernetes-driver", WorkingDir: "/work"}},
			Tolerations: []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists}},
		},
	}
	d := &app.Spec.Driver
	d.VolumeMounts = []corev1.VolumeMount{{Name: "shared", MountPath: "/shared"}, {Name: "secret", MountPath: "/secret"}, {Name: "scratch", MountPath: "/scratch"}}
	d.Sidecars = []corev1.Container{{Name: "log", Image: "busybox", VolumeMounts: []corev1.VolumeMount{{Name: "shared", MountPath: "/logs"}}}}
	d.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
	d.GPU = &v1beta2.GPUSpec{Name: "nvidia.com/gpu", Quantity: 1}
	d.Tolerations = []corev1.Toleration{{Key: "b", Operator: corev1.TolerationOpExists}}
	d.ConfigMaps = []v1beta2.NamePath{{Name: "extra", Path: "/etc/extra"}}
	d.Env = []corev1.EnvVar{{Name: "FROM_SECRET", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}}}}
	d.HostNetwork = ptr(true)
	d.PriorityClassName = ptr("high")
	d.SchedulerName = ptr("gang")
	d.TerminationGracePeriodSeconds = ptr(int64(5))
	d.PodSecurityContext = &corev1.PodSecurityContext{FSGroup: ptr(int64(185))}
	d.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr(int64(185))}
	d.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}}
	d.Ports = []v1beta2.Port{{Name: "extra", ContainerPort: 9000, Protocol: corev1.ProtocolTCP}}
	app.Spec.Executor.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
	before := app.DeepCopy()

	driver, executor, err := PodTemplates(app, sparkpod.RoleScheduling{})
	if err != nil {
		t.Fatal(err)
	}
	wantDriver := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Labels: map[string]string{"from": "template"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication", Name: "pi", UID: "uid-1", Controller: ptr(true), BlockOwnerDeletion: ptr(true),
			}},
		},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
			Containers: []corev1.Container{{
				Name:       "spark-kubernetes-driver",
				WorkingDir: "/work",
				Env: []corev1.EnvVar{
					{Name: "SPARK_CONF_DIR", Value: "/etc/spark/conf"},
					{Name: "FROM_SECRET", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}}},
				},
				Ports:           []corev1.ContainerPort{{Name: "extra", ContainerPort: 9000, Protocol: corev1.ProtocolTCP}},
				SecurityContext: &corev1.SecurityContext{RunAsUser: ptr(int64(185))},
				// The kubelet keeps the end of a failed driver's log as its termination message.
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				Resources:                corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}},
				// "scratch" is an emptyDir only the main container mounts: Spark declares it.
				VolumeMounts: []corev1.VolumeMount{
					{Name: "spark-configmap-volume", MountPath: "/etc/spark/conf"},
					{Name: "extra-vol", MountPath: "/etc/extra"},
					{Name: "shared", MountPath: "/shared"},
					{Name: "secret", MountPath: "/secret"},
				},
			}, {Name: "log", Image: "busybox", VolumeMounts: []corev1.VolumeMount{{Name: "shared", MountPath: "/logs"}}}},
			Volumes: []corev1.Volume{
				{Name: "spark-configmap-volume", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "spark-conf"}}}},
				{Name: "extra-vol", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "extra"}}}},
				{Name: "shared", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
			},
			Tolerations:                   []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists}, {Key: "b", Operator: corev1.TolerationOpExists}},
			HostNetwork:                   true,
			DNSPolicy:                     corev1.DNSClusterFirstWithHostNet, // to resolve cluster names
			PriorityClassName:             "high",
			SchedulerName:                 "gang",
			TerminationGracePeriodSeconds: ptr(int64(5)),
			SecurityContext:               &corev1.PodSecurityContext{FSGroup: ptr(int64(185))},
			DNSConfig:                     &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}},
		},
	}
	if diff := cmp.Diff(wantDriver, driver); diff != "" {
		t.Errorf("driver template (-want +got):\n%s", diff)
	}
	wantExecutor := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		// Executors are owned by the application too, not only by their driver.
		ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication", Name: "pi", UID: "uid-1",
		}}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:         "spark-kubernetes-executor",
				Env:          []corev1.EnvVar{{Name: "SPARK_CONF_DIR", Value: "/etc/spark/conf"}},
				VolumeMounts: []corev1.VolumeMount{{Name: "spark-configmap-volume", MountPath: "/etc/spark/conf"}},
			}},
			Volumes: []corev1.Volume{
				{Name: "spark-configmap-volume", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "spark-conf"}}}},
			},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}},
		},
	}
	if diff := cmp.Diff(wantExecutor, executor); diff != "" {
		t.Errorf("executor template (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, app); diff != "" {
		t.Errorf("PodTemplates modified the application (-before +after):\n%s", diff)
	}
	// Sharing a volume with a sidecar moves it out of the properties.
	conf := confOf(mustArgs(t, app))
	if _, ok := conf["spark.kubernetes.driver.volumes.emptyDir.shared.mount.path"]; ok {
		t.Error("volume shared with a sidecar is declared through properties as well as in the template")
	}
	if got := conf["spark.kubernetes.driver.volumes.emptyDir.scratch.mount.path"]; got != "/scratch" {
		t.Errorf("scratch mount path property = %q, want /scratch", got)
	}
}

func mustArgs(t *testing.T, app *v1beta2.SparkApplication) []string {
	t.Helper()
	args, err := BuildArgs(app, testAttempt, Options{MasterURL: "https://api"})
	if err != nil {
		t.Fatal(err)
	}
	return args
}

func TestPodTemplatesErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*v1beta2.SparkApplication)
		want   string
	}{
		{name: "no UID", mutate: func(a *v1beta2.SparkApplication) { a.UID = "" }, want: "has no UID"},
		{name: "GPU without a name", mutate: func(a *v1beta2.SparkApplication) { a.Spec.Executor.GPU = &v1beta2.GPUSpec{Quantity: 1} }, want: "spec.executor.gpu.name"},
		{name: "sidecar mounts an undeclared volume", mutate: func(a *v1beta2.SparkApplication) {
			a.Spec.Driver.Sidecars = []corev1.Container{{Name: "s", VolumeMounts: []corev1.VolumeMount{{Name: "ghost", MountPath: "/g"}}}}
		}, want: `volume "ghost"`},
		{name: "configMap without a path", mutate: func(a *v1beta2.SparkApplication) { a.Spec.Driver.ConfigMaps = []v1beta2.NamePath{{Name: "c"}} }, want: "configMaps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := baseApp()
			tt.mutate(app)
			if _, _, err := PodTemplates(app, sparkpod.RoleScheduling{}); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("PodTemplates error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
