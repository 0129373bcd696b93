/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package sparkconnect tests SparkConnects end to end: the operator as its own process, with
// its webhooks, against the local control plane, where kwok runs the server and executor pods.
package sparkconnect

import (
	"cmp"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
)

const wait = 60 * time.Second

type env struct {
	t  *testing.T
	c  client.Client
	ns string
}

// setUp starts the operator, with its webhooks and any extra arguments, for a namespace of the
// test's own.
func setUp(t *testing.T, prefix string, extraArgs ...string) *env {
	t.Helper()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, prefix)
	configName := "sparkconnect-" + ns
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configName}})
		_ = c.Delete(context.Background(), &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configName}})
	})
	return start(t, c, ns, append([]string{
		"--enable-webhook", "--webhook-url-host", "localhost", "--webhook-port", strconv.Itoa(cluster.FreePort(t)),
		"--webhook-secret-namespace", ns, "--webhook-config-name", configName, "--webhook-cert-dir", t.TempDir()},
		extraArgs...)...)
}

// setUpWithoutWebhook starts the operator alone, as when the webhook is not installed.
func setUpWithoutWebhook(t *testing.T, prefix string) *env {
	t.Helper()
	c := cluster.Client(t)
	return start(t, c, cluster.Namespace(t, c, prefix))
}

func start(t *testing.T, c client.Client, ns string, args ...string) *env {
	t.Helper()
	cluster.StartOperator(t, "operator", append([]string{"--kubeconfig", cluster.Kubeconfig(t), "--namespaces", ns,
		"-logtostderr", "-v=1"}, args...)...)
	// The examples' servers run as this service account, which the chart creates.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "spark-operator-spark", Namespace: ns}}
	if err := c.Create(context.Background(), sa); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, c: c, ns: ns}
}

func (e *env) get(name string) *v1alpha1.SparkConnect {
	e.t.Helper()
	conn := &v1alpha1.SparkConnect{}
	if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: name}, conn); err != nil {
		e.t.Fatal(err)
	}
	return conn
}

// waitState waits until the SparkConnect is in state and returns it.
func (e *env) waitState(name string, state v1alpha1.SparkConnectState) *v1alpha1.SparkConnect {
	e.t.Helper()
	var conn *v1alpha1.SparkConnect
	cluster.Eventually(e.t, wait, "SparkConnect "+name+" "+string(state), func() (bool, error) {
		conn = e.get(name)
		return conn.Status.State == state, nil
	})
	return conn
}

// update changes the spec of the SparkConnect as it is stored (the operator writes its status
// meanwhile).
func (e *env) update(name string, change func(*v1alpha1.SparkConnect)) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		conn := e.get(name)
		change(conn)
		return e.c.Update(context.Background(), conn)
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) pod(name string) *corev1.Pod {
	e.t.Helper()
	pod := &corev1.Pod{}
	if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: name}, pod); err != nil {
		e.t.Fatal(err)
	}
	return pod
}

