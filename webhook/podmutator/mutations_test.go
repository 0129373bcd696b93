/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package podmutator

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkconf"
	"github.com/sparkop/spark-operator/sparkpod"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/submission/native"
	"github.com/sparkop/spark-operator/submission/sparksubmit"
)

func ptr[T any](v T) *T { return &v }

func basePod(role string) *corev1.Pod {
	name := v1beta2.SparkDriverContainerName
	if role == v1beta2.SparkRoleExecutor {
		name = v1beta2.SparkExecutorContainerName
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{
			v1beta2.SparkRoleLabel: role, v1beta2.LabelAppName: "app", v1beta2.LabelLaunchedByOperator: "true",
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "istio-proxy"}, // not the Spark container, though first
			{Name: name, Image: "spark"},
		}},
	}
}

func baseApp() *v1beta2.SparkApplication {
	return &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"}}
}

// TestMutations checks each mutation on a driver pod (or executor where the role matters): the
// wanted pod is the base pod changed by want.
func TestMutations(t *testing.T) {
	cmVol := func(vol, cm string) corev1.Volume {
		return corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}}
	}
	tests := []struct {
		name string
		role string
		app  func(a *v1beta2.SparkApplication, p *v1beta2.SparkPodSpec)
		pod  func(p *corev1.Pod) // changes the base pod before mutation
		want func(p *corev1.Pod, c *corev1.Container)
	}{{
		name: "owner reference on driver",
		app:  func(a *v1beta2.SparkApplication, _ *v1beta2.SparkPodSpec) { a.UID = "uid-1" },
		want: func(p *corev1.Pod, _ *corev1.Container) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication", Name: "app", UID: "uid-1",
				Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}
		},
	}, {
		name: "executors: the application as a plain owner",
		role: v1beta2.SparkRoleExecutor,
		app:  func(a *v1beta2.SparkApplication, _ *v1beta2.SparkPodSpec) { a.UID = "uid-1" },
		want: func(p *corev1.Pod, _ *corev1.Container) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication", Name: "app", UID: "uid-1"}}
		},
	}, {
		name: "spark config map",
		app:  func(a *v1beta2.SparkApplication, _ *v1beta2.SparkPodSpec) { a.Spec.SparkConfigMap = ptr("sc") },
		want: func(p *corev1.Pod, c *corev1.Container) {
			p.Spec.Volumes = []corev1.Volume{cmVol(sparkpod.SparkConfigMapVolume, "sc")}
			c.VolumeMounts = []corev1.VolumeMount{{Name: sparkpod.SparkConfigMapVolume, MountPath: "/etc/spark/conf"}}
			c.Env = []corev1.EnvVar{{Name: "SPARK_CONF_DIR", Value: "/etc/spark/conf"}}
		},
	}, {
		name: "hadoop config map",
		app:  func(a *v1beta2.SparkApplication, _ *v1beta2.SparkPodSpec) { a.Spec.HadoopConfigMap = ptr("hc") },
		want: func(p *corev1.Pod, c *corev1.Container) {
			p.Spec.Volumes = []corev1.Volume{cmVol(sparkpod.HadoopConfigMapVolume, "hc")}
			c.VolumeMounts = []corev1.VolumeMount{{Name: sparkpod.HadoopConfigMapVolume, MountPath: "/etc/hadoop/conf"}}
			c.Env = []corev1.EnvVar{{Name: "HADOOP_CONF_DIR", Value: "/etc/hadoop/conf"}}
		},
	}, {
		name: "config maps with paths",
		app: func(_ *v1beta2.SparkApplication, s *v1beta2.SparkPodSpec) {
			s.ConfigMaps = []v1beta2.NamePath{{Name: "a", Path: "/a"}, {Name: "b", Path: "/b"}}
		},
		want: func(p *corev1.Pod, c *corev1.Container) {
			p.Spec.Volumes = []corev1.Volume{cmVol("a-vol", "a"), cmVol("b-vol", "b")}
			c.VolumeMounts = []corev1.VolumeMount{{Name: "a-vol", MountPath: "/a"}, {Name: "b-vol", MountPath: "/b"}}
		},
	}, {
		name: "secrets with types",
		app: func(_ *v1beta2.SparkApplication, s *v1beta2.SparkPodSpec) {
			s.Secrets = []v1beta2.SecretInfo{
				{Name: "g", Path: "/g", Type: v1beta2.SecretTypeGeneric},
				{Name: "gcp", Path: "/gcp", Type: v1beta2.SecretTypeGCPServiceAccount},
				{Name: "tok", Path: "/tok", Type: v1beta2.SecretTypeHadoopDelegationToken},
			}
		},
		want: func(p *corev1.Pod, c *corev1.Container) {
			sec := func(n string) corev1.Volume {
				return corev1.Volume{Name: n + "-volume", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: n}}}
			}
			p.Spec.Volumes = []corev1.Volume{sec("g"), sec("gcp"), sec("tok")}
			c.VolumeMounts = []corev1.VolumeMount{{Name: "g-volume", MountPath: "/g"}, {Name: "gcp-volume", MountPath: "/gcp"}, {Name: "tok-volume", MountPath: "/tok"}}
			c.Env = []corev1.EnvVar{{Name: sparkconf.EnvGoogleCredentials, Value: "/gcp/key.json"}, {Name: sparkconf.EnvHadoopTokenLocation, Value: "/tok/hadoop.token"}}
		},
	}, {
		name: "volumes mounted by container and sidecar",
		app: func(a *v1beta2.SparkApplication, s *v1beta2.SparkPodSpec) {
			a.Spec.Volumes = []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "side", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "unused", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			}
			s.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
			s.Sidecars = []corev1.Container{{Name: "s", VolumeMounts: []corev1.VolumeMount{{Name: "side", MountPath: "/x"}}}}
		},
		want: func(p *corev1.Pod, c *corev1.Container) {
			c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
			p.Spec.Volumes = []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "side", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			}
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "s", VolumeMounts: []corev1.VolumeMount{{Name: "side", MountPath: "/x"}}})
		},
	}, {
		name: "env, envFrom, envVars, envSecretKeyRefs: the user's env last",
		app: func(_ *v1beta2.SparkApplication, s *v1beta2.SparkPodSpec) {
			s.Env = []corev1.EnvVar{{Name: "A", Value: "1"}}
			s.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}}
			s.EnvVars = map[string]string{"C": "3", "B": "2"}
			s.EnvSecretKeyRefs = map[string]v1beta2.NameKey{"D": {Name: "sec", Key: "k"}}
		},
		pod: func(p *corev1.Pod) { p.Spec.Containers[1].Env = []corev1.EnvVar{{Name: "B", Value: "2"}} },
		want: func(_ *corev1.Pod, c *corev1.Container) {
			c.Env = []corev1.EnvVar{{Name: "B", Value: "2"}, {Name: "C", Value: "3"},
				{Name: "D", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}, Key: "k"}}},
				{Name: "A", Value: "1"}}
			c.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}}
		},
	}, {
		name: "gpu and memory limit",
		role: v1beta2.SparkRoleExecutor,
		app: func(_ *v1beta2.SparkApplication, s *v1beta2.SparkPodSpec) {
			s.GPU = &v1beta2.GPUSpec{Name: "nvidia.com/gpu", Quantity: 2}
			s.MemoryLimit = ptr("3Gi")
		},
		want: func(_ *corev1.Pod, c *corev1.Container) {
			c.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("3Gi")}
		},
	}, {
		name: "ports and prometheus",
		app: func(a *v1beta2.SparkApplication, s *v1beta2.SparkPodSpec) {
			s.Ports = []v1beta2.Port{{Name: "extra", ContainerPort: 9000, Protocol: corev1.ProtocolTCP}}
			a.Spec.Monitoring = &v1beta2.MonitoringSpec{ExposeDriverMetrics: true, Prometheus: &v1beta2.PrometheusSpec{JmxExporterJar: "/j.jar", Configuration: ptr("rules: []")}}
		},
		want: func(p *corev1.Pod, c *corev1.Container) {
			c.Ports = []corev1.ContainerPort{{Name: "extra", ContainerPort: 9000, Protocol: corev1.ProtocolTCP}, {Name: "jmx-exporter", ContainerPort: 8090, Protocol: corev1.ProtocolTCP}}
			c.VolumeMounts = []corev1.VolumeMount{{Name: sparkpod.PrometheusConfigVolume, MountPath: sparkpod.PrometheusConfigPath}}
			v := cmVol(sparkpod.PrometheusConfigVolume, "app-prom-conf")
			v.ConfigMap.Optional = ptr(true)
			p.Spec.Volumes = []corev1.Volume{v}
		},
	}, {
		name: "prometheus off for executors",
		role: v1beta2.SparkRoleExecutor,
		app: func(a *v1beta2.SparkApplication, _ *v1beta2.SparkPodSpec) {
			a.Spec.Monitoring = &v1beta2.MonitoringSpec{ExposeDriverMetrics: true, Prometheus: &v1beta2.PrometheusSpec{JmxExporterJar: "/j.jar"}}
		},
		want: func(*corev1.Pod, *corev1.Container) {},
	}, {
		name: "a batchScheduler does not name the pods' scheduler: its decision does (sparkpod.Scheduling)",
		app: func(a *v1beta2.SparkApplication, s *v1beta2.SparkPodSpec) {
			a.Spec.BatchScheduler = ptr("volcano")
			s.SchedulerName = ptr("mine")
		},
		want: func(p *corev1.Pod, _ *corev1.Container) { p.Spec.SchedulerName = "mine" },
	}, {
		name: "schedulerName and priority class",
		app: func(_ *v1beta2.SparkApplication, s *v1beta2.SparkPodSpec) {
			s.SchedulerName = ptr("mine")
			s.PriorityClassName = ptr("high")
		},
		want: func(p *corev1.Pod, _ *corev1.Container) {
			p.Spec.SchedulerName, p.Spec.PriorityClassName = "mine", "high"
		},
	}, {
		name: "node selectors merged",
		app: func(a *v1beta2.SparkApplication, s *v1beta2.SparkPodSpec) {
			a.Spec.NodeSelector = map[string]string{"a": "app", "b": "app"}
			s.NodeSelector = map[string]string{"b": "role"}
		},
		pod: func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"x": "pod"} },
		want: func(p *corev1.Pod, _ *corev1.Container) {
			p.Spec.NodeSelector = map[string]string{"x": "pod", "a": "app", "b": "role"}
		},
	}, {
		name: "pod-level settings",
		app: func(_ *v1beta2.SparkApplication, s *v1beta2.SparkPodSpec) {
			s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
			s.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
			s.PodSecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr(int64(185))}
			s.HostNetwork = ptr(true)
			s.HostAliases = []corev1.HostAlias{{IP: "1.2.3.4", Hostnames: []string{"h"}}}
			s.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"8.8.8.8"}}
			s.TerminationGracePeriodSeconds = ptr(int64(5))
			s.ShareProcessNamespace = ptr(true)
		},
		want: func(p *corev1.Pod, _ *corev1.Container) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
			p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
			p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr(int64(185))}
			p.Spec.HostNetwork, p.Spec.DNSPolicy = true, corev1.DNSClusterFirstWithHostNet
			p.Spec.HostAliases = []corev1.HostAlias{{IP: "1.2.3.4", Hostnames: []string{"h"}}}
			p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"8.8.8.8"}}
			p.Spec.TerminationGracePeriodSeconds = ptr(int64(5))
			p.Spec.ShareProcessNamespace = ptr(true)
		},
	}, {
		name: "container-level settings, sidecars, init containers",
		role: v1beta2.SparkRoleExecutor,
		app: func(_ *v1beta2.SparkApplication, s *v1beta2.SparkPodSpec) {
			s.SecurityContext = &corev1.SecurityContext{Privileged: ptr(false)}
			s.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"stop"}}}}
			s.Sidecars = []corev1.Container{{Name: "side"}}
			s.InitContainers = []corev1.Container{{Name: "init"}}
		},
		want: func(p *corev1.Pod, c *corev1.Container) {
			c.SecurityContext = &corev1.SecurityContext{Privileged: ptr(false)}
			c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"stop"}}}}
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side"})
			p.Spec.InitContainers = []corev1.Container{{Name: "init"}}
		},
	}, {
		name: "legacy executor container name",
		role: v1beta2.SparkRoleExecutor,
		app: func(_ *v1beta2.SparkApplication, s *v1beta2.SparkPodSpec) {
			s.Env = []corev1.EnvVar{{Name: "A", Value: "1"}}
		},
		pod:  func(p *corev1.Pod) { p.Spec.Containers[1].Name = sparkpod.LegacyExecutorContainerName },
		want: func(_ *corev1.Pod, c *corev1.Container) { c.Env = []corev1.EnvVar{{Name: "A", Value: "1"}} },
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			role := tc.role
			if role == "" {
				role = v1beta2.SparkRoleDriver
			}
			app := baseApp()
			spec := &app.Spec.Driver.SparkPodSpec
			if role == v1beta2.SparkRoleExecutor {
				spec = &app.Spec.Executor.SparkPodSpec
			}
			tc.app(app, spec)
			pod := basePod(role)
			if tc.pod != nil {
				tc.pod(pod)
			}
			want := pod.DeepCopy()
			tc.want(want, &want.Spec.Containers[1])
			if role == v1beta2.SparkRoleDriver && want.Spec.Containers[1].TerminationMessagePolicy == "" {
				// Every driver: the kubelet keeps the end of a failed driver's log.
				want.Spec.Containers[1].TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
			}
			if err := Mutate(pod, app); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, pod); d != "" {
				t.Errorf("pod (-want +got):\n%s", d)
			}
			// Idempotent: a second pass changes nothing.
			again := pod.DeepCopy()
			if err := Mutate(again, app); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(pod, again); d != "" {
				t.Errorf("second mutation changed the pod (-first +second):\n%s", d)
			}
		})
	}
}

