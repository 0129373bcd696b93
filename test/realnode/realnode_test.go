// Package realnode tests the operator against real Spark: a local cluster whose one node is run
// by a real kubelet and containerd (hack/local-cluster.sh up --real-node), with the Spark image
// built on this machine (hack/spark-image.sh) imported into it. What only real Spark can show is
// checked here: executors made by the driver, the answer in the driver's log, the webhook's
// customisations seen from inside the containers, Spark's exit codes, the UI and Spark Connect.
//
// The jobs are small (a quarter of a CPU and 512 MiB per pod), so the package runs in a few
// minutes on 2 cores; they run one after another, each with an operator of its own.
package realnode

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// The node's name and the image hack/local-cluster.sh up --real-node gives it.
const (
	nodeName   = "real-node"
	sparkImage = "docker.io/apache/spark:4.0.4"
	// serviceAccount is what the drivers run as: it may manage the pods, Services and
	// ConfigMaps of its namespace, as the chart's Spark service account may.
	serviceAccount = "spark"
	// appTimeout bounds a whole application, JVM starts included, on a busy 2-core machine.
	appTimeout = 10 * time.Minute
)

// realNode is the package's cluster: one real node and no simulated ones.
var realNode = &cluster.Own{Prefix: "realnode-", Args: []string{"--real-node"},
	Logs: []string{"containerd", "kubelet", "kube-proxy", "coredns"}}

func TestMain(m *testing.M) { realNode.Main(m) }

// env is one test's namespace, clients and operator on the real-node cluster.
type env struct {
	t          *testing.T
	ctx        context.Context
	kubeconfig string
	cfg        *rest.Config
	c          client.Client
	cs         kubernetes.Interface
	ns         string
	// twin is a second namespace the operator watches, with the same service account: an
	// application can run there under the same name as one in ns.
	twin string
	// op is the operator, started with opArgs.
	op     *cluster.Operator
	opArgs []string
}

// newEnv makes two namespaces (ns and twin) with the drivers' service account and starts an
// operator for them: native submission by default (an application's
// sparkoperator.k8s.io/submitter annotation picks spark-submit), the webhook, and the gang
// scheduler holding room with placeholders.
func newEnv(t *testing.T, extraArgs ...string) *env {
	t.Helper()
	kc := realNode.Kubeconfig(t)
	cfg, err := cluster.RESTConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	c, cs := cluster.Clients(t, kc)
	e := &env{t: t, ctx: context.Background(), kubeconfig: kc, cfg: cfg, c: c, cs: cs}
	e.ns, e.twin = cluster.Namespace(t, c, "rn"), cluster.Namespace(t, c, "rn-twin")
	e.serviceAccount()
	e.in(e.twin).serviceAccount()
	args := []string{"--kubeconfig", kc, "--namespaces", e.ns + "," + e.twin, "--submission-workers", "4",
		"--spark-home", sparkHome(t),
		"--enable-webhook", "--webhook-url-host", "localhost", "--webhook-port", fmt.Sprint(cluster.FreePort(t)),
		"--webhook-secret-namespace", e.ns, "--webhook-config-name", "realnode-" + e.ns,
		"--webhook-cert-dir", t.TempDir(),
		"--enable-gang-scheduler", "--default-batch-scheduler=gang", "--gang-enforcement=placeholders",
		"-logtostderr", "-v=1"}
	e.opArgs = append(args, extraArgs...)
	e.op = cluster.StartOperator(t, "operator", e.opArgs...)
	return e
}

// withT is e for the (sub)test t: its failures are t's.
func (e *env) withT(t *testing.T) *env {
	other := *e
	other.t = t
	return &other
}

// in is e in namespace ns (e.ns or e.twin).
func (e *env) in(ns string) *env {
	other := *e
	other.ns = ns
	return &other
}

func (e *env) serviceAccount() {
	e.t.Helper()
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: serviceAccount}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: serviceAccount}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"pods", "services", "configmaps", "persistentvolumeclaims"},
			Verbs: []string{"*"},
		}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: serviceAccount},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: serviceAccount},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: serviceAccount, Namespace: e.ns}}},
	}
	for _, o := range objs {
		if err := e.c.Create(e.ctx, o); err != nil {
			e.t.Fatal(err)
		}
	}
}

// sparkHome installs (once per machine) the Spark that the spark-submit mode runs.
var sparkHomeOnce = sync.OnceValues(func() (string, error) {
	return cluster.RepoCommand("hack/install-spark.sh")
})

func sparkHome(t *testing.T) string {
	t.Helper()
	home, err := sparkHomeOnce()
	if err != nil {
		t.Fatal(err)
	}
	return home
}

