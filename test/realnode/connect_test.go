package realnode

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// examples/spark-connect.yaml becomes Ready on the real node with its two executors, and a real
// Spark Connect client's query is answered through it.
func TestSparkConnect(t *testing.T) {
	e := newEnv(t)
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "examples", "spark-connect.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var sc v1alpha1.SparkConnect
	if err := yaml.UnmarshalStrict(data, &sc); err != nil {
		t.Fatal(err)
	}
	sc.Namespace = e.ns
	sc.Spec.Server.Template.Spec.ServiceAccountName = serviceAccount
	sc.Spec.SparkConf = cluster.QuickJVM(sc.Spec.SparkConf)
	if err := e.c.Create(e.ctx, &sc); err != nil {
		t.Fatal(err)
	}
	server := e.waitConnectReady(&sc, 2)

	python, err := cluster.RepoCommand("hack/install-spark.sh", "connect-client")
	if err != nil {
		t.Fatal(err)
	}
	port := e.forward(server, 15002)
	out, err := exec.Command(python, filepath.Join(root, "hack", "spark-connect-query.py"), fmt.Sprintf("sc://127.0.0.1:%d", port)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "sum=499500") {
		t.Fatalf("the Spark Connect query: %v\n%s", err, cluster.Tail(string(out), 30))
	}
}

// waitConnectReady waits until sc is Ready with executors running, and returns its server pod's
// name. It fails at once if the server's container restarts, with the log it left; if the
// test fails later, the end of the server's log is printed.
func (e *env) waitConnectReady(sc *v1alpha1.SparkConnect, executors int) string {
	e.t.Helper()
	var server string
	e.t.Cleanup(func() {
		if e.t.Failed() && server != "" {
			e.t.Logf("the end of the server's log:\n%s", e.podLog(server, v1beta2.SparkDriverContainerName, false))
		}
	})
	what := fmt.Sprintf("the SparkConnect to be Ready with %d executors running", executors)
	cluster.Eventually(e.t, appTimeout, what, func() (bool, error) {
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(sc), sc); err != nil {
			return false, err
		}
		if sc.Status.State == v1alpha1.SparkConnectStateFailed {
			return false, fmt.Errorf("the SparkConnect failed: %+v", sc.Status.Conditions)
		}
		if server = sc.Status.Server.PodName; server == "" {
			return false, nil
		}
		if err := e.serverRestarted(server); err != nil {
			return false, err
		}
		return sc.Status.State == v1alpha1.SparkConnectStateReady && e.runningExecutorsOf(server) == executors, nil
	})
	return server
}

// serverRestarted is an error with the previous log when the server's container has restarted:
// the server died, and waiting for it to become ready would only time out.
func (e *env) serverRestarted(server string) error {
	var pod corev1.Pod
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: server}, &pod); err != nil {
		return client.IgnoreNotFound(err)
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.RestartCount > 0 {
			return fmt.Errorf("the server's container %s restarted; its previous log ends:\n%s", cs.Name, e.podLog(server, cs.Name, true))
		}
	}
	return nil
}

// podLog is the end of a container's log (of its previous run if previous), or why there is none.
func (e *env) podLog(pod, container string, previous bool) string {
	b, err := e.cs.CoreV1().Pods(e.ns).GetLogs(pod, &corev1.PodLogOptions{Container: container, Previous: previous}).DoRaw(e.ctx)
	if err != nil {
		return fmt.Sprintf("(no log of %s: %v)", pod, err)
	}
	return cluster.Tail(string(b), 60)
}

// slowQuery is a Spark Connect client's query whose 8 tasks each sleep 5 s on an executor
// (Thread.sleep through SQL's reflect). It has no shuffle, so the executors it ran on hold no
// shuffle data once it is done, and shuffle tracking does not keep them.
const slowQuery = `
import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
rows = spark.range(0, 8, 1, 8).selectExpr("reflect('java.lang.Thread', 'sleep', cast(5000 as bigint))").collect()
print("rows=%d" % len(rows))
spark.stop()
`