func TestRejections(t *testing.T) {
	tests := []struct {
		name string
		app  func(a *v1beta2.SparkApplication, s *v1beta2.SparkPodSpec)
		want string
	}{{
		name: "duplicate mount path",
		app: func(a *v1beta2.SparkApplication, s *v1beta2.SparkPodSpec) {
			a.Spec.SparkConfigMap = ptr("sc")
			s.ConfigMaps = []v1beta2.NamePath{{Name: "other", Path: "/etc/spark/conf/"}}
		},
		want: `cannot mount volume "other-vol" at /etc/spark/conf/: volume "spark-configmap-volume" is already mounted there (duplicate mount path)`,
	}, {
		name: "invalid gpu name",
		app: func(_ *v1beta2.SparkApplication, s *v1beta2.SparkPodSpec) {
			s.GPU = &v1beta2.GPUSpec{Name: "gpu", Quantity: 1}
		},
		want: "spec.driver.gpu.name",
	}, {
		name: "reserved gpu domain",
		app: func(_ *v1beta2.SparkApplication, s *v1beta2.SparkPodSpec) {
			s.GPU = &v1beta2.GPUSpec{Name: "kubernetes.io/gpu", Quantity: 1}
		},
		want: "reserved",
	}, {
		name: "undeclared volume",
		app: func(_ *v1beta2.SparkApplication, s *v1beta2.SparkPodSpec) {
			s.VolumeMounts = []corev1.VolumeMount{{Name: "nope", MountPath: "/n"}}
		},
		want: `volume "nope" is mounted but not declared in spec.volumes`,
	}, {
		name: "bad memory limit",
		app:  func(_ *v1beta2.SparkApplication, s *v1beta2.SparkPodSpec) { s.MemoryLimit = ptr("lots") },
		want: "spec.driver.memoryLimit",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app := baseApp()
			tc.app(app, &app.Spec.Driver.SparkPodSpec)
			err := Mutate(basePod(v1beta2.SparkRoleDriver), app)
			var rej *RejectError
			if !errors.As(err, &rej) || !strings.Contains(rej.Message, tc.want) {
				t.Fatalf("got %v, want a rejection containing %q", err, tc.want)
			}
		})
	}
}

