/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkconf"
	"github.com/sparkop/spark-operator/sparkpod"
	"github.com/sparkop/spark-operator/webhook/podmutator"
)

func newConnect(mods ...func(*v1alpha1.SparkConnect)) *v1alpha1.SparkConnect {
	c := &v1alpha1.SparkConnect{
		ObjectMeta: metav1.ObjectMeta{Name: "sc", Namespace: "ns", UID: "uid-1"},
		Spec: v1alpha1.SparkConnectSpec{
			SparkVersion: "4.0.4",
			Image:        ptr("spark:4"),
		},
	}
	for _, m := range mods {
		m(c)
	}
	return c
}

func confMap(conf []sparkconf.Property) map[string]string {
	m := map[string]string{}
	for _, p := range conf {
		m[p.Key] = p.Value
	}
	return m
}

func TestServerConf(t *testing.T) {
	tests := []struct {
		name string
		conn *v1alpha1.SparkConnect
		want map[string]string // a subset of the result
		not  []string          // keys that must be absent
	}{{
		name: "minimal",
		conn: newConnect(),
		want: map[string]string{
			"spark.master":                                                      "k8s://https://kubernetes.default.svc",
			"spark.submit.deployMode":                                           "client",
			"spark.kubernetes.namespace":                                        "ns",
			"spark.kubernetes.container.image":                                  "spark:4",
			"spark.kubernetes.executor.container.image":                         "spark:4",
			"spark.kubernetes.driver.pod.name":                                  "sc-server",
			"spark.kubernetes.executor.podNamePrefix":                           "sc",
			"spark.driver.port":                                                 "7078",
			"spark.driver.blockManager.port":                                    "7079",
			"spark.driver.bindAddress":                                          "0.0.0.0",
			"spark.kubernetes.executor.label.sparkoperator.k8s.io/connect-name": "sc",
			"spark.kubernetes.executor.label.sparkoperator.k8s.io/launched-by-spark-operator": "true",
		},
		not: []string{"spark.executor.instances", "spark.dynamicAllocation.enabled", "spark.kubernetes.executor.podTemplateFile"},
	}, {
		name: "sizes, user conf, hadoop conf and labels",
		conn: newConnect(func(c *v1alpha1.SparkConnect) {
			c.Labels = map[string]string{"team": "a"}
			c.Spec.SparkConf = map[string]string{"spark.sql.x": "1", "spark.kubernetes.driver.pod.name": "mine"}
			c.Spec.HadoopConf = map[string]string{"fs.a": "b", "spark.hadoop.fs.c": "d"}
			c.Spec.Server.Cores, c.Spec.Server.Memory = ptr(int32(2)), ptr("2g")
			c.Spec.Executor.Instances, c.Spec.Executor.Cores, c.Spec.Executor.Memory = ptr(int32(3)), ptr(int32(4)), ptr("512m")
		}),
		want: map[string]string{
			"spark.sql.x": "1", "spark.hadoop.fs.a": "b", "spark.hadoop.fs.c": "d",
			"spark.kubernetes.driver.pod.name": "sc-server",
			"spark.driver.cores":               "2", "spark.driver.memory": "2g",
			"spark.executor.instances": "3", "spark.executor.cores": "4", "spark.executor.memory": "512m",
			"spark.kubernetes.executor.label.team": "a",
		},
	}, {
		name: "executor template: its image and the template file",
		conn: newConnect(func(c *v1alpha1.SparkConnect) {
			c.Spec.Executor.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "sidecar", Image: "other"}, {Name: v1beta2.SparkExecutorContainerName, Image: "exec:1"},
			}}}
		}),
		want: map[string]string{
			"spark.kubernetes.executor.container.image":          "exec:1",
			"spark.kubernetes.executor.podTemplateFile":          "/tmp/spark/executor-pod-template.yaml",
			"spark.kubernetes.executor.podTemplateContainerName": "spark-kubernetes-executor",
		},
	}, {
		name: "dynamic allocation",
		conn: newConnect(func(c *v1alpha1.SparkConnect) {
			c.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, MinExecutors: ptr(int32(1)), MaxExecutors: ptr(int32(5))}
		}),
		want: map[string]string{
			"spark.dynamicAllocation.enabled": "true", "spark.dynamicAllocation.minExecutors": "1",
			"spark.dynamicAllocation.maxExecutors": "5", "spark.dynamicAllocation.shuffleTracking.enabled": "true",
		},
	}, {
		name: "dynamic allocation: initial executors, shuffle tracking off, its timeout",
		conn: newConnect(func(c *v1alpha1.SparkConnect) {
			c.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, InitialExecutors: ptr(int32(2)),
				ShuffleTrackingEnabled: ptr(false), ShuffleTrackingTimeout: ptr(int64(60))}
		}),
		want: map[string]string{
			"spark.dynamicAllocation.enabled": "true", "spark.dynamicAllocation.initialExecutors": "2",
			"spark.dynamicAllocation.shuffleTracking.enabled": "false", "spark.dynamicAllocation.shuffleTracking.timeout": "60",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, err := sparkpod.ConnectServerConf(tt.conn, sparkpod.Scheduling{})
			if err != nil {
				t.Fatal(err)
			}
			got := confMap(conf)
			sub := map[string]string{}
			for k := range tt.want {
				sub[k] = got[k]
			}
			if diff := cmp.Diff(tt.want, sub); diff != "" {
				t.Errorf("conf (-want +got):\n%s", diff)
			}
			for _, k := range tt.not {
				if v, ok := got[k]; ok {
					t.Errorf("%s = %q, want unset", k, v)
				}
			}
		})
	}
}