func (e *env) gone(obj client.Object) {
	e.t.Helper()
	cluster.Eventually(e.t, wait, "deletion of "+obj.GetName(), func() (bool, error) {
		err := e.c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// examples are the SparkConnect manifests a user would apply: ours, and the Kubeflow
// operator's when its reference material is beside the repository (../shared or SPARKOP_SHARED).
func examples(t *testing.T) map[string]string {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"ours": filepath.Join(root, "examples", "spark-connect.yaml")}
	dir := os.Getenv("SPARKOP_SHARED")
	if dir == "" {
		dir = filepath.Join(root, "..", "shared")
	}
	if ref := filepath.Join(dir, "reference", "sparkconnect", "spark-connect.yaml"); fileExists(ref) {
		files["kubeflow"] = ref
	}
	return files
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestExamples applies each example unchanged (strict field validation) and follows it
// through its life: Ready with its Service, executors counted and customised by the webhook,
// the server dying and being replaced, and deletion taking everything with it.
func TestExamples(t *testing.T) {
	for set, file := range examples(t) {
		t.Run(set, func(t *testing.T) { testExample(t, file) })
	}
}

func testExample(t *testing.T, file string) {
	e := setUp(t, "connect-example")
	ctx := context.Background()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		t.Fatal(err)
	}
	obj.SetNamespace(e.ns)
	dyn := dynamic.NewForConfigOrDie(cluster.Config(t))
	if _, err := dyn.Resource(v1alpha1.GroupVersion.WithResource("sparkconnects")).Namespace(e.ns).Create(ctx, obj,
		metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict}); err != nil {
		t.Fatalf("the API server refused %s: %v", file, err)
	}
	name := obj.GetName()
	// What the example asks for, to check against what was made.
	asked := &v1alpha1.SparkConnect{}
	if err := yaml.Unmarshal(data, asked); err != nil {
		t.Fatal(err)
	}
	serverTmpl, execTmpl := asked.Spec.Server.Template, asked.Spec.Executor.Template
	if serverTmpl == nil || execTmpl == nil {
		t.Fatalf("%s: the test expects server and executor templates", file)
	}

	conn := e.waitState(name, v1alpha1.SparkConnectStateReady)
	server := e.pod(conn.ServerPodName())
	st := conn.Status
	if st.Server.PodName != server.Name || st.Server.PodIP == "" || st.Server.PodIP != server.Status.PodIP ||
		st.Server.ServiceName != name+"-server" || st.StartTime.IsZero() || st.LastUpdateTime.IsZero() {
		t.Errorf("status.server, startTime or lastUpdateTime incomplete: %+v", st)
	}
	cond := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionServerPodReady)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != v1alpha1.ReasonServerPodReady {
		t.Errorf("ServerPodReady condition = %+v", cond)
	}

	// The server pod: the template's labels and settings, the operator's labels and owner.
	want := map[string]string{"spark-role": "connect-server", "spark-version": asked.Spec.SparkVersion,
		v1alpha1.LabelConnectName: name, v1beta2.LabelLaunchedByOperator: "true"}
	maps.Copy(want, serverTmpl.Labels)
	for k, v := range want {
		if server.Labels[k] != v {
			t.Errorf("server label %s = %q, want %q", k, server.Labels[k], v)
		}
	}
	for k, v := range serverTmpl.Annotations {
		if server.Annotations[k] != v {
			t.Errorf("server annotation %s = %q, want %q", k, server.Annotations[k], v)
		}
	}
	wantSA := cmp.Or(serverTmpl.Spec.ServiceAccountName, serverTmpl.Spec.DeprecatedServiceAccount)
	if server.Spec.ServiceAccountName != wantSA || !metav1.IsControlledBy(server, conn) {
		t.Errorf("server pod: service account %q (want %q), owners %+v", server.Spec.ServiceAccountName, wantSA, server.OwnerReferences)
	}
	ctr := server.Spec.Containers[0]
	if ctr.Image != "docker.io/apache/spark:4.0.4" || !strings.Contains(ctr.Command[2], "start-connect-server.sh") ||
		!strings.Contains(ctr.Command[2], "'spark.kubernetes.executor.podNamePrefix="+name+"'") {
		t.Errorf("server container: image %s, command %q", ctr.Image, ctr.Command)
	}

	// The Service selects the server and exposes the Connect port.
	svc := &corev1.Service{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: st.Server.ServiceName}, svc); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == 15002 && p.TargetPort.IntValue() == 15002 }) ||
		!slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == 4040 }) {
		t.Errorf("Service ports = %+v, want 15002 and 4040", svc.Spec.Ports)
	}
	var selected corev1.PodList
	if err := e.c.List(ctx, &selected, client.InNamespace(e.ns), client.MatchingLabels(svc.Spec.Selector)); err != nil {
		t.Fatal(err)
	}
	if len(selected.Items) != 1 || selected.Items[0].Name != server.Name {
		t.Errorf("the Service selects %d pods, want the server only", len(selected.Items))
	}

	// Executors, made as the server would make them, are counted by state, and get the
	// executor template's settings from the webhook.
	execs, err := executors.Create(ctx, e.c, server, 2, executors.Options{PodNamePrefix: name})
	if err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, wait, "2 running executors in status", func() (bool, error) {
		return e.get(name).Status.Executors["running"] == 2, nil
	})
	ex := e.pod(name + "-exec-1")
	if want := execTmpl.Spec.SecurityContext; want != nil && !equality.Semantic.DeepEqual(ex.Spec.SecurityContext, want) {
		t.Errorf("executor pod security context = %+v, want the executor template's %+v", ex.Spec.SecurityContext, want)
	}
	if want := execTmpl.Spec.Containers[0].SecurityContext; want != nil && !equality.Semantic.DeepEqual(ex.Spec.Containers[0].SecurityContext, want) {
		t.Errorf("executor container security context = %+v, want the executor template's %+v", ex.Spec.Containers[0].SecurityContext, want)
	}
	if ex.Spec.SecurityContext == nil && ex.Spec.Containers[0].SecurityContext == nil {
		t.Error("the executor got no security context from the webhook")
	}
	if err := executors.Fail(ctx, e.c, execs[1], 137); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, wait, "1 running and 1 failed executor in status", func() (bool, error) {
		x := e.get(name).Status.Executors
		return x["running"] == 1 && x["failed"] == 1, nil
	})

	// The server dies: Failed, and the pod is kept for its logs.
	patch := client.MergeFrom(server.DeepCopy())
	server.Annotations = map[string]string{executors.AnnotationExitCode: "1"}
	if err := e.c.Patch(ctx, server, patch); err != nil {
		t.Fatal(err)
	}
	conn = e.waitState(name, v1alpha1.SparkConnectStateFailed)
	if cond := meta.FindStatusCondition(conn.Status.Conditions, v1alpha1.ConditionServerPodReady); cond.Reason != v1alpha1.ReasonServerPodFailed ||
		!strings.Contains(cond.Message, "delete pod "+server.Name) {
		t.Errorf("ServerPodReady after the server died = %+v", cond)
	}
	if e.pod(server.Name).UID != server.UID {
		t.Error("the dead server pod was replaced without being deleted")
	}

	// Deleting the dead server starts a new one; its executors go with the old one.
	if err := e.c.Delete(ctx, server); err != nil {
		t.Fatal(err)
	}
	conn = e.waitState(name, v1alpha1.SparkConnectStateReady)
	if e.pod(server.Name).UID == server.UID {
		t.Error("Ready with the old server pod")
	}
	cluster.Eventually(t, wait, "the old server's executors gone from status", func() (bool, error) {
		return len(e.get(name).Status.Executors) == 0, nil
	})

	// Deleting the SparkConnect removes the server and its Service.
	if err := e.c.Delete(ctx, conn); err != nil {
		t.Fatal(err)
	}
	e.gone(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: server.Name}})
	e.gone(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: svc.Name}})
	e.gone(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: conn.ExecutorTemplateConfigMapName()}})
}