// customisedApp sets every customisation the submitters apply themselves.
func customisedApp() *v1beta2.SparkApplication {
	app := baseApp()
	app.UID = "uid-1"
	app.Spec.Type = v1beta2.SparkApplicationTypeScala
	app.Spec.SparkVersion = "4.0.0"
	app.Spec.MainClass = ptr("Main")
	app.Spec.MainApplicationFile = "local:///app.jar"
	app.Spec.Image = ptr("spark:4")
	app.Spec.SparkConfigMap = ptr("sc")
	app.Spec.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "x"}}}}}
	for _, s := range []*v1beta2.SparkPodSpec{&app.Spec.Driver.SparkPodSpec, &app.Spec.Executor.SparkPodSpec} {
		s.Env = []corev1.EnvVar{{Name: "A", Value: "1"}}
		s.ConfigMaps = []v1beta2.NamePath{{Name: "a", Path: "/a"}}
		s.VolumeMounts = []corev1.VolumeMount{{Name: "cfg", MountPath: "/cfg"}}
		s.Sidecars = []corev1.Container{{Name: "side", Image: "busybox"}}
		s.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
		s.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
		s.HostAliases = []corev1.HostAlias{{IP: "1.2.3.4", Hostnames: []string{"h"}}}
		s.Ports = []v1beta2.Port{{Name: "extra", ContainerPort: 9000, Protocol: corev1.ProtocolTCP}}
		s.GPU = &v1beta2.GPUSpec{Name: "nvidia.com/gpu", Quantity: 1}
	}
	return app
}