func TestServerPodErrors(t *testing.T) {
	tests := []struct {
		name, want string
		conn       *v1alpha1.SparkConnect
	}{
		{"no image anywhere", "no image for the server", newConnect(func(c *v1alpha1.SparkConnect) { c.Spec.Image = nil })},
		{"server image only", "no image for the executors", newConnect(func(c *v1alpha1.SparkConnect) {
			c.Spec.Image = nil
			c.Spec.Server.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "spark-kubernetes-driver", Image: "s"}}}}
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sparkpod.ConnectServerPod(tt.conn, sparkpod.RoleScheduling{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestServerPod(t *testing.T) {
	conn := newConnect(func(c *v1alpha1.SparkConnect) {
		c.Spec.Server.Template = &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"k": "v"}, Annotations: map[string]string{"a": "b"}},
			Spec: corev1.PodSpec{
				ServiceAccountName: "spark",
				Containers: []corev1.Container{
					{Name: "sidecar", Image: "side"},
					{Name: "spark-kubernetes-driver", Image: "srv:1", Ports: []corev1.ContainerPort{{Name: "ui", ContainerPort: 4040}}},
				},
			},
		}
		c.Spec.Executor.Template = &corev1.PodTemplateSpec{}
		c.Spec.SparkConf = map[string]string{"spark.x": "it's"}
	})
	pod, err := sparkpod.ConnectServerPod(conn, sparkpod.RoleScheduling{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{
		"k": "v", "spark-role": "connect-server", "spark-version": "4.0.4",
		"sparkoperator.k8s.io/connect-name": "sc", "sparkoperator.k8s.io/launched-by-spark-operator": "true",
	}, pod.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if pod.Name != "sc-server" || pod.Namespace != "ns" || pod.Annotations["a"] != "b" || pod.Spec.ServiceAccountName != "spark" {
		t.Errorf("name, namespace, annotations or service account lost: %+v", pod.ObjectMeta)
	}
	if len(pod.OwnerReferences) != 1 || pod.OwnerReferences[0].UID != "uid-1" || !*pod.OwnerReferences[0].Controller {
		t.Errorf("owner references = %+v", pod.OwnerReferences)
	}
	if pod.Spec.Containers[0].Command != nil {
		t.Errorf("the sidecar was changed: %+v", pod.Spec.Containers[0])
	}
	c := pod.Spec.Containers[1]
	if c.Image != "srv:1" {
		t.Errorf("image = %q, want the template's", c.Image)
	}
	script := c.Command[2]
	for _, want := range []string{`exec "${SPARK_HOME}/sbin/start-connect-server.sh"`, `--conf "spark.driver.host=${host}"`,
		`--conf 'spark.x=it'\''s'`, `--conf 'spark.kubernetes.driver.pod.name=sc-server'`} {
		if !strings.Contains(script, want) {
			t.Errorf("start script lacks %s:\n%s", want, script)
		}
	}
	var ports []int32
	for _, p := range c.Ports {
		ports = append(ports, p.ContainerPort)
	}
	if diff := cmp.Diff([]int32{4040, 15002, 7078, 7079}, ports); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.TCPSocket.Port.IntValue() != sparkpod.ConnectPort {
		t.Errorf("readiness probe = %+v, want TCP on %d", c.ReadinessProbe, sparkpod.ConnectPort)
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/tmp/spark/executor-pod-template.yaml" ||
		len(pod.Spec.Volumes) != 1 || pod.Spec.Volumes[0].ConfigMap.Name != "sc-conf" {
		t.Errorf("executor template mount: %+v %+v", c.VolumeMounts, pod.Spec.Volumes)
	}
	// The template itself is left alone.
	if conn.Spec.Server.Template.Spec.Containers[1].Command != nil || len(conn.Spec.Server.Template.Labels) != 1 {
		t.Error("sparkpod.ConnectServerPod changed the SparkConnect's template")
	}
}

func TestServerService(t *testing.T) {
	tests := []struct {
		name      string
		conn      *v1alpha1.SparkConnect
		wantName  string
		wantPorts []int32
		wantType  corev1.ServiceType
	}{
		{"default", newConnect(), "sc-server", []int32{7078, 7079, 4040, 15002}, ""},
		{"customised", newConnect(func(c *v1alpha1.SparkConnect) {
			c.Spec.Server.Service = &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "connect", Namespace: "elsewhere", Labels: map[string]string{"x": "y"}},
				Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Name: "grpc", Port: 15002}}},
			}
		}), "connect", []int32{15002}, corev1.ServiceTypeNodePort},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := sparkpod.ConnectService(tt.conn)
			var ports []int32
			for _, p := range svc.Spec.Ports {
				ports = append(ports, p.Port)
			}
			if svc.Name != tt.wantName || svc.Namespace != "ns" || svc.Spec.Type != tt.wantType {
				t.Errorf("Service %s/%s type %q, want ns/%s type %q", svc.Namespace, svc.Name, svc.Spec.Type, tt.wantName, tt.wantType)
			}
			if diff := cmp.Diff(tt.wantPorts, ports); diff != "" {
				t.Errorf("ports (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.conn.ServerSelector(), svc.Spec.Selector); diff != "" {
				t.Errorf("selector (-want +got):\n%s", diff)
			}
			if svc.Labels[v1alpha1.LabelConnectName] != "sc" || svc.Labels[v1beta2.LabelLaunchedByOperator] != "true" {
				t.Errorf("labels = %v", svc.Labels)
			}
		})
	}
}

