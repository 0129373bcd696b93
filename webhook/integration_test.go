/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package webhook_test

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/submission/native"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
	"github.com/sparkop/spark-operator/webhook"
)

// testLabel marks the namespaces of one test; the webhook configurations select only those, so
// the shared cluster's other pods never reach a webhook these tests start and stop.
const testLabel = "sparkop-webhook-test"

func ptr[T any](v T) *T { return &v }

// env is a running webhook registered by URL for the test's namespaces.
type env struct {
	c     client.Client
	ns    string
	token string
	opts  webhook.Options
	stop  func()
}

// labelledNamespace makes a namespace the test's webhooks apply to.
func labelledNamespace(t *testing.T, c client.Client, token string) string {
	t.Helper()
	ns := cluster.Namespace(t, c, "webhook")
	obj := &corev1.Namespace{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: ns}, obj); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(obj.DeepCopy())
	if obj.Labels == nil {
		obj.Labels = map[string]string{}
	}
	obj.Labels[testLabel] = token
	if err := c.Patch(context.Background(), obj, patch); err != nil {
		t.Fatal(err)
	}
	return ns
}

// startWebhook runs a manager serving the webhooks on a free 127.0.0.1 port. The
// configurations it registers are deleted when the test ends.
func startWebhook(t *testing.T, modify func(*webhook.Options)) *env {
	t.Helper()
	c := cluster.Client(t)
	token := strconv.FormatInt(time.Now().UnixNano(), 36)
	ns := labelledNamespace(t, c, token)
	opts := webhook.Options{
		Host:              "127.0.0.1",
		Port:              cluster.FreePort(t),
		URLHost:           "localhost", // a DNS name: the certificates made name no IP address
		CertDir:           t.TempDir(),
		SecretName:        "webhook-certs",
		SecretNamespace:   ns,
		ConfigName:        "sparkop-webhook-test-" + token,
		FailurePolicy:     admissionregistrationv1.Fail,
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{testLabel: token}},
		TimeoutSeconds:    5,
	}
	if modify != nil {
		modify(&opts)
	}
	// Registered before anything exists, so that a failing setup cleans up too; it runs before
	// the namespace's own cleanup.
	t.Cleanup(func() {
		if err := webhook.DeleteConfigurations(context.Background(), c, opts); err != nil {
			t.Errorf("deleting webhook configurations: %v", err)
		}
	})
	e := &env{c: c, ns: ns, token: token, opts: opts}
	e.start(t)
	// e.stop as it is when the test ends: a restart replaces it.
	t.Cleanup(func() { e.stop() })
	return e
}

func (e *env) start(t *testing.T) {
	t.Helper()
	mgr, err := manager.New(cluster.Config(t), manager.Options{
		Scheme:                 cluster.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          webhook.NewServer(e.opts),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := webhook.Setup(ctx, mgr, e.opts); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	e.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}
	e.waitServing(t)
}

// waitServing waits until the server answers TLS and the API server calls the validating
// webhook for the test namespace.
func (e *env) waitServing(t *testing.T) {
	t.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(e.opts.Port))
	cluster.Eventually(t, 30*time.Second, "webhook server on "+addr, func() (bool, error) {
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return false, nil
		}
		conn.Close()
		return true, nil
	})
	cluster.Eventually(t, 30*time.Second, "API server to call the webhook", func() (bool, error) {
		app := testApp(e.ns, "probe")
		app.Spec.SparkConf = map[string]string{"spark.master": "local"}
		err := e.c.Create(context.Background(), app, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "spark.master"), nil
	})
}

// servedCert identifies the certificate the webhook serves by its SHA-256 (cert-controller
// gives every certificate the same serial number).
func (e *env) servedCert(t *testing.T) string {
	t.Helper()
	conn, err := tls.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(e.opts.Port)), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return fmt.Sprintf("%x", sha256.Sum256(conn.ConnectionState().PeerCertificates[0].Raw))
}

