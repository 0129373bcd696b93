/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package native

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/submission"
)

var testIDs = IDs{
	AppID:            "spark-0123456789abcdef0123456789abcdef",
	ResourcePrefixID: "aaaaaa19a0b1c2d3e",
	ServiceID:        "bbbbbb19a0b1c2d3e",
	ConfigMapID:      "cccccc19a0b1c2d3e",
	LocalDirID:       "11111111-2222-4333-8444-555555555555",
	SubmitTime:       time.UnixMilli(1795331199661).UTC(),
}

var testOpts = Options{Master: "k8s://https://10.0.0.1:443", SparkUser: "spark"}

func loadExample(t *testing.T, name string) *v1beta2.SparkApplication {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	app := &v1beta2.SparkApplication{}
	if err := yaml.Unmarshal(data, app); err != nil {
		t.Fatal(err)
	}
	app.UID = "app-uid"
	v1beta2.SetSparkApplicationDefaults(app)
	return app
}

// TestBuildSparkPi compares with what spark-submit 4.0.4 created for the same conf on the
// local cluster (before API server defaulting).
func TestBuildSparkPi(t *testing.T) {
	app := loadExample(t, "spark-pi.yaml")
	attempt := submission.Attempt{SubmissionID: "sub-1", DriverPodName: "spark-pi-driver"}
	objs, err := Build(app, attempt, testOpts, testIDs)
	if err != nil {
		t.Fatal(err)
	}
	mem := resource.MustParse("896Mi")
	labels := map[string]string{
		"spark-app-name":                "spark-pi",
		"spark-app-selector":            testIDs.AppID,
		"spark-role":                    "driver",
		"spark-version":                 "4.0.4",
		"app.kubernetes.io/part-of":     "spark-pi-demo",
		v1beta2.LabelAppName:            "spark-pi",
		v1beta2.LabelLaunchedByOperator: "true",
		v1beta2.LabelSubmissionID:       "sub-1",
	}
	localDir := "/var/data/spark-" + testIDs.LocalDirID
	wantPod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "spark-pi-driver", Namespace: "default", Labels: withLabel(labels, v1beta2.LabelCustomised, "true"),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication",
				Name: "spark-pi", UID: "app-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:                     "spark-kubernetes-driver",
				Image:                    "docker.io/apache/spark:4.0.4",
				ImagePullPolicy:          corev1.PullIfNotPresent,
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				Args: []string{"driver", "--properties-file", "/opt/spark/conf/spark.properties",
					"--class", "org.apache.spark.examples.SparkPi",
					"local:///opt/spark/examples/jars/spark-examples.jar", "1000"},
				Env: []corev1.EnvVar{
					{Name: "SPARK_USER", Value: "spark"},
					{Name: "SPARK_APPLICATION_ID", Value: testIDs.AppID},
					{Name: "SPARK_DRIVER_BIND_ADDRESS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
					{Name: "SPARK_LOCAL_DIRS", Value: localDir},
					{Name: "SPARK_CONF_DIR", Value: "/opt/spark/conf"},
				},
				Ports: []corev1.ContainerPort{
					{Name: "driver-rpc-port", ContainerPort: 7078, Protocol: corev1.ProtocolTCP},
					{Name: "blockmanager", ContainerPort: 7079, Protocol: corev1.ProtocolTCP},
					{Name: "spark-ui", ContainerPort: 4040, Protocol: corev1.ProtocolTCP},
				},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: mem},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: mem},
				},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "pod-template-volume", MountPath: "/opt/spark/pod-template"},
					{Name: "spark-local-dir-1", MountPath: localDir},
					{Name: "spark-conf-volume-driver", MountPath: "/opt/spark/conf"},
				},
				SecurityContext: app.Spec.Driver.SecurityContext,
			}},
			Volumes: []corev1.Volume{
				{Name: "pod-template-volume", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "spark-pi-aaaaaa19a0b1c2d3e-driver-podspec-conf-map"},
					Items:                []corev1.KeyToPath{{Key: "podspec-configmap-key", Path: "pod-spec-template.yml"}},
				}}},
				{Name: "spark-local-dir-1", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "spark-conf-volume-driver", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "spark-drv-cccccc19a0b1c2d3e-conf-map"},
					Items:                []corev1.KeyToPath{{Key: "spark.properties", Path: "spark.properties", Mode: ptr.To(int32(420))}},
				}}},
			},
			RestartPolicy:            corev1.RestartPolicyNever,
			ServiceAccountName:       "spark-operator-spark",
			DeprecatedServiceAccount: "spark-operator-spark",
		},
	}
	if diff := cmp.Diff(wantPod, objs.Pod); diff != "" {
		t.Errorf("pod (-want +got):\n%s", diff)
	}

	wantProps := map[string]string{
		"spark.app.id":                   testIDs.AppID,
		"spark.app.name":                 "spark-pi",
		"spark.app.submitTime":           "1795331199661",
		"spark.driver.blockManager.port": "7079",
		"spark.driver.cores":             "1",
		"spark.driver.host":              "spark-pi-aaaaaa19a0b1c2d3e-driver-svc.default.svc",
		"spark.driver.memory":            "512m",
		"spark.driver.port":              "7078",
		"spark.executor.cores":           "1",
		"spark.executor.instances":       "2",
		"spark.executor.memory":          "512m",
		"spark.jars":                     "local:///opt/spark/examples/jars/spark-examples.jar",
		"spark.kubernetes.authenticate.driver.serviceAccountName":            "spark-operator-spark",
		"spark.kubernetes.container.image":                                   "docker.io/apache/spark:4.0.4",
		"spark.kubernetes.driver.container.image":                            "docker.io/apache/spark:4.0.4",
		"spark.kubernetes.executor.container.image":                          "docker.io/apache/spark:4.0.4",
		"spark.kubernetes.container.image.pullPolicy":                        "IfNotPresent",
		"spark.kubernetes.driver.label.app.kubernetes.io/part-of":            "spark-pi-demo",
		"spark.kubernetes.driver.label." + v1beta2.LabelAppName:              "spark-pi",
		"spark.kubernetes.driver.label." + v1beta2.LabelLaunchedByOperator:   "true",
		"spark.kubernetes.driver.label." + v1beta2.LabelSubmissionID:         "sub-1",
		"spark.kubernetes.executor.label.app.kubernetes.io/part-of":          "spark-pi-demo",
		"spark.kubernetes.executor.label." + v1beta2.LabelAppName:            "spark-pi",
		"spark.kubernetes.executor.label." + v1beta2.LabelLaunchedByOperator: "true",
		"spark.kubernetes.executor.label." + v1beta2.LabelSubmissionID:       "sub-1",
		"spark.kubernetes.driver.pod.name":                                   "spark-pi-driver",
		"spark.kubernetes.driver.request.cores":                              "500m",
		"spark.kubernetes.executor.podTemplateContainerName":                 "spark-kubernetes-executor",
		"spark.kubernetes.executor.podTemplateFile":                          "/opt/spark/pod-template/pod-spec-template.yml",
		"spark.kubernetes.executor.request.cores":                            "500m",
		"spark.kubernetes.memoryOverheadFactor":                              "0.1",
		"spark.kubernetes.namespace":                                         "default",
		"spark.kubernetes.resource.type":                                     "java",
		"spark.kubernetes.submission.waitAppCompletion":                      "false",
		"spark.kubernetes.submitInDriver":                                    "true",
		"spark.master":                                                       "k8s://https://10.0.0.1:443",
		"spark.submit.deployMode":                                            "cluster",
		"spark.submit.pyFiles":                                               "",
	}
	got, err := ParseProperties(objs.ConfigMap.Data["spark.properties"])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantProps, got); diff != "" {
		t.Errorf("spark.properties (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantProps, objs.Properties); diff != "" {
		t.Errorf("Properties (-want +got):\n%s", diff)
	}
	if objs.ConfigMap.Data["spark.kubernetes.namespace"] != "default" || objs.ConfigMap.Immutable == nil || !*objs.ConfigMap.Immutable {
		t.Errorf("ConfigMap = %+v, want immutable with the namespace key", objs.ConfigMap)
	}

	wantSvc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "spark-pi-aaaaaa19a0b1c2d3e-driver-svc", Namespace: "default",
			Labels: map[string]string{"spark-app-selector": testIDs.AppID},
		},
		Spec: corev1.ServiceSpec{
			ClusterIP:      "None",
			IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicySingleStack),
			IPFamilies:     []corev1.IPFamily{corev1.IPv4Protocol},
			Selector:       labels,
			Ports: []corev1.ServicePort{
				{Name: "driver-rpc-port", Port: 7078, TargetPort: intstr.FromInt32(7078)},
				{Name: "blockmanager", Port: 7079, TargetPort: intstr.FromInt32(7079)},
				{Name: "spark-ui", Port: 4040, TargetPort: intstr.FromInt32(4040)},
			},
		},
	}
	if diff := cmp.Diff(wantSvc, objs.Service); diff != "" {
		t.Errorf("service (-want +got):\n%s", diff)
	}

	// The executors' securityContext can only reach them through a pod template.
	if objs.PodTemplate == nil {
		t.Fatal("no executor pod template")
	}
	var tmpl corev1.Pod
	if err := yaml.Unmarshal([]byte(objs.PodTemplate.Data["podspec-configmap-key"]), &tmpl); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(app.Spec.Executor.SecurityContext, tmpl.Spec.Containers[0].SecurityContext); diff != "" {
		t.Errorf("executor template securityContext (-want +got):\n%s", diff)
	}
	if objs.PodTemplate.Name != "spark-pi-aaaaaa19a0b1c2d3e-driver-podspec-conf-map" {
		t.Errorf("template ConfigMap name = %q", objs.PodTemplate.Name)
	}
}