func TestSessionDemand(t *testing.T) {
	da := func(initial, min *int32) *v1beta2.DynamicAllocation {
		return &v1beta2.DynamicAllocation{Enabled: true, InitialExecutors: initial, MinExecutors: min}
	}
	serverWith := func(cpu, mem string) *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: v1beta2.SparkDriverContainerName,
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}},
		}}}}
	}
	tests := []struct {
		name                 string
		mutate               func(*v1alpha1.SparkConnect)
		wantExecutors        int32
		wantServerCPU        string
		wantServerMem        string
		wantExecutorMemBytes int64
	}{
		{"Spark's defaults", func(*v1alpha1.SparkConnect) {}, 2, "1", "1408Mi", (1024 + 384) << 20},
		{"instances and sizes", func(c *v1alpha1.SparkConnect) {
			c.Spec.Executor.Instances, c.Spec.Executor.Memory = ptr(int32(5)), ptr("4g")
			c.Spec.Server.Cores, c.Spec.Server.Memory = ptr(int32(2)), ptr("2g")
		}, 5, "2", "2432Mi", (4096 + 409) << 20},
		{"dynamic, nothing set", func(c *v1alpha1.SparkConnect) { c.Spec.DynamicAllocation = da(nil, nil) }, 0, "1", "1408Mi", (1024 + 384) << 20},
		{"dynamic, initial above instances", func(c *v1alpha1.SparkConnect) {
			c.Spec.Executor.Instances, c.Spec.DynamicAllocation = ptr(int32(1)), da(ptr(int32(3)), nil)
		}, 3, "1", "1408Mi", (1024 + 384) << 20},
		{"dynamic, min above initial", func(c *v1alpha1.SparkConnect) { c.Spec.DynamicAllocation = da(ptr(int32(1)), ptr(int32(2))) },
			2, "1", "1408Mi", (1024 + 384) << 20},
		{"server template requests win", func(c *v1alpha1.SparkConnect) { c.Spec.Server.Template = serverWith("500m", "3Gi") },
			2, "500m", "3Gi", (1024 + 384) << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := newConnect(tt.mutate)
			d, err := sparkpod.ConnectDemand(conn)
			if err != nil {
				t.Fatal(err)
			}
			if d.Driver.Count != 1 || d.Executor.Count != tt.wantExecutors {
				t.Errorf("counts: server %d, executors %d; want 1, %d", d.Driver.Count, d.Executor.Count, tt.wantExecutors)
			}
			cpu, mem := d.Driver.Requests[corev1.ResourceCPU], d.Driver.Requests[corev1.ResourceMemory]
			if cpu.Cmp(resource.MustParse(tt.wantServerCPU)) != 0 || mem.Cmp(resource.MustParse(tt.wantServerMem)) != 0 {
				t.Errorf("server requests cpu %s memory %s, want %s %s", cpu.String(), mem.String(), tt.wantServerCPU, tt.wantServerMem)
			}
			if m := d.Executor.Requests[corev1.ResourceMemory]; m.Value() != tt.wantExecutorMemBytes {
				t.Errorf("executor memory request %s, want %d bytes", m.String(), tt.wantExecutorMemBytes)
			}
		})
	}
}

