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
	"github.com/sparkop/spark-operator/submission"
)

var testAttempt = submission.Attempt{SubmissionID: "sub-1", DriverPodName: "pi-driver"}

func baseApp() *v1beta2.SparkApplication {
	app := &v1beta2.SparkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns", UID: "uid-1"},
		Spec: v1beta2.SparkApplicationSpec{
			Type:                v1beta2.SparkApplicationTypeScala,
			SparkVersion:        "4.0.4",
			MainClass:           ptr("org.apache.spark.examples.SparkPi"),
			MainApplicationFile: "local:///opt/spark/examples/jars/spark-examples.jar",
		},
	}
	v1beta2.SetSparkApplicationDefaults(app)
	return app
}

// confOf reads the --conf pairs as spark-submit does: a later value for a key wins.
func confOf(args []string) map[string]string {
	out := map[string]string{}
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--conf" {
			k, v, _ := strings.Cut(args[i+1], "=")
			out[k] = v
			i++
		}
	}
	return out
}

func withPrefixes(conf map[string]string, prefixes ...string) map[string]string {
	out := map[string]string{}
	for k, v := range conf {
		for _, p := range prefixes {
			if strings.HasPrefix(k, p) {
				out[k] = v
			}
		}
	}
	return out
}

func TestBuildArgsMinimal(t *testing.T) {
	got, err := BuildArgs(baseApp(), testAttempt, Options{MasterURL: "https://10.0.0.1:6443", DriverPodTemplateFile: "/t/d.yaml", ExecutorPodTemplateFile: "/t/e.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"--master", "k8s://https://10.0.0.1:6443",
		"--deploy-mode", "cluster",
		"--class", "org.apache.spark.examples.SparkPi",
		"--name", "pi",
		"--conf", "spark.executor.instances=1",
		"--conf", "spark.driver.cores=1",
		"--conf", "spark.driver.memory=1g",
		"--conf", "spark.executor.cores=1",
		"--conf", "spark.executor.memory=1g",
		"--conf", "spark.kubernetes.namespace=ns",
		"--conf", "spark.app.name=pi",
		"--conf", "spark.kubernetes.driver.pod.name=pi-driver",
		"--conf", "spark.kubernetes.submission.waitAppCompletion=false",
		"--conf", "spark.kubernetes.driver.label.sparkoperator.k8s.io/app-name=pi",
		"--conf", "spark.kubernetes.driver.label.sparkoperator.k8s.io/launched-by-spark-operator=true",
		"--conf", "spark.kubernetes.driver.label.sparkoperator.k8s.io/submission-id=sub-1",
		"--conf", "spark.kubernetes.executor.label.sparkoperator.k8s.io/app-name=pi",
		"--conf", "spark.kubernetes.executor.label.sparkoperator.k8s.io/launched-by-spark-operator=true",
		"--conf", "spark.kubernetes.executor.label.sparkoperator.k8s.io/submission-id=sub-1",
		"--conf", "spark.kubernetes.driver.podTemplateFile=/t/d.yaml",
		"--conf", "spark.kubernetes.driver.podTemplateContainerName=spark-kubernetes-driver",
		"--conf", "spark.kubernetes.executor.podTemplateFile=/t/e.yaml",
		"--conf", "spark.kubernetes.executor.podTemplateContainerName=spark-kubernetes-executor",
		"local:///opt/spark/examples/jars/spark-examples.jar",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BuildArgs (-want +got):\n%s", diff)
	}
}

func TestBuildArgsConf(t *testing.T) {
	hostPathDir := corev1.HostPathDirectory
	size := resource.MustParse("1Gi")
	tests := []struct {
		name     string
		mutate   func(*v1beta2.SparkApplication)
		prefixes []string
		want     map[string]string
	}{{
		name: "images, pull policy and secrets",
		mutate: func(a *v1beta2.SparkApplication) {
			a.Spec.Image = ptr("spark:4")
			a.Spec.Executor.Image = ptr("spark:4-exec")
			a.Spec.ImagePullPolicy = ptr("Always")
			a.Spec.ImagePullSecrets = []string{"reg1", "reg2"}
		},
		prefixes: []string{"spark.kubernetes.container.", "spark.kubernetes.driver.container.", "spark.kubernetes.executor.container."},
		want: map[string]string{
			"spark.kubernetes.container.image":             "spark:4",
			"spark.kubernetes.container.image.pullPolicy":  "Always",
			"spark.kubernetes.container.image.pullSecrets": "reg1,reg2",
			"spark.kubernetes.driver.container.image":      "spark:4",
			"spark.kubernetes.executor.container.image":    "spark:4-exec",
		},
	}, {
		name: "labels and annotations; the operator's labels cannot be overridden",
		mutate: func(a *v1beta2.SparkApplication) {
			a.Labels = map[string]string{"team": "a", "tier": "app"}
			a.Spec.Driver.Labels = map[string]string{"tier": "driver", v1beta2.LabelSubmissionID: "forged"}
			a.Spec.Executor.Annotations = map[string]string{"note": "x"}
		},
		prefixes: []string{"spark.kubernetes.driver.label.", "spark.kubernetes.executor.label.", "spark.kubernetes.driver.annotation.", "spark.kubernetes.executor.annotation."},
		want: map[string]string{
			"spark.kubernetes.driver.label.team":                                              "a",
			"spark.kubernetes.driver.label.tier":                                              "driver",
			"spark.kubernetes.driver.label.sparkoperator.k8s.io/app-name":                     "pi",
			"spark.kubernetes.driver.label.sparkoperator.k8s.io/launched-by-spark-operator":   "true",
			"spark.kubernetes.driver.label.sparkoperator.k8s.io/submission-id":                "sub-1",
			"spark.kubernetes.executor.label.team":                                            "a",
			"spark.kubernetes.executor.label.tier":                                            "app",
			"spark.kubernetes.executor.label.sparkoperator.k8s.io/app-name":                   "pi",
			"spark.kubernetes.executor.label.sparkoperator.k8s.io/launched-by-spark-operator": "true",
			"spark.kubernetes.executor.label.sparkoperator.k8s.io/submission-id":              "sub-1",
			"spark.kubernetes.executor.annotation.note":                                       "x",
		},
	}, {
		name: "cores, memory, overheads, instances, service accounts, java options",
		mutate: func(a *v1beta2.SparkApplication) {
			a.Spec.Driver.Cores = ptr(int32(2))
			a.Spec.Driver.CoreRequest = ptr("500m")
			a.Spec.Driver.CoreLimit = ptr("1200m")
			a.Spec.Driver.Memory = ptr("2g")
			a.Spec.Driver.MemoryOverhead = ptr("512m")
			a.Spec.Driver.ServiceAccount = ptr("spark")
			a.Spec.Driver.JavaOptions = ptr("-XX:+UseG1GC")
			a.Spec.Executor.Instances = ptr(int32(3))
			a.Spec.Executor.CoreRequest = ptr("250m")
			a.Spec.Executor.ServiceAccount = ptr("exec")
			a.Spec.Executor.DeleteOnTermination = ptr(false)
			a.Spec.MemoryOverheadFactor = ptr("0.2")
		},
		prefixes: []string{"spark.driver.", "spark.executor.", "spark.kubernetes.driver.request", "spark.kubernetes.driver.limit", "spark.kubernetes.executor.request", "spark.kubernetes.executor.delete", "spark.kubernetes.authenticate.", "spark.kubernetes.memory"},
		want: map[string]string{
			"spark.driver.cores":                                        "2",
			"spark.kubernetes.driver.request.cores":                     "500m",
			"spark.kubernetes.driver.limit.cores":                       "1200m",
			"spark.driver.memory":                                       "2g",
			"spark.driver.memoryOverhead":                               "512m",
			"spark.driver.extraJavaOptions":                             "-XX:+UseG1GC",
			"spark.kubernetes.authenticate.driver.serviceAccountName":   "spark",
			"spark.executor.instances":                                  "3",
			"spark.executor.cores":                                      "1",
			"spark.executor.memory":                                     "1g",
			"spark.kubernetes.executor.request.cores":                   "250m",
			"spark.kubernetes.authenticate.executor.serviceAccountName": "exec",
			"spark.kubernetes.executor.deleteOnTermination":             "false",
			"spark.kubernetes.memoryOverheadFactor":                     "0.2",
			"spark.driver.memoryOverheadFactor":                         "0.2",
			"spark.executor.memoryOverheadFactor":                       "0.2",
		},
	}, {
		name: "secrets and environment",
		mutate: func(a *v1beta2.SparkApplication) {
			a.Spec.Driver.Secrets = []v1beta2.SecretInfo{{Name: "gcp", Path: "/mnt/gcp", Type: v1beta2.SecretTypeGCPServiceAccount}, {Name: "plain", Path: "/mnt/p", Type: v1beta2.SecretTypeGeneric}}
			a.Spec.Executor.Secrets = []v1beta2.SecretInfo{{Name: "tok", Path: "/mnt/tok", Type: v1beta2.SecretTypeHadoopDelegationToken}}
			a.Spec.Driver.EnvVars = map[string]string{"B": "2", "A": "1"}
			a.Spec.Executor.EnvVars = map[string]string{"C": "3"}
			a.Spec.Driver.EnvSecretKeyRefs = map[string]v1beta2.NameKey{"PW": {Name: "db", Key: "password"}}
			a.Spec.Executor.EnvSecretKeyRefs = map[string]v1beta2.NameKey{"PW": {Name: "db", Key: "password"}}
		},
		prefixes: []string{"spark.kubernetes.driver.secret", "spark.kubernetes.executor.secret", "spark.kubernetes.driverEnv.", "spark.executorEnv."},
		want: map[string]string{
			"spark.kubernetes.driver.secrets.gcp":                       "/mnt/gcp",
			"spark.kubernetes.driver.secrets.plain":                     "/mnt/p",
			"spark.kubernetes.driverEnv.GOOGLE_APPLICATION_CREDENTIALS": "/mnt/gcp/key.json",
			"spark.kubernetes.executor.secrets.tok":                     "/mnt/tok",
			"spark.executorEnv.HADOOP_TOKEN_FILE_LOCATION":              "/mnt/tok/hadoop.token",
			"spark.kubernetes.driverEnv.A":                              "1",
			"spark.kubernetes.driverEnv.B":                              "2",
			"spark.executorEnv.C":                                       "3",
			"spark.kubernetes.driver.secretKeyRef.PW":                   "db:password",
			"spark.kubernetes.executor.secretKeyRef.PW":                 "db:password",
		},
	}, {
		name: "volumes Spark can declare; others are left to the template",
		mutate: func(a *v1beta2.SparkApplication) {
			a.Spec.Volumes = []corev1.Volume{
				{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data", Type: &hostPathDir}}},
				{Name: "spark-local-dir-1", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &size}}},
				{Name: "claim", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "pvc", ReadOnly: true}}},
				{Name: "share", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.local", Path: "/exports"}}},
				{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}},
			}
			a.Spec.Driver.VolumeMounts = []corev1.VolumeMount{
				{Name: "host", MountPath: "/host", SubPath: "sub"},
				{Name: "claim", MountPath: "/claim"},
				{Name: "cm", MountPath: "/cm"},
			}
			a.Spec.Executor.VolumeMounts = []corev1.VolumeMount{
				{Name: "spark-local-dir-1", MountPath: "/tmp/spark"},
				{Name: "share", MountPath: "/share", ReadOnly: true},
			}
		},
		prefixes: []string{"spark.kubernetes.driver.volumes.", "spark.kubernetes.executor.volumes."},
		want: map[string]string{
			"spark.kubernetes.driver.volumes.hostPath.host.mount.path":                       "/host",
			"spark.kubernetes.driver.volumes.hostPath.host.mount.subPath":                    "sub",
			"spark.kubernetes.driver.volumes.hostPath.host.options.path":                     "/data",
			"spark.kubernetes.driver.volumes.hostPath.host.options.type":                     "Directory",
			"spark.kubernetes.driver.volumes.persistentVolumeClaim.claim.mount.path":         "/claim",
			"spark.kubernetes.driver.volumes.persistentVolumeClaim.claim.mount.readOnly":     "true",
			"spark.kubernetes.driver.volumes.persistentVolumeClaim.claim.options.claimName":  "pvc",
			"spark.kubernetes.executor.volumes.emptyDir.spark-local-dir-1.mount.path":        "/tmp/spark",
			"spark.kubernetes.executor.volumes.emptyDir.spark-local-dir-1.options.sizeLimit": "1Gi",
			"spark.kubernetes.executor.volumes.nfs.share.mount.path":                         "/share",
			"spark.kubernetes.executor.volumes.nfs.share.mount.readOnly":                     "true",
			"spark.kubernetes.executor.volumes.nfs.share.options.path":                       "/exports",
			"spark.kubernetes.executor.volumes.nfs.share.options.server":                     "nfs.local",
		},
	}, {
		name: "node selectors and hadoop ConfigMap",
		mutate: func(a *v1beta2.SparkApplication) {
			a.Spec.NodeSelector = map[string]string{"disk": "ssd"}
			a.Spec.Driver.NodeSelector = map[string]string{"pool": "drivers"}
			a.Spec.Executor.NodeSelector = map[string]string{"pool": "executors"}
			a.Spec.HadoopConfigMap = ptr("hadoop-conf")
		},
		prefixes: []string{"spark.kubernetes.node.", "spark.kubernetes.driver.node.", "spark.kubernetes.executor.node.", "spark.kubernetes.hadoop."},
		want: map[string]string{
			"spark.kubernetes.node.selector.disk":          "ssd",
			"spark.kubernetes.driver.node.selector.pool":   "drivers",
			"spark.kubernetes.executor.node.selector.pool": "executors",
			"spark.kubernetes.hadoop.configMapName":        "hadoop-conf",
		},
	}, {
		name: "dynamic allocation",
		mutate: func(a *v1beta2.SparkApplication) {
			a.Spec.Executor.Instances = nil
			a.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, InitialExecutors: ptr(int32(2)), MinExecutors: ptr(int32(1)), MaxExecutors: ptr(int32(10)), ShuffleTrackingTimeout: ptr(int64(60000))}
		},
		prefixes: []string{"spark.dynamicAllocation.", "spark.executor.instances"},
		want: map[string]string{
			"spark.dynamicAllocation.enabled":                 "true",
			"spark.dynamicAllocation.initialExecutors":        "2",
			"spark.dynamicAllocation.minExecutors":            "1",
			"spark.dynamicAllocation.maxExecutors":            "10",
			"spark.dynamicAllocation.shuffleTracking.enabled": "true",
			"spark.dynamicAllocation.shuffleTracking.timeout": "60000",
		},
	}, {
		name: "sparkConf verbatim, hadoopConf prefixed, operator-owned keys kept",
		mutate: func(a *v1beta2.SparkApplication) {
			a.Spec.SparkConf = map[string]string{"spark.eventLog.enabled": "true", "spark.kubernetes.namespace": "elsewhere", "spark.kubernetes.driver.pod.name": "other"}
			a.Spec.HadoopConf = map[string]string{"fs.s3a.endpoint": "http://minio"}
		},
		prefixes: []string{"spark.eventLog.", "spark.hadoop.", "spark.kubernetes.namespace", "spark.kubernetes.driver.pod.name"},
		want: map[string]string{
			"spark.eventLog.enabled":           "true",
			"spark.hadoop.fs.s3a.endpoint":     "http://minio",
			"spark.kubernetes.namespace":       "ns",
			"spark.kubernetes.driver.pod.name": "pi-driver",
		},
	}, {
		name: "prometheus monitoring",
		mutate: func(a *v1beta2.SparkApplication) {
			a.Spec.Driver.JavaOptions = ptr("-Dx=1")
			a.Spec.Monitoring = &v1beta2.MonitoringSpec{ExposeDriverMetrics: true, Prometheus: &v1beta2.PrometheusSpec{JmxExporterJar: "/prometheus/jmx.jar", Port: ptr(int32(8091))}}
		},
		prefixes: []string{"spark.metrics.", "spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions", "spark.kubernetes.driver.annotation.", "spark.kubernetes.executor.annotation."},
		want: map[string]string{
			"spark.metrics.conf":                                      "/etc/metrics/conf/metrics.properties",
			"spark.metrics.namespace":                                 "ns.pi",
			"spark.driver.extraJavaOptions":                           "-Dx=1 -javaagent:/prometheus/jmx.jar=8091:/etc/metrics/conf/prometheus.yaml",
			"spark.kubernetes.driver.annotation.prometheus.io/scrape": "true",
			"spark.kubernetes.driver.annotation.prometheus.io/port":   "8091",
			"spark.kubernetes.driver.annotation.prometheus.io/path":   "/metrics",
		},
	}, {
		name: "python version",
		mutate: func(a *v1beta2.SparkApplication) {
			a.Spec.Type = v1beta2.SparkApplicationTypePython
			a.Spec.PythonVersion = ptr("3")
		},
		prefixes: []string{"spark.kubernetes.pyspark."},
		want:     map[string]string{"spark.kubernetes.pyspark.pythonVersion": "3"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := baseApp()
			tt.mutate(app)
			before := app.DeepCopy()
			args, err := BuildArgs(app, testAttempt, Options{MasterURL: "https://api"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, withPrefixes(confOf(args), tt.prefixes...)); diff != "" {
				t.Errorf("conf (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, app); diff != "" {
				t.Errorf("BuildArgs modified the application (-before +after):\n%s", diff)
			}
		})
	}
}