func TestBuildErrors(t *testing.T) {
	attempt := submission.Attempt{SubmissionID: "s", DriverPodName: "p"}
	tests := []struct {
		name   string
		modify func(*v1beta2.SparkApplication)
		opts   Options
	}{
		{name: "no uid", modify: func(a *v1beta2.SparkApplication) { a.UID = "" }},
		{name: "no image", modify: func(a *v1beta2.SparkApplication) { a.Spec.Image = nil }},
		{name: "no main file", modify: func(a *v1beta2.SparkApplication) { a.Spec.MainApplicationFile = "" }},
		{name: "no main class", modify: func(a *v1beta2.SparkApplication) { a.Spec.MainClass = nil }},
		{name: "bad memory", modify: func(a *v1beta2.SparkApplication) { a.Spec.Driver.Memory = ptr.To("lots") }},
		{name: "bad unit", modify: func(a *v1beta2.SparkApplication) { a.Spec.Driver.Memory = ptr.To("5x") }},
		{name: "bad cpu", modify: func(a *v1beta2.SparkApplication) { a.Spec.Driver.CoreLimit = ptr.To("fast") }},
		{name: "bad factor", modify: func(a *v1beta2.SparkApplication) { a.Spec.MemoryOverheadFactor = ptr.To("x") }},
		{name: "bad port", modify: func(a *v1beta2.SparkApplication) { a.Spec.SparkConf = map[string]string{"spark.driver.port": "0"} }},
		{name: "bad secret ref", modify: func(a *v1beta2.SparkApplication) {
			a.Spec.Driver.EnvSecretKeyRefs = map[string]v1beta2.NameKey{"X": {Name: "s"}}
		}},
		{name: "client mode", modify: func(a *v1beta2.SparkApplication) { a.Spec.Mode = v1beta2.DeployModeClient }},
		{name: "unknown type", modify: func(a *v1beta2.SparkApplication) { a.Spec.Type = "Go" }},
		{name: "no master", modify: func(*v1beta2.SparkApplication) {}, opts: Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := loadExample(t, "spark-pi.yaml")
			tt.modify(app)
			opts := tt.opts
			if tt.name != "no master" {
				opts = testOpts
			}
			_, err := Build(app, attempt, opts, testIDs)
			var serr *submission.Error
			if !errors.As(err, &serr) {
				t.Fatalf("Build error = %v, want a *submission.Error", err)
			}
		})
	}
	if _, err := Build(nil, attempt, testOpts, testIDs); err == nil {
		t.Error("Build(nil) succeeded")
	}
}