// TestAdmittedServer: a session's server and executor template carry its submission ID and
// the batch scheduler's pod settings; without an executor template one is made for them.
func TestAdmittedServer(t *testing.T) {
	gate := corev1.PodSchedulingGate{Name: "gated"}
	pods := sparkpod.RoleScheduling{
		Driver:   sparkpod.Scheduling{Labels: map[string]string{"queue": "q"}, NodeNames: []string{"n1"}},
		Executor: sparkpod.Scheduling{Labels: map[string]string{"queue": "q"}, NodeNames: []string{"n2"}, SchedulingGates: []corev1.PodSchedulingGate{gate}},
	}
	tests := []struct {
		name         string
		conn         *v1alpha1.SparkConnect
		pods         sparkpod.RoleScheduling
		wantTemplate bool   // the server reads an executor pod template
		wantNodeSel  string // a node selector the executor template keeps
	}{
		{name: "admitted without settings, no template", conn: newConnect()},
		{name: "settings and no template: one is made for them", conn: newConnect(), pods: pods, wantTemplate: true},
		{name: "settings added to the user's template", pods: pods, wantTemplate: true, wantNodeSel: "ssd", conn: newConnect(func(c *v1alpha1.SparkConnect) {
			c.Spec.Executor.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: map[string]string{"disk": "ssd"}}}
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.conn.Status.Server.SubmissionID = "sub-1"
			pod, err := sparkpod.ConnectServerPod(tt.conn, tt.pods)
			if err != nil {
				t.Fatal(err)
			}
			if pod.Labels[v1beta2.LabelSubmissionID] != "sub-1" {
				t.Errorf("server labels %v lack the submission ID", pod.Labels)
			}
			conf, err := sparkpod.ConnectServerConf(tt.conn, tt.pods.Executor)
			if err != nil {
				t.Fatal(err)
			}
			if got := confMap(conf)["spark.kubernetes.executor.label."+v1beta2.LabelSubmissionID]; got != "sub-1" {
				t.Errorf("executors are labelled with submission %q, want sub-1", got)
			}
			_, mounted := confMap(conf)["spark.kubernetes.executor.podTemplateFile"]
			hasVolume := len(pod.Spec.Volumes) > 0
			if mounted != tt.wantTemplate || hasVolume != tt.wantTemplate {
				t.Errorf("executor template in conf %v, mounted %v; want %v", mounted, hasVolume, tt.wantTemplate)
			}
			cm, err := sparkpod.ConnectExecutorTemplateConfigMap(tt.conn, tt.pods.Executor)
			if err != nil || (cm != nil) != tt.wantTemplate {
				t.Fatalf("ConfigMap %v, %v; want one: %v", cm, err, tt.wantTemplate)
			}
			if cm != nil {
				// Spark reads the template's containers, and fails to start on a null list.
				var raw struct {
					Spec struct{ Containers []map[string]any } `json:"spec"`
				}
				if err := yaml.Unmarshal([]byte(cm.Data[sparkpod.ConnectExecutorTemplateKey]), &raw); err != nil {
					t.Fatal(err)
				}
				if len(raw.Spec.Containers) != 1 || raw.Spec.Containers[0]["name"] != v1beta2.SparkExecutorContainerName {
					t.Errorf("executor template's containers are %v, want one named %s:\n%s", raw.Spec.Containers,
						v1beta2.SparkExecutorContainerName, cm.Data[sparkpod.ConnectExecutorTemplateKey])
				}
			}
			if tt.pods.Driver.IsZero() {
				if pod.Spec.Affinity != nil {
					t.Errorf("server affinity %+v without settings", pod.Spec.Affinity)
				}
				return
			}
			if pod.Labels["queue"] != "q" || !strings.Contains(pod.Spec.Affinity.String(), "n1") {
				t.Errorf("server lacks its scheduling: labels %v, affinity %v", pod.Labels, pod.Spec.Affinity)
			}
			var tmpl corev1.PodTemplateSpec
			if err := yaml.Unmarshal([]byte(cm.Data[sparkpod.ConnectExecutorTemplateKey]), &tmpl); err != nil {
				t.Fatal(err)
			}
			if tmpl.Labels["queue"] != "q" || !strings.Contains(tmpl.Spec.Affinity.String(), "n2") ||
				len(tmpl.Spec.SchedulingGates) != 1 || tmpl.Spec.NodeSelector["disk"] != tt.wantNodeSel {
				t.Errorf("executor template lacks its scheduling or the user's settings: %+v", tmpl)
			}
		})
	}
}