// newConnect is a small SparkConnect of ours.
func newConnect(ns, name string) *v1alpha1.SparkConnect {
	return &v1alpha1.SparkConnect{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.SparkConnectSpec{
			SparkVersion: "4.0.4",
			Image:        ptr.To("docker.io/apache/spark:4.0.4"),
			Executor:     v1alpha1.ExecutorSpec{Instances: ptr.To(int32(1))},
		},
	}
}

// TestCustomisations: spec.server.service shapes the Service; the webhook gives executors the
// executor template's settings; a spec change reaches the executor template, not the running
// server.
func TestCustomisations(t *testing.T) {
	e := setUp(t, "connect-custom")
	ctx := context.Background()
	conn := newConnect(e.ns, "custom")
	conn.Spec.Server.Service = &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "connect-grpc", Annotations: map[string]string{"lb": "internal"}},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Name: "grpc", Port: 15002}}},
	}
	conn.Spec.Executor.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
		Tolerations:  []corev1.Toleration{{Key: "spark", Operator: corev1.TolerationOpExists}},
		Volumes:      []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		Containers: []corev1.Container{{
			Name:         v1beta2.SparkExecutorContainerName,
			Env:          []corev1.EnvVar{{Name: "TEAM", Value: "data"}},
			VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}},
		}},
	}}
	if err := e.c.Create(ctx, conn); err != nil {
		t.Fatal(err)
	}
	conn = e.waitState(conn.Name, v1alpha1.SparkConnectStateReady)
	if conn.Status.Server.ServiceName != "connect-grpc" {
		t.Errorf("status.server.serviceName = %q, want connect-grpc", conn.Status.Server.ServiceName)
	}
	svc := &corev1.Service{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "connect-grpc"}, svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Type != corev1.ServiceTypeNodePort || svc.Annotations["lb"] != "internal" || len(svc.Spec.Ports) != 1 ||
		svc.Spec.Selector[v1alpha1.LabelConnectName] != conn.Name {
		t.Errorf("Service = type %s, annotations %v, ports %+v, selector %v", svc.Spec.Type, svc.Annotations, svc.Spec.Ports, svc.Spec.Selector)
	}

	server := e.pod(conn.ServerPodName())
	execs, err := executors.Create(ctx, e.c, server, 1, executors.Options{PodNamePrefix: conn.Name})
	if err != nil {
		t.Fatal(err)
	}
	ex := e.pod(execs[0].Name)
	main := ex.Spec.Containers[0]
	if ex.Spec.NodeSelector["kubernetes.io/os"] != "linux" || len(ex.Spec.Tolerations) == 0 ||
		!slices.ContainsFunc(main.Env, func(v corev1.EnvVar) bool { return v.Name == "TEAM" && v.Value == "data" }) ||
		!slices.ContainsFunc(main.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "scratch" }) ||
		!slices.ContainsFunc(ex.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "scratch" }) {
		t.Errorf("executor lacks the executor template's settings: nodeSelector %v, tolerations %v, env %v, mounts %v",
			ex.Spec.NodeSelector, ex.Spec.Tolerations, main.Env, main.VolumeMounts)
	}

	// A spec change updates the executor template for the next server; the running server stays.
	e.update(conn.Name, func(c *v1alpha1.SparkConnect) { c.Spec.Executor.Template.Spec.NodeSelector["disk"] = "ssd" })
	cluster.Eventually(t, wait, "the executor template ConfigMap to follow the spec", func() (bool, error) {
		cm := &corev1.ConfigMap{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: conn.ExecutorTemplateConfigMapName()}, cm); err != nil {
			return false, err
		}
		return strings.Contains(cm.Data["executor-pod-template.yaml"], "disk: ssd"), nil
	})
	if e.pod(server.Name).UID != server.UID {
		t.Error("a spec change replaced the running server")
	}
}