func TestBuildVariants(t *testing.T) {
	tests := []struct {
		name      string
		modify    func(*v1beta2.SparkApplication)
		wantArgs  []string
		wantMem   string
		wantCPU   [2]string // request, limit
		wantSvc   string
		wantProps map[string]string
	}{{
		name: "python with overhead factor default 0.4",
		modify: func(a *v1beta2.SparkApplication) {
			a.Spec.Type = v1beta2.SparkApplicationTypePython
			a.Spec.MainApplicationFile = "local:///opt/spark/examples/src/main/python/pi.py"
			a.Spec.Driver.Memory = ptr.To("2g")
		},
		wantArgs:  []string{"driver", "--properties-file", "/opt/spark/conf/spark.properties", "--class", "org.apache.spark.deploy.PythonRunner", "local:///opt/spark/examples/src/main/python/pi.py", "1000"},
		wantMem:   "2867Mi",
		wantCPU:   [2]string{"500m", ""},
		wantSvc:   "spark-pi-aaaaaa19a0b1c2d3e-driver-svc",
		wantProps: map[string]string{"spark.kubernetes.resource.type": "python", "spark.kubernetes.memoryOverheadFactor": "0.4"},
	}, {
		name: "proxy user, explicit overhead, core request and limit, long name",
		modify: func(a *v1beta2.SparkApplication) {
			a.Name = "a-very-long-application-name-that-is-longer-than-fifty-chars"
			a.Spec.ProxyUser = ptr.To("bob")
			a.Spec.Driver.MemoryOverhead = ptr.To("100m")
			a.Spec.Driver.Memory = ptr.To("1g")
			a.Spec.Driver.CoreRequest = ptr.To("500m")
			a.Spec.Driver.CoreLimit = ptr.To("2")
		},
		wantArgs: []string{"driver", "--proxy-user", "bob", "--properties-file", "/opt/spark/conf/spark.properties", "--class", "org.apache.spark.examples.SparkPi", "local:///opt/spark/examples/jars/spark-examples.jar", "1000"},
		wantMem:  "1124Mi",
		wantCPU:  [2]string{"500m", "2"},
		wantSvc:  "spark-bbbbbb19a0b1c2d3e-driver-svc",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := loadExample(t, "spark-pi.yaml")
			tt.modify(app)
			objs, err := Build(app, submission.Attempt{SubmissionID: "s", DriverPodName: "d"}, testOpts, testIDs)
			if err != nil {
				t.Fatal(err)
			}
			ctr := objs.Pod.Spec.Containers[0]
			if diff := cmp.Diff(tt.wantArgs, ctr.Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			got := [3]string{ctr.Resources.Limits.Memory().String(), ctr.Resources.Requests.Cpu().String(), ""}
			if q, ok := ctr.Resources.Limits[corev1.ResourceCPU]; ok {
				got[2] = q.String()
			}
			if diff := cmp.Diff([3]string{tt.wantMem, tt.wantCPU[0], tt.wantCPU[1]}, got); diff != "" {
				t.Errorf("memory, cpu request, cpu limit (-want +got):\n%s", diff)
			}
			if objs.Service.Name != tt.wantSvc {
				t.Errorf("service name = %q, want %q", objs.Service.Name, tt.wantSvc)
			}
			for k, v := range tt.wantProps {
				if objs.Properties[k] != v {
					t.Errorf("property %s = %q, want %q", k, objs.Properties[k], v)
				}
			}
		})
	}
}