// A SparkConnect with dynamic allocation from 0 to 2 executors: Ready with none; a query's
// waiting tasks make Spark start executors, up to the maximum, which the status counts; idle
// after the query, they go, and the server stays Ready for the next client.
func TestSparkConnectDynamicAllocation(t *testing.T) {
	e := newEnv(t)
	mem := resource.MustParse("896Mi") // 512 MiB for Spark and its 384 MiB overhead
	sc := &v1alpha1.SparkConnect{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "dynamic"},
		Spec: v1alpha1.SparkConnectSpec{
			SparkVersion: "4.0.4", Image: ptr.To(sparkImage),
			SparkConf: map[string]string{
				"spark.kubernetes.executor.request.cores":         "250m",
				"spark.dynamicAllocation.executorIdleTimeout":     "5s",
				"spark.dynamicAllocation.schedulerBacklogTimeout": "1s",
				"spark.kubernetes.driver.requestTimeout":          "60000", // as sparkPi's
			},
			Server: v1alpha1.ServerSpec{SparkPodSpec: v1alpha1.SparkPodSpec{Cores: ptr.To[int32](1), Memory: ptr.To("512m"),
				Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{ServiceAccountName: serviceAccount,
					Containers: []corev1.Container{{Name: v1beta2.SparkDriverContainerName, Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: mem},
						Limits:   corev1.ResourceList{corev1.ResourceMemory: mem},
					}}}}}}},
			// No executor template: the one the server reads is made for the gang scheduler's
			// settings alone.
			Executor:          v1alpha1.ExecutorSpec{SparkPodSpec: v1alpha1.SparkPodSpec{Cores: ptr.To[int32](1), Memory: ptr.To("512m")}},
			DynamicAllocation: &v1beta2.DynamicAllocation{Enabled: true, MinExecutors: ptr.To[int32](0), MaxExecutors: ptr.To[int32](2)},
		},
	}
	sc.Spec.SparkConf = cluster.QuickJVM(sc.Spec.SparkConf)
	if err := e.c.Create(e.ctx, sc); err != nil {
		t.Fatal(err)
	}
	server := e.waitConnectReady(sc, 0)
	if n := sc.Status.Executors["running"]; n != 0 {
		t.Errorf("the status counts %d running executors before any query, want none (minExecutors 0)", n)
	}

	query := e.startQuery(server, slowQuery)
	// The most executors seen running at once, in their pods and in the status, from the
	// query's start until they are gone again.
	mostPods, mostStatus := 0, 0
	observe := func() (pods, status int, err error) {
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(sc), sc); err != nil {
			return 0, 0, err
		}
		pods, status = e.runningExecutorsOf(server), sc.Status.Executors["running"]
		mostPods, mostStatus = max(mostPods, pods), max(mostStatus, status)
		return pods, status, nil
	}
	cluster.Eventually(t, appTimeout, "the query to be answered", func() (bool, error) {
		if _, _, err := observe(); err != nil {
			return false, err
		}
		return query.done()
	})
	if out := query.output(); !strings.Contains(out, "rows=8") {
		t.Fatalf("the query's answer:\n%s", cluster.Tail(out, 30))
	}
	cluster.Eventually(t, appTimeout, "the idle executors to go", func() (bool, error) {
		pods, status, err := observe()
		return pods == 0 && status == 0, err
	})
	if mostPods != 2 || mostStatus != 2 {
		t.Errorf("at most %d executor pods ran at once, and the status counted at most %d; want maxExecutors, 2, in both",
			mostPods, mostStatus)
	}
	if sc.Status.State != v1alpha1.SparkConnectStateReady {
		t.Errorf("the SparkConnect is %s once its executors are gone, want Ready: %+v", sc.Status.State, sc.Status.Conditions)
	}
}

// query is a Spark Connect client running a script.
type query struct {
	out  *bytes.Buffer
	errc chan error
	err  error
	over bool
}

// startQuery runs script with the Spark Connect client against server's port 15002, forwarded
// until the test ends; the script gets the connection URL as its argument.
func (e *env) startQuery(server, script string) *query {
	e.t.Helper()
	python, err := cluster.RepoCommand("hack/install-spark.sh", "connect-client")
	if err != nil {
		e.t.Fatal(err)
	}
	file := filepath.Join(e.t.TempDir(), "query.py")
	if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
		e.t.Fatal(err)
	}
	port := e.forward(server, 15002)
	q := &query{out: &bytes.Buffer{}, errc: make(chan error, 1)}
	cmd := exec.Command(python, file, fmt.Sprintf("sc://127.0.0.1:%d", port))
	cmd.Stdout, cmd.Stderr = q.out, q.out
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { q.errc <- cmd.Wait() }()
	e.t.Cleanup(func() {
		if !q.over {
			_ = cmd.Process.Kill()
			<-q.errc
		}
	})
	return q
}

