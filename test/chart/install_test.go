/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package chart

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/executors"
)

// release is the chart installed in the local cluster, with one job namespace.
type release struct {
	name, namespace, jobNamespace string
	webhookPort                   int
	c                             client.Client
	cs                            kubernetes.Interface
	uninstalled                   bool
}

// install installs the chart as release name ("so-…", short enough for every derived name),
// for a job namespace of its own, with the extra settings set.
func install(t *testing.T, set ...string) *release {
	t.Helper()
	c := cluster.Client(t)
	r := &release{
		name:         "so-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36),
		namespace:    cluster.Namespace(t, c, "chart"),
		jobNamespace: cluster.Namespace(t, c, "chart-jobs"),
		webhookPort:  cluster.FreePort(t),
		c:            c,
		cs:           kubernetes.NewForConfigOrDie(cluster.Config(t)),
	}
	args := append([]string{"install", r.name, chartDir, "--kubeconfig", cluster.Kubeconfig(t), "--namespace", r.namespace},
		setFlags(append([]string{
			"fullnameOverride=" + r.name,
			"spark.jobNamespaces={" + r.jobNamespace + "}",
			"webhook.port=" + strconv.Itoa(r.webhookPort),
		}, set...))...)
	if out, err := helm(t, args...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Cleanup(func() { r.uninstall(t) })
	return r
}

func (r *release) uninstall(t *testing.T) {
	t.Helper()
	if r.uninstalled {
		return
	}
	r.uninstalled = true
	if out, err := helm(t, "uninstall", r.name, "--kubeconfig", cluster.Kubeconfig(t), "--namespace", r.namespace, "--wait"); err != nil {
		t.Errorf("%v\n%s", err, out)
	}
}

// routeServiceHere makes the chart's webhook Service reachable on this machine, as kube-proxy
// would in a cluster: the API server calls a Service's cluster IP, which here goes to the
// loopback interface, where the webhook process listens on the Service's port.
func (r *release) routeServiceHere(t *testing.T) {
	t.Helper()
	svc, err := r.cs.CoreV1().Services(r.namespace).Get(context.Background(), r.name+"-webhook", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ip := svc.Spec.ClusterIP + "/32"
	if out, err := exec.Command("ip", "addr", "add", ip, "dev", "lo").CombinedOutput(); err != nil {
		t.Fatalf("routing the webhook Service's cluster IP to loopback (needs root, as CI has): %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "addr", "del", ip, "dev", "lo").Run() })
}

// saKubeconfig writes a kubeconfig that authenticates as the service account, with a token of
// the API server's own: the process using it has the chart's RBAC, nothing more.
func (r *release) saKubeconfig(t *testing.T, namespace, sa string) string {
	t.Helper()
	tok, err := r.cs.CoreV1().ServiceAccounts(namespace).CreateToken(context.Background(), sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s/%s: %v", namespace, sa, err)
	}
	admin := cluster.Config(t)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: admin.CAData}
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["sa"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: sa}
	cfg.CurrentContext = "sa"
	path := filepath.Join(t.TempDir(), sa+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func (r *release) saClient(t *testing.T, namespace, sa string) client.Client {
	t.Helper()
	cfg, err := cluster.RESTConfig(r.saKubeconfig(t, namespace, sa))
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// run starts the operator with the arguments of the installed Deployment and as its service
// account. What differs from a pod: the kubeconfig stands for the in-cluster configuration,
// certDir for the mounted certificate volume, and the metrics and health ports are free ones.
func (r *release) run(t *testing.T, deployment, certDir string) *cluster.Operator {
	t.Helper()
	d, err := r.cs.AppsV1().Deployments(r.namespace).Get(context.Background(), deployment, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--kubeconfig", r.saKubeconfig(t, r.namespace, d.Spec.Template.Spec.ServiceAccountName)}
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		switch name, _, _ := strings.Cut(a, "="); name {
		case "--metrics-bind-address", "--health-probe-bind-address":
		case "--webhook-cert-dir":
			args = append(args, name+"="+certDir)
		default:
			args = append(args, a)
		}
	}
	return cluster.StartOperator(t, deployment, args...)
}

// app is a small application of the job namespace whose driver runs as the chart's driver
// service account and, simulated by kwok, ends after a few seconds.
func (r *release) app(name string) *v1beta2.SparkApplication {
	app := cluster.SparkPi(r.jobNamespace, name)
	driver := &app.Spec.Driver.SparkPodSpec
	driver.Annotations = map[string]string{executors.AnnotationRunSeconds: "4"}
	driver.Env = []corev1.EnvVar{{Name: "INSTALLED_BY", Value: "helm"}}
	driver.ServiceAccount = ptr.To(r.name + "-spark")
	return app
}

// requireValidatedThroughService waits until the API server reaches the validating webhook
// through the chart's Service and trusts its certificate: it refuses an application that sets
// spark.master with the webhook's message.
func (r *release) requireValidatedThroughService(t *testing.T) {
	t.Helper()
	var last error
	cluster.Eventually(t, 60*time.Second, "the API server to call the webhook through its Service", func() (bool, error) {
		a := r.app("refused")
		a.Spec.SparkConf = map[string]string{"spark.master": "local[2]"}
		last = r.c.Create(context.Background(), a, client.DryRunAll)
		return last != nil && strings.Contains(last.Error(), "spec.sparkConf[spark.master]"), nil
	})
	t.Logf("refused as expected: %v", last)
}

// requireMutatedThroughService creates a suspended application and a bare driver pod for it,
// as spark-submit would, and checks that the webhook added the application's env to the pod.
func (r *release) requireMutatedThroughService(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	app := r.app("suspended")
	app.Spec.Suspend = ptr.To(true)
	if err := r.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name + "-bare-driver", Labels: map[string]string{
			v1beta2.LabelLaunchedByOperator: "true", v1beta2.LabelAppName: app.Name, v1beta2.SparkRoleLabel: v1beta2.SparkRoleDriver,
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: v1beta2.SparkDriverContainerName, Image: "spark"}}},
	}
	if err := r.c.Create(ctx, pod); err != nil {
		t.Fatalf("creating a bare driver pod: %v", err)
	}
	for _, e := range pod.Spec.Containers[0].Env {
		if e.Name == "INSTALLED_BY" && e.Value == "helm" {
			return
		}
	}
	t.Errorf("the webhook did not add the application's env to a bare driver pod: %v", pod.Spec.Containers[0].Env)
}

// requireRunsToCompletion runs app: the controller submits it with the chart's RBAC, the driver
// (here the test, with the driver service account's token) starts an executor with the
// driver's RBAC, and the application completes.
func (r *release) requireRunsToCompletion(t *testing.T, app *v1beta2.SparkApplication) {
	t.Helper()
	ctx := context.Background()
	if err := r.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	driver := &corev1.Pod{}
	cluster.Eventually(t, 60*time.Second, "the driver pod", func() (bool, error) {
		err := r.c.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: app.DriverPodName()}, driver)
		return err == nil, client.IgnoreNotFound(err)
	})
	asDriver := r.saClient(t, app.Namespace, *app.Spec.Driver.ServiceAccount)
	if _, err := executors.Create(ctx, asDriver, driver, 1, executors.Options{Annotations: map[string]string{executors.AnnotationRunSeconds: "2"}}); err != nil {
		t.Fatalf("creating an executor with the driver's service account: %v", err)
	}
	r.requireCompleted(t, app)
}

// requireCompleted waits until app is COMPLETED, failing at once if it fails.
func (r *release) requireCompleted(t *testing.T, app *v1beta2.SparkApplication) {
	t.Helper()
	cluster.Eventually(t, 90*time.Second, "the application to complete", func() (bool, error) {
		got := &v1beta2.SparkApplication{}
		if err := r.c.Get(context.Background(), client.ObjectKeyFromObject(app), got); err != nil {
			return false, err
		}
		switch got.Status.AppState.State {
		case v1beta2.ApplicationStateCompleted:
			return true, nil
		case v1beta2.ApplicationStateFailed, v1beta2.ApplicationStateFailedSubmission:
			return false, fmt.Errorf("application %s: %s", got.Status.AppState.State, got.Status.AppState.ErrorMessage)
		}
		return false, nil
	})
}

// requireConfigurationsGone checks that uninstalling removed the webhook configurations, which
// would otherwise hold up every SparkApplication for a webhook that no longer exists.
func (r *release) requireConfigurationsGone(t *testing.T) {
	t.Helper()
	key := client.ObjectKey{Name: r.name + "-webhook"}
	for _, obj := range []client.Object{&admissionregistrationv1.MutatingWebhookConfiguration{}, &admissionregistrationv1.ValidatingWebhookConfiguration{}} {
		if err := r.c.Get(context.Background(), key, obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s after uninstall: %v", obj, key.Name, err)
		}
	}
}

// TestInstallWithOwnCertificates installs the chart with the webhook making its certificates,
// runs the controller and the webhook as their Deployments would, each with only its service
// account's rights, and runs an application through them.
func TestInstallWithOwnCertificates(t *testing.T) {
	r := install(t)
	r.routeServiceHere(t)
	controller := r.run(t, r.name+"-controller", "")
	webhook := r.run(t, r.name+"-webhook", t.TempDir())

	r.requireValidatedThroughService(t)
	r.requireMutatedThroughService(t)
	r.requireRunsToCompletion(t, r.app("pi"))
	if err := r.c.Get(context.Background(), client.ObjectKey{Namespace: r.namespace, Name: r.name + "-controller-lock"}, &coordinationv1.Lease{}); err != nil {
		t.Errorf("the controller's leader-election Lease: %v", err)
	}

	controller.Stop()
	webhook.Stop()
	r.uninstall(t)
	r.requireConfigurationsGone(t)
	err := r.c.Get(context.Background(), client.ObjectKey{Namespace: r.namespace, Name: r.name + "-webhook-certs"}, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the webhook's certificate Secret after uninstall: %v", err)
	}
}

// TestInstallWithCertManager installs the chart with certManager.enable against a real
// cert-manager (hack/local-cluster.sh cert-manager): its Certificate becomes the webhook's
// Secret, its CA injector fills the configurations' CA bundle, and the webhook, with no rights
// to either, serves the mounted certificate and picks up a renewed one.
func TestInstallWithCertManager(t *testing.T) {
	ctx := context.Background()
	if _, err := cluster.Script(ctx, "", "cert-manager"); err != nil {
		t.Fatal(err)
	}
	r := install(t, "certManager.enable=true")
	r.routeServiceHere(t)

	secretName := r.name + "-webhook-certs"
	certDir := t.TempDir()
	first := r.mountSecret(t, secretName, certDir, nil)
	caBundles := func() (mutating, validating []byte) {
		m := &admissionregistrationv1.MutatingWebhookConfiguration{}
		v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		key := client.ObjectKey{Name: r.name + "-webhook"}
		if err := r.c.Get(ctx, key, m); err != nil {
			t.Fatal(err)
		}
		if err := r.c.Get(ctx, key, v); err != nil {
			t.Fatal(err)
		}
		return m.Webhooks[0].ClientConfig.CABundle, v.Webhooks[0].ClientConfig.CABundle
	}
	cluster.Eventually(t, 60*time.Second, "cert-manager's CA injector to fill the CA bundles", func() (bool, error) {
		m, v := caBundles()
		if len(m) == 0 || len(v) == 0 {
			return false, nil
		}
		if !bytes.Equal(m, first.Data["ca.crt"]) || !bytes.Equal(v, first.Data["ca.crt"]) {
			return false, fmt.Errorf("CA bundles are not the certificate's CA")
		}
		return true, nil
	})

	webhook := r.run(t, r.name+"-webhook", certDir)
	controller := r.run(t, r.name+"-controller", "")
	r.requireValidatedThroughService(t)
	r.requireMutatedThroughService(t)
	served := r.servedSerial(t)

	// A renewal: cert-manager issues a new key and certificate from the same CA when the Secret
	// goes; the kubelet would update the mounted files, which the webhook reloads.
	if err := r.c.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: r.namespace, Name: secretName}}); err != nil {
		t.Fatal(err)
	}
	renewed := r.mountSecret(t, secretName, certDir, first)
	if !bytes.Equal(renewed.Data["ca.crt"], first.Data["ca.crt"]) {
		t.Fatal("the renewal changed the CA")
	}
	cluster.Eventually(t, 30*time.Second, "the webhook to serve the renewed certificate", func() (bool, error) {
		return r.servedSerial(t) != served, nil
	})
	r.requireValidatedThroughService(t)

	webhook.Stop()
	controller.Stop()
	r.uninstall(t)
	r.requireConfigurationsGone(t)
}