// testApp is a valid application that the operator, should one run against the shared
// cluster, leaves alone (it is suspended).
func testApp(ns, name string) *v1beta2.SparkApplication {
	return &v1beta2.SparkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1beta2.SparkApplicationSpec{
			Type:                v1beta2.SparkApplicationTypeScala,
			SparkVersion:        "3.5.3",
			Mode:                v1beta2.DeployModeCluster,
			Image:               ptr("spark:3.5.3"),
			MainClass:           ptr("org.apache.spark.examples.SparkPi"),
			MainApplicationFile: "local:///opt/spark/examples/jars/spark-examples.jar",
			Suspend:             ptr(true),
			Driver:              v1beta2.DriverSpec{SparkPodSpec: v1beta2.SparkPodSpec{Cores: ptr(int32(1)), Memory: ptr("512m")}},
			Executor:            v1beta2.ExecutorSpec{SparkPodSpec: v1beta2.SparkPodSpec{Cores: ptr(int32(1)), Memory: ptr("512m")}, Instances: ptr(int32(1))},
		},
	}
}

// customisedApp sets a customisation of every kind.
func customisedApp(ns string) *v1beta2.SparkApplication {
	app := testApp(ns, "custom")
	s := &app.Spec
	s.SparkConfigMap = ptr("spark-conf")
	s.HadoopConfigMap = ptr("hadoop-conf")
	s.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	s.Monitoring = &v1beta2.MonitoringSpec{ExposeExecutorMetrics: true, Prometheus: &v1beta2.PrometheusSpec{
		JmxExporterJar: "/prometheus/jmx.jar", Configuration: ptr("rules: []"),
	}}
	d := &s.Driver.SparkPodSpec
	d.Env = []corev1.EnvVar{{Name: "FROM_ENV", Value: "1"}}
	d.EnvVars = map[string]string{"FROM_ENVVARS": "2"}
	d.EnvSecretKeyRefs = map[string]v1beta2.NameKey{"FROM_SECRET": {Name: "creds", Key: "password"}}
	d.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "env-cm"}}}}
	d.ConfigMaps = []v1beta2.NamePath{{Name: "extra", Path: "/etc/extra"}}
	d.Secrets = []v1beta2.SecretInfo{{Name: "gcp", Path: "/mnt/gcp", Type: v1beta2.SecretTypeGCPServiceAccount}}
	d.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	d.GPU = &v1beta2.GPUSpec{Name: "nvidia.com/gpu", Quantity: 1}
	d.MemoryLimit = ptr("2Gi")
	d.SchedulerName = ptr("my-scheduler")
	d.NodeSelector = map[string]string{"disk": "ssd"}
	d.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}},
	}}}
	d.Tolerations = []corev1.Toleration{{Key: "spark", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	d.PodSecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr(int64(185))}
	d.SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr(false)}
	d.HostAliases = []corev1.HostAlias{{IP: "10.0.0.9", Hostnames: []string{"metastore"}}}
	d.DNSConfig = &corev1.PodDNSConfig{Searches: []string{"example.com"}}
	d.Sidecars = []corev1.Container{{Name: "log-shipper", Image: "busybox", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/logs"}}}}
	d.InitContainers = []corev1.Container{{Name: "setup", Image: "busybox"}}
	d.TerminationGracePeriodSeconds = ptr(int64(7))
	d.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sleep", "1"}}}}
	d.ShareProcessNamespace = ptr(true)
	d.Ports = []v1beta2.Port{{Name: "extra", ContainerPort: 9999, Protocol: corev1.ProtocolTCP}}

	e := &s.Executor.SparkPodSpec
	e.Env = []corev1.EnvVar{{Name: "EXEC_ENV", Value: "x"}}
	e.ConfigMaps = []v1beta2.NamePath{{Name: "extra", Path: "/etc/extra"}}
	e.HostNetwork = ptr(true)
	e.Tolerations = d.Tolerations
	return app
}

// bareDriver is a driver pod as spark-submit creates it when given no pod template.
func bareDriver(app *v1beta2.SparkApplication) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-driver", Namespace: app.Namespace, Labels: map[string]string{
			v1beta2.SparkRoleLabel:          v1beta2.SparkRoleDriver,
			v1beta2.SparkAppSelectorLabel:   "spark-0123",
			v1beta2.LabelAppName:            app.Name,
			v1beta2.LabelLaunchedByOperator: "true",
		}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: v1beta2.SparkDriverContainerName, Image: "spark:3.5.3", Args: []string{"driver"},
				Env:          []corev1.EnvVar{{Name: "SPARK_USER", Value: "spark"}, {Name: "SPARK_CONF_DIR", Value: "/opt/spark/conf"}},
				Ports:        []corev1.ContainerPort{{Name: "driver-rpc-port", ContainerPort: 7078, Protocol: corev1.ProtocolTCP}},
				VolumeMounts: []corev1.VolumeMount{{Name: "spark-conf-volume-driver", MountPath: "/opt/spark/conf"}},
			}},
			Volumes: []corev1.Volume{{Name: "spark-conf-volume-driver", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "spark-drv-conf-map"},
			}}}},
		},
	}
}