func TestBuildArgsDepsAndApplication(t *testing.T) {
	app := baseApp()
	app.Spec.Type = v1beta2.SparkApplicationTypePython
	app.Spec.MainClass = nil
	app.Spec.MainApplicationFile = "local:///opt/app/main.py"
	app.Spec.Arguments = []string{"--in", "s3a://b/x"}
	app.Spec.ProxyUser = ptr("alice")
	app.Spec.Deps = v1beta2.Dependencies{
		Jars: []string{"a.jar", "b.jar"}, Files: []string{"f"}, PyFiles: []string{"p.zip"},
		Packages: []string{"g:a:1"}, ExcludePackages: []string{"g:x"}, Repositories: []string{"https://repo"}, Archives: []string{"env.tgz#env"},
	}
	args, err := BuildArgs(app, testAttempt, Options{MasterURL: "k8s://https://api"})
	if err != nil {
		t.Fatal(err)
	}
	wantHead := []string{
		"--master", "k8s://https://api", "--deploy-mode", "cluster", "--name", "pi", "--proxy-user", "alice",
		"--jars", "a.jar,b.jar", "--files", "f", "--py-files", "p.zip", "--packages", "g:a:1",
		"--exclude-packages", "g:x", "--repositories", "https://repo", "--archives", "env.tgz#env",
	}
	if diff := cmp.Diff(wantHead, args[:len(wantHead)]); diff != "" {
		t.Errorf("leading options (-want +got):\n%s", diff)
	}
	wantTail := []string{"local:///opt/app/main.py", "--in", "s3a://b/x"}
	if diff := cmp.Diff(wantTail, args[len(args)-3:]); diff != "" {
		t.Errorf("application and arguments (-want +got):\n%s", diff)
	}
}