// TestBadSpecs: what the API server refuses, with messages that name the problem, and what only
// the operator can find (no image), reported in status.
func TestBadSpecs(t *testing.T) {
	e := setUp(t, "connect-bad")
	ctx := context.Background()
	tests := []struct {
		name   string
		mutate func(*v1alpha1.SparkConnect)
		want   string
	}{
		{"no spark version", func(c *v1alpha1.SparkConnect) { c.Spec.SparkVersion = "" }, "spec.sparkVersion"},
		{"zero executor cores", func(c *v1alpha1.SparkConnect) { c.Spec.Executor.Cores = ptr.To(int32(0)) }, "spec.executor.cores"},
		{"negative instances", func(c *v1alpha1.SparkConnect) { c.Spec.Executor.Instances = ptr.To(int32(-1)) }, "spec.executor.instances"},
		{"server memory not a size", func(c *v1alpha1.SparkConnect) { c.Spec.Server.Memory = ptr.To("lots") }, "spec.server.memory"},
		{"name too long", func(c *v1alpha1.SparkConnect) { c.Name = strings.Repeat("a", 57) }, "no more than 56 characters"},
		{"name not a DNS-1035 label", func(c *v1alpha1.SparkConnect) { c.Name = "1st.session" }, "DNS-1035"},
		{"min above max executors", func(c *v1alpha1.SparkConnect) {
			c.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, MinExecutors: ptr.To(int32(3)), MaxExecutors: ptr.To(int32(1))}
		}, "minExecutors must not be greater than dynamicAllocation.maxExecutors"},
		{"bad Service name", func(c *v1alpha1.SparkConnect) {
			c.Spec.Server.Service = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "Not_A_Name"}}
		}, "server.service.metadata.name must be a DNS-1035 label"},
		// The webhook's: the API server cannot look inside the templates.
		{"no image", func(c *v1alpha1.SparkConnect) { c.Spec.Image = nil }, "spec.image: Required value: no image for the server"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := newConnect(e.ns, "bad-"+strconv.Itoa(i))
			tt.mutate(conn)
			err := e.c.Create(ctx, conn)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("create: err = %v, want a refusal naming %q", err, tt.want)
			}
		})
	}
}