// summary is the part of a pod the webhook customises, in comparable form.
type summary struct {
	Owners                []string
	Volumes               []string
	Mounts                []string
	Env                   []string
	EnvFrom               int
	Containers            []string
	InitContainers        []string
	Ports                 []string
	Limits                map[string]string
	NodeSelector          map[string]string
	Tolerations           []string
	SchedulerName         string
	HostNetwork           bool
	DNSPolicy             corev1.DNSPolicy
	HostAliases           []string
	DNSSearches           []string
	GracePeriod           int64
	ShareProcessNamespace bool
	RunAsUser             int64
	PrivilegeEscalation   *bool
	PreStop               bool
	Affinity              bool
}

func summarise(p *corev1.Pod, container string) summary {
	var s summary
	for _, r := range p.OwnerReferences {
		s.Owners = append(s.Owners, r.Kind+"/"+r.Name)
	}
	for _, v := range p.Spec.Volumes {
		if !strings.HasPrefix(v.Name, "kube-api-access-") {
			s.Volumes = append(s.Volumes, v.Name)
		}
	}
	for _, c := range p.Spec.Containers {
		s.Containers = append(s.Containers, c.Name)
		if c.Name != container {
			continue
		}
		for _, m := range c.VolumeMounts {
			if !strings.HasPrefix(m.Name, "kube-api-access-") {
				s.Mounts = append(s.Mounts, m.Name+":"+m.MountPath)
			}
		}
		for _, e := range c.Env {
			switch {
			case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
				s.Env = append(s.Env, e.Name+"<-"+e.ValueFrom.SecretKeyRef.Name+"/"+e.ValueFrom.SecretKeyRef.Key)
			default:
				s.Env = append(s.Env, e.Name+"="+e.Value)
			}
		}
		s.EnvFrom = len(c.EnvFrom)
		for _, port := range c.Ports {
			s.Ports = append(s.Ports, fmt.Sprintf("%s:%d", port.Name, port.ContainerPort))
		}
		if len(c.Resources.Limits) > 0 {
			s.Limits = map[string]string{}
			for k, v := range c.Resources.Limits {
				s.Limits[string(k)] = v.String()
			}
		}
		if c.SecurityContext != nil {
			s.PrivilegeEscalation = c.SecurityContext.AllowPrivilegeEscalation
		}
		s.PreStop = c.Lifecycle != nil && c.Lifecycle.PreStop != nil
	}
	for _, c := range p.Spec.InitContainers {
		s.InitContainers = append(s.InitContainers, c.Name)
	}
	s.NodeSelector = p.Spec.NodeSelector
	for _, tol := range p.Spec.Tolerations {
		if tol.Key == "spark" {
			s.Tolerations = append(s.Tolerations, tol.Key)
		}
	}
	s.SchedulerName = p.Spec.SchedulerName
	s.HostNetwork, s.DNSPolicy = p.Spec.HostNetwork, p.Spec.DNSPolicy
	for _, a := range p.Spec.HostAliases {
		s.HostAliases = append(s.HostAliases, a.IP+"="+strings.Join(a.Hostnames, ","))
	}
	if p.Spec.DNSConfig != nil {
		s.DNSSearches = p.Spec.DNSConfig.Searches
	}
	if p.Spec.TerminationGracePeriodSeconds != nil {
		s.GracePeriod = *p.Spec.TerminationGracePeriodSeconds
	}
	s.ShareProcessNamespace = p.Spec.ShareProcessNamespace != nil && *p.Spec.ShareProcessNamespace
	if p.Spec.SecurityContext != nil && p.Spec.SecurityContext.RunAsUser != nil {
		s.RunAsUser = *p.Spec.SecurityContext.RunAsUser
	}
	s.Affinity = p.Spec.Affinity != nil
	sort.Strings(s.Volumes)
	return s
}

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
		e.stop()
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