// done tells whether the client has exited; an error if it failed.
func (q *query) done() (bool, error) {
	if !q.over {
		select {
		case q.err = <-q.errc:
			q.over = true
		default:
			return false, nil
		}
	}
	if q.err != nil {
		return false, fmt.Errorf("the Spark Connect client: %v\n%s", q.err, cluster.Tail(q.out.String(), 30))
	}
	return true, nil
}

// output is what the client printed; read it once it is done.
func (q *query) output() string { return q.out.String() }

// runningExecutorsOf counts the running executor pods whose owner is the pod named driver: the
// executors Spark made.
func (e *env) runningExecutorsOf(driver string) int {
	var pods corev1.PodList
	if err := e.c.List(e.ctx, &pods, client.InNamespace(e.ns), client.MatchingLabels{v1beta2.SparkRoleLabel: "executor"}); err != nil {
		e.t.Fatal(err)
	}
	n := 0
	for _, p := range pods.Items {
		for _, o := range p.OwnerReferences {
			if o.Kind == "Pod" && o.Name == driver && p.Status.Phase == corev1.PodRunning {
				n++
			}
		}
	}
	return n
}

// The UI Service answers HTTP on 4040 inside the cluster while the driver runs (a pod resolves
// its name through the cluster's DNS and reaches it through kube-proxy); `sparkctl forward`
// serves the same UI on a local port, and `sparkctl log` prints the driver's real log.
func TestUIAndSparkctl(t *testing.T) {
	e := newEnv(t)
	e.create(e.checkApp("ui", "sleep", "600"))
	app := e.waitState("ui", v1beta2.ApplicationStateRunning)
	e.waitLog(app, "CHECK executor")
	app = e.get("ui")
	svc := app.Status.DriverInfo.WebUIServiceName
	if svc == "" {
		t.Fatalf("no webUIServiceName in the status: %+v", app.Status.DriverInfo)
	}

	t.Run("UI Service", func(t *testing.T) {
		url := fmt.Sprintf("http://%s.%s.svc.cluster.local:4040/", svc, e.ns)
		probe := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "ui-probe"},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
				Name: "probe", Image: sparkImage, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"python3", "-c", "import sys, urllib.request as u; r = u.urlopen(sys.argv[1], timeout=30); " +
					"print('status', r.status, 'spark' if b'Spark' in r.read() else 'not-spark')", url},
			}}},
		}
		if err := e.c.Create(e.ctx, probe); err != nil {
			t.Fatal(err)
		}
		cluster.Eventually(t, 2*time.Minute, "the probe pod to end", func() (bool, error) {
			p := e.pod("ui-probe")
			return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed, nil
		})
		b, err := e.cs.CoreV1().Pods(e.ns).GetLogs("ui-probe", &corev1.PodLogOptions{}).DoRaw(e.ctx)
		if err != nil || !strings.Contains(string(b), "status 200 spark") {
			t.Errorf("GET %s from a pod: %v %s", url, err, b)
		}
	})

	sparkctl := sparkctlBinary(t)
	t.Run("sparkctl log", func(t *testing.T) {
		cmd := exec.Command(sparkctl, "log", "ui", "-n", e.ns)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+e.kubeconfig)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "CHECK driver uid=185") {
			t.Errorf("sparkctl log: %v\n%s", err, cluster.Tail(string(out), 20))
		}
	})
	t.Run("sparkctl forward", func(t *testing.T) {
		port := cluster.FreePort(t)
		var out bytes.Buffer
		cmd := exec.Command(sparkctl, "forward", "ui", "-n", e.ns, "--local-port", fmt.Sprint(port))
		cmd.Env = append(os.Environ(), "KUBECONFIG="+e.kubeconfig)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		cluster.Eventually(t, time.Minute, "the Spark UI through sparkctl forward", func() (bool, error) {
			resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
			if err != nil {
				return false, nil
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode == http.StatusOK && bytes.Contains(body, []byte("Spark")), nil
		})
	})
	if err := e.c.Delete(e.ctx, app); err != nil {
		t.Fatal(err)
	}
}

func sparkctlBinary(t *testing.T) string {
	t.Helper()
	bin, err := cluster.SparkctlBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