// TestNoImageWithoutWebhook: without the webhook a SparkConnect with no image is stored; the
// controller reports it Failed, and fixing the spec starts the server.
func TestNoImageWithoutWebhook(t *testing.T) {
	e := setUpWithoutWebhook(t, "connect-noimage")
	ctx := context.Background()
	conn := newConnect(e.ns, "no-image")
	conn.Spec.Image = nil
	if err := e.c.Create(ctx, conn); err != nil {
		t.Fatal(err)
	}
	conn = e.waitState(conn.Name, v1alpha1.SparkConnectStateFailed)
	cond := meta.FindStatusCondition(conn.Status.Conditions, v1alpha1.ConditionServerPodReady)
	if cond == nil || cond.Reason != v1alpha1.ReasonInvalidSpec || !strings.Contains(cond.Message, "set spec.image") {
		t.Errorf("ServerPodReady = %+v, want InvalidSpec asking for spec.image", cond)
	}
	e.update(conn.Name, func(c *v1alpha1.SparkConnect) { c.Spec.Image = ptr.To("docker.io/apache/spark:4.0.4") })
	e.waitState(conn.Name, v1alpha1.SparkConnectStateReady)
}

// TestControllerOff: with --enable-spark-connect=false the operator leaves SparkConnects alone
// while it runs applications. The application reaching SUBMITTED bounds the wait: a SparkConnect
// created before it would have had its server by then.
func TestControllerOff(t *testing.T) {
	e := setUp(t, "connect-off", "--enable-spark-connect=false")
	ctx := context.Background()
	conn := newConnect(e.ns, "ignored")
	if err := e.c.Create(ctx, conn); err != nil {
		t.Fatal(err)
	}
	app := cluster.SparkPi(e.ns, "witness")
	if err := e.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, wait, "the application to be submitted", func() (bool, error) {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return false, err
		}
		return app.Status.AppState.State != v1beta2.ApplicationStateNew, nil
	})
	if got := e.get(conn.Name); got.Status.State != v1alpha1.SparkConnectStateNew || !got.Status.StartTime.IsZero() {
		t.Errorf("status written with the controller off: %+v", got.Status)
	}
	err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: conn.ServerPodName()}, &corev1.Pod{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("server pod with the controller off: err = %v, want not found", err)
	}
}

// TestServerReadiness: a ready server that stops being ready is NotReady, and Ready again when
// it recovers. The pod's Ready condition is set as a kubelet would set it on a failing probe.
func TestServerReadiness(t *testing.T) {
	e := setUpWithoutWebhook(t, "connect-ready")
	ctx := context.Background()
	conn := newConnect(e.ns, "flaky")
	if err := e.c.Create(ctx, conn); err != nil {
		t.Fatal(err)
	}
	e.waitState(conn.Name, v1alpha1.SparkConnectStateReady)
	setReady := func(status corev1.ConditionStatus) {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			pod := e.pod(conn.ServerPodName())
			for i := range pod.Status.Conditions {
				if pod.Status.Conditions[i].Type == corev1.PodReady || pod.Status.Conditions[i].Type == corev1.ContainersReady {
					pod.Status.Conditions[i].Status = status
				}
			}
			return e.c.Status().Update(ctx, pod)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	setReady(corev1.ConditionFalse)
	conn = e.waitState(conn.Name, v1alpha1.SparkConnectStateNotReady)
	if cond := meta.FindStatusCondition(conn.Status.Conditions, v1alpha1.ConditionServerPodReady); cond.Status != metav1.ConditionFalse ||
		cond.Reason != v1alpha1.ReasonServerPodNotReady {
		t.Errorf("ServerPodReady while not ready = %+v", cond)
	}
	setReady(corev1.ConditionTrue)
	e.waitState(conn.Name, v1alpha1.SparkConnectStateReady)
}
