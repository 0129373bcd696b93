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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	if err := e.c.Create(e.ctx, &sc); err != nil {
		t.Fatal(err)
	}
	var server string
	cluster.Eventually(t, appTimeout, "the SparkConnect to be Ready with 2 executors running", func() (bool, error) {
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(&sc), &sc); err != nil {
			return false, err
		}
		if sc.Status.State == v1alpha1.SparkConnectStateFailed {
			return false, fmt.Errorf("the SparkConnect failed: %+v", sc.Status.Conditions)
		}
		server = sc.Status.Server.PodName
		return sc.Status.State == v1alpha1.SparkConnectStateReady && e.runningExecutorsOf(server) == 2, nil
	})

	python, err := repoCommand("hack/install-spark.sh", "connect-client")
	if err != nil {
		t.Fatal(err)
	}
	port := e.forward(server, 15002)
	out, err := exec.Command(python, filepath.Join(root, "hack", "spark-connect-query.py"), fmt.Sprintf("sc://127.0.0.1:%d", port)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "sum=499500") {
		t.Fatalf("the Spark Connect query: %v\n%s", err, tail(string(out), 30))
	}
}

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
			t.Errorf("sparkctl log: %v\n%s", err, tail(string(out), 20))
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