func TestPropertiesRoundTrip(t *testing.T) {
	props := map[string]string{
		"spark.master":   "k8s://https://127.0.0.1:37253",
		"a key":          " leading space = # !",
		"spark.submit.x": "",
		"tab":            "a\tb\nc\\d",
	}
	got, err := ParseProperties(propertiesFile("comment", time.Unix(0, 0).UTC(), props))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(props, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// A line exactly as spark-submit wrote it.
	got, err = ParseProperties("#c\nspark.master=k8s\\://https\\://127.0.0.1\\:37253\n")
	if err != nil || got["spark.master"] != "k8s://https://127.0.0.1:37253" {
		t.Errorf("ParseProperties = %v, %v", got, err)
	}
}

// TestBuildLikeSparkSubmitTemplates covers what the equivalence test (test/equivalence) found
// native submission doing differently from spark-submit: the dedicated spec fields come first
// in the driver pod (spark-submit gets them from the pod template, which Spark adds to);
// mounted spark-local-dir-* volumes replace the default local directory; spec.monitoring
// becomes metrics properties, a JMX exporter agent, scrape annotations and ports; and
// hostPath/emptyDir/nfs/PVC mounts are also Spark volume properties, which executors get
// their volumes from instead of from the template.
func TestBuildLikeSparkSubmitTemplates(t *testing.T) {
	type view struct {
		Volumes, Mounts, Ports []string
		LocalDirs              string
		Annotations            map[string]string
		Props                  map[string]string // only the keys of wantProps; "" when absent
		TemplateVolumes        []string
		TemplatePorts          []string
	}
	const agent = "-javaagent:/opt/jmx-exporter/jmx_prometheus_javaagent.jar=8090:/etc/metrics/conf/prometheus.yaml"
	tests := []struct {
		example string
		want    view
	}{{
		example: "spark-pi-configmap.yaml",
		want: view{
			Volumes:         []string{"settings", "pod-template-volume", "spark-local-dir-1", "spark-conf-volume-driver"},
			Mounts:          []string{"/etc/spark-pi", "/opt/spark/pod-template", "/var/data/spark-11111111-2222-4333-8444-555555555555", "/opt/spark/conf"},
			Ports:           []string{"driver-rpc-port", "blockmanager", "spark-ui"},
			LocalDirs:       "/var/data/spark-11111111-2222-4333-8444-555555555555",
			Props:           map[string]string{"spark.metrics.conf": "", "spark.kubernetes.driver.volumes.configMap.settings.mount.path": ""},
			TemplateVolumes: []string{"settings"},
		},
	}, {
		example: "spark-pi-prometheus.yaml",
		want: view{
			Volumes:     []string{"pod-template-volume", "spark-local-dir-1", "spark-conf-volume-driver"},
			Mounts:      []string{"/opt/spark/pod-template", "/var/data/spark-11111111-2222-4333-8444-555555555555", "/opt/spark/conf"},
			Ports:       []string{"jmx-exporter", "driver-rpc-port", "blockmanager", "spark-ui"},
			LocalDirs:   "/var/data/spark-11111111-2222-4333-8444-555555555555",
			Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "8090", "prometheus.io/path": "/metrics"},
			Props: map[string]string{
				"spark.metrics.conf":                                      "/etc/metrics/conf/metrics.properties",
				"spark.metrics.namespace":                                 "default.spark-pi-prometheus",
				"spark.driver.extraJavaOptions":                           agent,
				"spark.executor.extraJavaOptions":                         agent,
				"spark.kubernetes.executor.annotation.prometheus.io/port": "8090",
			},
			TemplatePorts: []string{"jmx-exporter"},
		},
	}, {
		example: "spark-pi-emptydir.yaml",
		want: view{
			Volumes:   []string{"spark-local-dir-scratch", "pod-template-volume", "spark-conf-volume-driver"},
			Mounts:    []string{"/var/spark/scratch", "/opt/spark/pod-template", "/opt/spark/conf"},
			Ports:     []string{"driver-rpc-port", "blockmanager", "spark-ui"},
			LocalDirs: "/var/spark/scratch",
			Props: map[string]string{
				"spark.kubernetes.driver.volumes.emptyDir.spark-local-dir-scratch.mount.path":          "/var/spark/scratch",
				"spark.kubernetes.driver.volumes.emptyDir.spark-local-dir-scratch.options.sizeLimit":   "2Gi",
				"spark.kubernetes.executor.volumes.emptyDir.spark-local-dir-scratch.mount.path":        "/var/spark/scratch",
				"spark.kubernetes.executor.volumes.emptyDir.spark-local-dir-scratch.options.sizeLimit": "2Gi",
			},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.example, func(t *testing.T) {
			app := loadExample(t, tt.example)
			objs, err := Build(app, submission.Attempt{SubmissionID: "s", DriverPodName: "d"}, testOpts, testIDs)
			if err != nil {
				t.Fatal(err)
			}
			ctr := objs.Pod.Spec.Containers[0]
			got := view{Annotations: objs.Pod.Annotations, Props: map[string]string{}}
			for _, v := range objs.Pod.Spec.Volumes {
				got.Volumes = append(got.Volumes, v.Name)
			}
			for _, m := range ctr.VolumeMounts {
				got.Mounts = append(got.Mounts, m.MountPath)
			}
			for _, p := range ctr.Ports {
				got.Ports = append(got.Ports, p.Name)
			}
			for _, e := range ctr.Env {
				if e.Name == "SPARK_LOCAL_DIRS" {
					got.LocalDirs = e.Value
				}
			}
			for k := range tt.want.Props {
				got.Props[k] = objs.Properties[k]
			}
			if objs.PodTemplate == nil {
				t.Fatal("no executor pod template")
			}
			tmpl := &corev1.Pod{}
			if err := yaml.UnmarshalStrict([]byte(objs.PodTemplate.Data[templateKey]), tmpl); err != nil {
				t.Fatal(err)
			}
			for _, v := range tmpl.Spec.Volumes {
				got.TemplateVolumes = append(got.TemplateVolumes, v.Name)
			}
			for _, p := range tmpl.Spec.Containers[0].Ports {
				got.TemplatePorts = append(got.TemplatePorts, p.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("driver pod, properties, executor template (-want +got):\n%s", diff)
			}
		})
	}
}

// withLabel is labels and key=value.
func withLabel(labels map[string]string, key, value string) map[string]string {
	out := maps.Clone(labels)
	out[key] = value
	return out
}