// TestSubmitterPodsUnchanged checks that pods the submitters built, which carry the
// customisations already, get nothing added twice.
func TestSubmitterPodsUnchanged(t *testing.T) {
	app := customisedApp()
	objs, err := native.Build(app, submission.Attempt{SubmissionID: "s", DriverPodName: "app-driver"},
		native.Options{Master: "k8s://https://x", SparkUser: "spark"}, native.NewIDs(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	driver, executor, err := sparksubmit.PodTemplates(app, sparkpod.RoleScheduling{})
	if err != nil {
		t.Fatal(err)
	}
	executor.Labels = map[string]string{v1beta2.SparkRoleLabel: v1beta2.SparkRoleExecutor}
	driver.Labels = map[string]string{v1beta2.SparkRoleLabel: v1beta2.SparkRoleDriver}
	for name, pod := range map[string]*corev1.Pod{"native driver": objs.Pod, "spark-submit driver": driver, "spark-submit executor": executor} {
		t.Run(name, func(t *testing.T) {
			// The one thing a submitter cannot do is have the application's Spark ConfigMap
			// win over the SPARK_CONF_DIR Spark itself sets later in the container's env.
			want := pod.DeepCopy()
			if ctr := sparkContainerOf(want); app.Spec.SparkConfigMap != nil && lastEnv(ctr, "SPARK_CONF_DIR") != sparkConfDir {
				ctr.Env = append(ctr.Env, corev1.EnvVar{Name: "SPARK_CONF_DIR", Value: sparkConfDir})
			}
			got := pod.DeepCopy()
			for range 2 {
				if err := Mutate(got, app); err != nil {
					t.Fatal(err)
				}
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("mutation changed a customised pod beyond SPARK_CONF_DIR (-want +got):\n%s", d)
			}
		})
	}
}

const sparkConfDir = "/etc/spark/conf"

func sparkContainerOf(pod *corev1.Pod) *corev1.Container {
	for i := range pod.Spec.Containers {
		switch pod.Spec.Containers[i].Name {
		case v1beta2.SparkDriverContainerName, v1beta2.SparkExecutorContainerName, "executor":
			return &pod.Spec.Containers[i]
		}
	}
	return &pod.Spec.Containers[0]
}

func lastEnv(c *corev1.Container, name string) string {
	value := ""
	for _, e := range c.Env {
		if e.Name == name {
			value = e.Value
		}
	}
	return value
}