func TestFailurePolicy(t *testing.T) {
	e := startWebhook(t, nil)
	ctx := context.Background()
	app := testApp(e.ns, "app")
	if err := e.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	e.stop()

	// Fail: the operator's pods are refused while the webhook is down, other pods are not.
	pod := bareDriver(app)
	err := e.c.Create(ctx, pod)
	if err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Fatalf("with the webhook down and policy Fail: got %v, want a refusal", err)
	}
	other := bareDriver(app)
	other.Name = "other"
	delete(other.Labels, v1beta2.LabelLaunchedByOperator)
	if err := e.c.Create(ctx, other); err != nil {
		t.Fatalf("a pod the webhook does not select was refused: %v", err)
	}

	// Ignore: they go through unchanged.
	opts := e.opts
	opts.FailurePolicy = admissionregistrationv1.Ignore
	have := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := e.c.Get(ctx, client.ObjectKey{Name: opts.ConfigName}, have); err != nil {
		t.Fatal(err)
	}
	if err := webhook.ApplyConfigurations(ctx, e.c, opts, have.Webhooks[0].ClientConfig.CABundle); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 30*time.Second, "pod creation with policy Ignore", func() (bool, error) {
		err := e.c.Create(ctx, bareDriver(app))
		if err != nil && strings.Contains(err.Error(), "failed calling webhook") {
			return false, nil // the API server has not seen the new policy yet
		}
		return true, err
	})
}

// TestCertificateRotation: serving certificates are renewed from the same CA with requests
// succeeding throughout; a CA about to expire is replaced, and the new one is injected into
// the configurations and signs what is served.
func TestCertificateRotation(t *testing.T) {
	e := startWebhook(t, func(o *webhook.Options) {
		o.CertValidity = 9 * time.Second
		o.CAValidity = 30 * time.Second
		o.CertCheckInterval = 200 * time.Millisecond
	})
	ctx := context.Background()
	mwc := func() string {
		have := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := e.c.Get(ctx, client.ObjectKey{Name: e.opts.ConfigName}, have); err != nil {
			t.Fatal(err)
		}
		return string(have.Webhooks[0].ClientConfig.CABundle)
	}
	refused := func() error {
		a := testApp(e.ns, "probe")
		a.Spec.SparkConf = map[string]string{"spark.master": "local"}
		err := e.c.Create(ctx, a, client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "spec.sparkConf[spark.master]") {
			return errors.Join(err, errors.New("want the validator's refusal"))
		}
		return nil
	}
	firstBundle := mwc()
	serials := map[string]bool{e.servedCert(t): true}
	requests := 0
	// Each request is refused by the validator, not by a TLS failure, while the CA stays.
	cluster.Eventually(t, 60*time.Second, "two serving certificate renewals", func() (bool, error) {
		requests++
		if err := refused(); err != nil && mwc() == firstBundle {
			return false, fmt.Errorf("request %d during renewal: %w", requests, err)
		}
		serials[e.servedCert(t)] = true
		return len(serials) >= 3, nil
	})
	t.Logf("%d serving certificates over %d requests", len(serials), requests)
	// The API servers learn the new CA a moment after it is served (see docs/webhook.md).
	cluster.Eventually(t, 60*time.Second, "a new CA injected and trusted", func() (bool, error) {
		return mwc() != firstBundle && refused() == nil, nil
	})
}