// TestServerPodIsADriver: the server pod is written by the same settings writer as a driver,
// so the webhook's pass over it (as over any session pod) finds nothing to add, and its
// template's settings are there with a batch scheduler's decision beside them.
func TestServerPodIsADriver(t *testing.T) {
	conn := newConnect(func(c *v1alpha1.SparkConnect) {
		c.Spec.Server.Template = &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "a"}},
			Spec: corev1.PodSpec{
				Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}},
				}}},
				Tolerations:     []corev1.Toleration{{Key: "spark", Operator: corev1.TolerationOpExists}},
				SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr(int64(185))},
				Volumes:         []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				Containers: []corev1.Container{{
					Name: v1beta2.SparkDriverContainerName, Env: []corev1.EnvVar{{Name: "MINE", Value: "1"}},
					VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}},
				}},
			},
		}
	})
	decision := sparkpod.RoleScheduling{Driver: sparkpod.Scheduling{SchedulerName: "batch", NodeNames: []string{"n1"}}}
	pod, err := sparkpod.ConnectServerPod(conn, decision)
	if err != nil {
		t.Fatal(err)
	}
	pod.Labels[v1beta2.SparkRoleLabel] = v1alpha1.SparkRoleConnectServer
	mutated := pod.DeepCopy()
	if err := podmutator.MutateConnectPod(mutated, conn); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(pod, mutated); diff != "" {
		t.Errorf("the webhook changes the operator's server pod (-built +mutated):\n%s", diff)
	}
	terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchExpressions) != 1 || len(terms[0].MatchFields) != 1 {
		t.Errorf("required terms %v: want the template's zone and the planned node in one term", terms)
	}
	if pod.Spec.SchedulerName != "batch" {
		t.Errorf("scheduler %q, want the batch scheduler's", pod.Spec.SchedulerName)
	}
}