func TestBuildArgsDeterministic(t *testing.T) {
	app := baseApp()
	app.Labels = map[string]string{}
	app.Spec.SparkConf = map[string]string{}
	for _, k := range strings.Split("a b c d e f g h i j k l m n o p", " ") {
		app.Labels[k] = k
		app.Spec.SparkConf["spark.x."+k] = k
	}
	first, err := BuildArgs(app, testAttempt, Options{MasterURL: "https://api"})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, err := BuildArgs(app, testAttempt, Options{MasterURL: "https://api"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, again); diff != "" {
			t.Fatalf("BuildArgs is not deterministic (-first +again):\n%s", diff)
		}
	}
}

func TestBuildArgsErrors(t *testing.T) {
	tests := []struct {
		name    string
		app     func() *v1beta2.SparkApplication
		attempt submission.Attempt
		master  string
		want    string
	}{
		{name: "nil application", app: func() *v1beta2.SparkApplication { return nil }, want: "no SparkApplication"},
		{name: "no master", app: baseApp, want: "master URL"},
		{name: "no submission ID", app: baseApp, attempt: submission.Attempt{DriverPodName: "d"}, master: "https://api", want: "submission ID"},
		{name: "client mode", app: func() *v1beta2.SparkApplication {
			a := baseApp()
			a.Spec.Mode = v1beta2.DeployModeClient
			return a
		}, want: `spec.mode "client"`},
		{name: "no main file", app: func() *v1beta2.SparkApplication {
			a := baseApp()
			a.Spec.MainApplicationFile = ""
			return a
		}, want: "mainApplicationFile"},
		{name: "volume without a source", app: func() *v1beta2.SparkApplication {
			a := baseApp()
			a.Spec.Volumes = []corev1.Volume{{Name: "v"}}
			a.Spec.Driver.VolumeMounts = []corev1.VolumeMount{{Name: "v", MountPath: "/v"}}
			return a
		}, want: "unknown volume type"},
		{name: "mount of an undeclared volume", app: func() *v1beta2.SparkApplication {
			a := baseApp()
			a.Spec.Executor.VolumeMounts = []corev1.VolumeMount{{Name: "ghost", MountPath: "/g"}}
			return a
		}, want: `volume "ghost" is not declared`},
		{name: "bad memory overhead factor", app: func() *v1beta2.SparkApplication {
			a := baseApp()
			a.Spec.MemoryOverheadFactor = ptr("ten percent")
			return a
		}, want: "memoryOverheadFactor"},
		{name: "unknown secret type", app: func() *v1beta2.SparkApplication {
			a := baseApp()
			a.Spec.Driver.Secrets = []v1beta2.SecretInfo{{Name: "s", Path: "/s", Type: "Kerberos"}}
			return a
		}, want: `secretType: unknown type "Kerberos"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			attempt := tt.attempt
			if attempt.SubmissionID == "" && attempt.DriverPodName == "" {
				attempt = testAttempt
			}
			master := tt.master
			if master == "" && tt.name != "no master" {
				master = "https://api"
			}
			_, err := BuildArgs(tt.app(), attempt, Options{MasterURL: master})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("BuildArgs error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name, output, want string
	}{{
		name: "exception with cause and stack",
		output: `WARN org.apache.hadoop.util.NativeCodeLoader: Unable to load native-hadoop library
Exception in thread "main" io.fabric8.kubernetes.client.KubernetesClientException: Failure executing: POST at: https://x/api/v1/namespaces/ns/pods. Message: pods "p" is forbidden. Received status: Status(apiVersion=v1, code=403)
	at io.fabric8.kubernetes.client.dsl.internal.OperationSupport.requestFailure(OperationSupport.java:642)
	at org.apache.spark.deploy.SparkSubmit.main(SparkSubmit.scala)
Caused by: java.net.ConnectException: Connection refused
	... 12 more
`,
		want: `io.fabric8.kubernetes.client.KubernetesClientException: Failure executing: POST at: https://x/api/v1/namespaces/ns/pods. Message: pods "p" is forbidden. | java.net.ConnectException: Connection refused`,
	}, {
		name: "spark-submit's own argument error",
		output: `Error: Master must either be yarn or start with spark, k8s, or local
Run with --help for usage help or --verbose for debug output
`,
		want: "Error: Master must either be yarn or start with spark, k8s, or local",
	}, {
		name:   "nothing recognisable: the last lines",
		output: "one\ntwo\n\nthree\n",
		want:   "one | two | three",
	}, {
		name:   "no output",
		output: "",
		want:   "no output",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Summarize(tt.output)); diff != "" {
				t.Errorf("Summarize (-want +got):\n%s", diff)
			}
		})
	}
}
func ptr[T any](v T) *T { return &v }