// TestReplicasShareTheSecret: a second replica adopts the certificates in the Secret, and both
// serve each renewal, whichever replica made it.
func TestReplicasShareTheSecret(t *testing.T) {
	e := startWebhook(t, func(o *webhook.Options) {
		o.CertValidity = 9 * time.Second
		o.CertCheckInterval = 200 * time.Millisecond
	})
	first := e.servedCert(t)
	second := &env{c: e.c, ns: e.ns, token: e.token, opts: e.opts}
	second.opts.Port, second.opts.CertDir = cluster.FreePort(t), t.TempDir()
	second.start(t)
	t.Cleanup(second.stop)
	cluster.Eventually(t, 60*time.Second, "both replicas serving the same renewed certificate", func() (bool, error) {
		a, b := e.servedCert(t), second.servedCert(t)
		return a == b && a != first, nil
	})
}

// TestConfigurationsKept: a changed configuration is put back at once, not at the next
// certificate renewal; a deleted one (an uninstall) is not.
func TestConfigurationsKept(t *testing.T) {
	e := startWebhook(t, nil)
	ctx := context.Background()
	key := client.ObjectKey{Name: e.opts.ConfigName}
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := e.c.Get(ctx, key, mwc); err != nil {
		t.Fatal(err)
	}
	want := string(mwc.Webhooks[0].ClientConfig.CABundle)
	mwc.Webhooks[0].ClientConfig.CABundle = []byte("stale")
	if err := e.c.Update(ctx, mwc); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Delete(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e.opts.ConfigName}}); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 30*time.Second, "the CA bundle put back", func() (bool, error) {
		m := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := e.c.Get(ctx, key, m); err != nil {
			return false, err
		}
		return string(m.Webhooks[0].ClientConfig.CABundle) == want, nil
	})
	// The reconcile that restored the bundle came after the deletion; it did not recreate.
	err := e.c.Get(ctx, key, &admissionregistrationv1.ValidatingWebhookConfiguration{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("deleted ValidatingWebhookConfiguration: got %v, want it to stay deleted", err)
	}
}