// mountSecret waits for the kubernetes.io/tls Secret name (a new one, if old is given) and
// writes its certificate and key into dir, as the kubelet does for a Secret volume.
func (r *release) mountSecret(t *testing.T, name, dir string, old *corev1.Secret) *corev1.Secret {
	t.Helper()
	secret := &corev1.Secret{}
	cluster.Eventually(t, 60*time.Second, "cert-manager to write Secret "+name, func() (bool, error) {
		err := r.c.Get(context.Background(), client.ObjectKey{Namespace: r.namespace, Name: name}, secret)
		if err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if old != nil && secret.UID == old.UID {
			return false, nil
		}
		return len(secret.Data["tls.crt"]) > 0 && len(secret.Data["tls.key"]) > 0 && len(secret.Data["ca.crt"]) > 0, nil
	})
	for _, key := range []string{"tls.key", "tls.crt"} {
		tmp := filepath.Join(dir, "."+key)
		if err := os.WriteFile(tmp, secret.Data[key], 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, key)); err != nil {
			t.Fatal(err)
		}
	}
	return secret
}

// servedSerial is the serial number of the certificate served behind the webhook Service.
func (r *release) servedSerial(t *testing.T) string {
	t.Helper()
	svc, err := r.cs.CoreV1().Services(r.namespace).Get(context.Background(), r.name+"-webhook", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(r.webhookPort))
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
}