// sparkPi is a small SparkPi: a quarter of a CPU and 512 MiB for the driver and each executor.
// The other tests' applications start from it.
func (e *env) sparkPi(name string, executors int32) *v1beta2.SparkApplication {
	app := cluster.SparkPi(e.ns, name)
	app.Spec.ImagePullPolicy = ptr.To("IfNotPresent")
	app.Spec.Arguments = []string{"20"}
	app.Spec.Driver.CoreRequest = ptr.To("250m")
	app.Spec.Driver.ServiceAccount = ptr.To(serviceAccount)
	app.Spec.Executor.CoreRequest = ptr.To("250m")
	app.Spec.Executor.Instances = ptr.To(executors)
	// Spark's Kubernetes clients, spark-submit's and the driver's, give up on a connection or
	// a request after 10 s by default, which a JVM starved of CPU on a busy 2-core machine can
	// take (to create the driver pod, or the executors' ConfigMap).
	app.Spec.SparkConf = map[string]string{}
	for _, k := range []string{"submission.connectionTimeout", "submission.requestTimeout", "driver.connectionTimeout", "driver.requestTimeout"} {
		app.Spec.SparkConf["spark.kubernetes."+k] = "60000"
	}
	app.Spec.SparkConf = cluster.QuickJVM(app.Spec.SparkConf)
	return app
}

// pythonPi is sparkPi running pi.py.
func (e *env) pythonPi(name string, executors int32) *v1beta2.SparkApplication {
	app := e.sparkPi(name, executors)
	app.Spec.Type = v1beta2.SparkApplicationTypePython
	app.Spec.PythonVersion = ptr.To("3")
	app.Spec.MainClass = nil
	app.Spec.MainApplicationFile = "local:///opt/spark/examples/src/main/python/pi.py"
	return app
}

func (e *env) create(app *v1beta2.SparkApplication) {
	e.t.Helper()
	if err := e.c.Create(e.ctx, app); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) get(name string) *v1beta2.SparkApplication {
	e.t.Helper()
	var app v1beta2.SparkApplication
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, &app); err != nil {
		e.t.Fatal(err)
	}
	return &app
}

// waitState waits until the application reaches state, failing at once if it ends otherwise.
func (e *env) waitState(name string, state v1beta2.ApplicationStateType) *v1beta2.SparkApplication {
	e.t.Helper()
	var app v1beta2.SparkApplication
	cluster.Eventually(e.t, appTimeout, name+" to be "+string(state), func() (bool, error) {
		if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, &app); err != nil {
			return false, err
		}
		got := app.Status.AppState.State
		if got == state {
			return true, nil
		}
		if terminal(got) {
			return false, fmt.Errorf("%s ended %s, not %s: %s\n%s", name, got, state, app.Status.AppState.ErrorMessage, e.driverLog(&app))
		}
		return false, nil
	})
	return &app
}

func terminal(s v1beta2.ApplicationStateType) bool {
	switch s {
	case v1beta2.ApplicationStateCompleted, v1beta2.ApplicationStateFailed, v1beta2.ApplicationStateFailedSubmission:
		return true
	}
	return false
}

// driverLog is the log of the application's driver container, or why there is none.
func (e *env) driverLog(app *v1beta2.SparkApplication) string {
	pod := app.DriverPodName()
	b, err := e.cs.CoreV1().Pods(e.ns).GetLogs(pod, &corev1.PodLogOptions{Container: v1beta2.SparkDriverContainerName}).DoRaw(e.ctx)
	if err != nil {
		return fmt.Sprintf("(no log of %s: %v)", pod, err)
	}
	return string(b)
}

// forward forwards a free local port to port of pod until the test ends, and returns it.
func (e *env) forward(pod string, port int) int {
	e.t.Helper()
	url := e.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(e.ns).Name(pod).SubResource("portforward").URL()
	transport, upgrader, err := spdy.RoundTripperFor(e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, url)
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		e.t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- fw.ForwardPorts() }()
	e.t.Cleanup(func() { close(stop) })
	select {
	case <-ready:
	case err := <-errc:
		e.t.Fatalf("port-forward to %s:%d: %v", pod, port, err)
	}
	ports, err := fw.GetPorts()
	if err != nil {
		e.t.Fatal(err)
	}
	return int(ports[0].Local)
}

// podsOf lists the pods of an application (driver and executors) that have not ended.
func (e *env) podsOf(name string) []corev1.Pod {
	e.t.Helper()
	var pods corev1.PodList
	if err := e.c.List(e.ctx, &pods, client.InNamespace(e.ns), client.MatchingLabels{v1beta2.LabelAppName: name}); err != nil {
		e.t.Fatal(err)
	}
	var live []corev1.Pod
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.Spec.NodeName != "" {
			live = append(live, p)
		}
	}
	return live
}