// TestExternalCertificates: with CertProviderExternal the webhook serves the certificate it
// finds in CertDir, reloads it when the provider replaces it, and writes neither a Secret nor
// the configurations; here the test plays cert-manager (test/chart runs the real one).
func TestExternalCertificates(t *testing.T) {
	c := cluster.Client(t)
	ctx := context.Background()
	provide := func(o webhook.Options) {
		t.Helper()
		maker := &rotator.CertRotator{CAName: "test-ca", DNSName: o.Hosts()[0], ExtKeyUsages: &[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		now := time.Now()
		ca, err := maker.CreateCACert(now.Add(-time.Hour), now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		crt, key, err := maker.CreateCertPEM(ca, now.Add(-time.Hour), now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(os.WriteFile(filepath.Join(o.CertDir, "tls.key"), key, 0o600),
			os.WriteFile(filepath.Join(o.CertDir, "tls.crt"), crt, 0o600)); err != nil {
			t.Fatal(err)
		}
		if err := webhook.ApplyConfigurations(ctx, c, o, ca.CertPEM); err != nil {
			t.Fatal(err)
		}
	}

	missing := webhook.Options{CertProvider: webhook.CertProviderExternal, CertDir: t.TempDir(), Port: cluster.FreePort(t)}
	mgr, err := manager.New(cluster.Config(t), manager.Options{
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0", WebhookServer: webhook.NewServer(missing),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := webhook.Setup(ctx, mgr, missing); err == nil || !strings.Contains(err.Error(), "has not provided a certificate") {
		t.Fatalf("Setup without a certificate: %v, want a clear error", err)
	}

	e := startWebhook(t, func(o *webhook.Options) {
		o.CertProvider = webhook.CertProviderExternal
		provide(*o)
	})
	first := e.servedCert(t)
	secrets := &corev1.SecretList{}
	if err := c.List(ctx, secrets, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 0 {
		t.Errorf("the webhook wrote Secrets with an external certificate provider: %d", len(secrets.Items))
	}

	provide(e.opts) // a renewal with a new CA, as cert-manager and its CA injector do it
	cluster.Eventually(t, 30*time.Second, "the renewed certificate served", func() (bool, error) {
		return e.servedCert(t) != first, nil
	})
	e.waitServing(t)
}

// TestDriverPodNameClash: an application naming as its driver pod one that another
// application's driver has, or that another application names, is refused at admission with
// the application holding the name; so is an update to such a name.
func TestDriverPodNameClash(t *testing.T) {
	e := startWebhook(t, nil)
	ctx := context.Background()
	c := e.c
	first := testApp(e.ns, "first") // its driver pod: first-driver
	if err := c.Create(ctx, first); err != nil {
		t.Fatal(err)
	}
	refused := func(app *v1beta2.SparkApplication, want string) func() (bool, error) {
		return func() (bool, error) {
			err := c.Create(ctx, app.DeepCopy(), client.DryRunAll)
			return err != nil && strings.Contains(err.Error(), want), nil
		}
	}

	second := testApp(e.ns, "second")
	second.Spec.Driver.PodName = ptr("first-driver")
	want := `spec.driver.podName: Invalid value: "first-driver": driver pod name first-driver is already the driver pod name of SparkApplication first`
	// The webhook reads the other applications from its cache, which may lag the creation.
	cluster.Eventually(t, 10*time.Second, "the clash with another application's name refused", refused(second, want))
	if err := c.Create(ctx, second); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want refusal containing %q", err, want)
	}

	pod := bareDriver(testApp(e.ns, "someone"))
	pod.Name = "taken"
	delete(pod.Labels, v1beta2.LabelLaunchedByOperator) // as if created before the webhook ran
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	third := testApp(e.ns, "third")
	third.Spec.Driver.PodName = ptr("taken")
	want = `driver pod name taken is taken: pod ` + e.ns + `/taken is the driver of SparkApplication someone`
	// The webhook reads the pod through the API server's watch cache, which may lag the creation.
	cluster.Eventually(t, 10*time.Second, "the name of an existing pod refused", refused(third, want))
	if err := c.Create(ctx, third); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want refusal containing %q", err, want)
	}
	taken := testApp(e.ns, "other")
	taken.Spec.Driver.PodName = ptr("free-driver")
	if err := c.Create(ctx, taken); err != nil {
		t.Fatalf("an application naming a free driver pod was refused: %v", err)
	}

	// Updates: one keeping its name passes; one taking another's is refused.
	first.Spec.Arguments = []string{"10"}
	if err := c.Update(ctx, first); err != nil {
		t.Fatalf("update keeping the driver pod name refused: %v", err)
	}
	taken.Spec.Driver.PodName = ptr("first-driver")
	want = "driver pod name first-driver is already the driver pod name of SparkApplication first"
	if err := c.Update(ctx, taken); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("update to a held name: got %v, want refusal containing %q", err, want)
	}
}
