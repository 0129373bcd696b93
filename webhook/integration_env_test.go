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
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
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
	stop  func(testing.TB)
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
	opts, ns, token := testOptions(t, c, modify)
	e := &env{c: c, ns: ns, token: token, opts: opts}
	e.start(t)
	// e.stop as it is when the test ends: a restart replaces it.
	t.Cleanup(func() { e.stop(t) })
	return e
}

// testOptions are the options of a webhook served on a free 127.0.0.1 port for a namespace of
// the test's own, that namespace and the token its label carries. The configurations
// registered with them are deleted when the test ends.
func testOptions(t *testing.T, c client.Client, modify func(*webhook.Options)) (webhook.Options, string, string) {
	t.Helper()
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
	return opts, ns, token
}

// newManager is a manager for the webhook of opts, on cfg, that waits however long a loaded
// machine takes to stop it (cluster.Stopped bounds the wait).
func newManager(t *testing.T, cfg *rest.Config, opts webhook.Options) manager.Manager {
	t.Helper()
	noGraceTimeout := time.Duration(-1)
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:                  cluster.Scheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		WebhookServer:           webhook.NewServer(opts),
		GracefulShutdownTimeout: &noGraceTimeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

func (e *env) start(t *testing.T) {
	t.Helper()
	mgr := newManager(t, cluster.Config(t), e.opts)
	ctx, cancel := context.WithCancel(context.Background())
	if err := webhook.Setup(ctx, mgr, e.opts); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	// stop reports to the test running when it is called (a restart's start may be a subtest's).
	e.stop = func(t testing.TB) {
		if stopped {
			return
		}
		stopped = true
		cancel()
		cluster.Stopped(t, done, "webhook manager")
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
