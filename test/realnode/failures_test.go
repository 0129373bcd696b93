package realnode

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// failScript fails a PySpark driver in the ways a real node reports: an exit code after some
// last words in the log, or memory allocated past the container's limit.
const failScript = `
import sys, time
mode = sys.argv[1]
if mode == "exit":
    print("FAILURE last words before exit", flush=True)
    sys.exit(int(sys.argv[2]))
if mode == "oom":
    hog = []
    while True:
        hog.append(bytearray(32 << 20))
if mode == "slow":
    from pyspark.sql import SparkSession
    sc = SparkSession.builder.getOrCreate().sparkContext
    n = int(sys.argv[2])
    print("FAILURE sum %d" % sc.parallelize(range(n), n).map(lambda x: (time.sleep(3), x)[1]).sum(), flush=True)
`

// unreachableImage names a registry nothing listens on: the kubelet's pull fails at once.
const unreachableImage = "127.0.0.1:1/spark:no-such-tag"

// failApp runs failScript with args.
func (e *env) failApp(name string, args ...string) *v1beta2.SparkApplication {
	e.t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "fail-script"},
		Data: map[string]string{"fail.py": failScript}}
	if err := e.c.Create(e.ctx, cm); err != nil && !strings.Contains(err.Error(), "already exists") {
		e.t.Fatal(err)
	}
	app := e.pythonPi(name, 1)
	app.Spec.MainApplicationFile = "local:///etc/fail-script/fail.py"
	app.Spec.Arguments = args
	app.Spec.Driver.ConfigMaps = []v1beta2.NamePath{{Name: "fail-script", Path: "/etc/fail-script"}}
	return app
}

// waitMessage waits until the application's state is state and its errorMessage holds every
// one of parts, and returns it.
func (e *env) waitMessage(name string, state v1beta2.ApplicationStateType, parts ...string) *v1beta2.SparkApplication {
	e.t.Helper()
	var app *v1beta2.SparkApplication
	cluster.Eventually(e.t, appTimeout, name+" "+string(state)+" saying "+strings.Join(parts, ", "), func() (bool, error) {
		app = e.get(name)
		if app.Status.AppState.State != state {
			return false, nil
		}
		for _, p := range parts {
			if !strings.Contains(app.Status.AppState.ErrorMessage, p) {
				return false, nil
			}
		}
		return true, nil
	})
	return app
}

// TestRealFailures: what a real kubelet reports reaches the application's status, and every
// such wait has an end. An image that cannot be pulled keeps the driver SUBMITTED with the
// kubelet's reason, then fails the run after --driver-start-timeout, driver deleted; an
// executor image that cannot be pulled is shown while the driver runs; a driver killed for
// memory fails with OOMKilled; a driver that exits non-zero fails with Spark's exit code and the
// last lines of its log.
func TestRealFailures(t *testing.T) {
	e := newEnv(t, "--driver-start-timeout=30s")

	t.Run("driver image cannot be pulled", func(t *testing.T) {
		app := e.sparkPi("no-image", 1)
		app.Spec.Image = ptr.To(unreachableImage)
		e.create(app)
		e.waitMessage("no-image", v1beta2.ApplicationStateSubmitted, "cannot start: container spark-kubernetes-driver", unreachableImage)
		app = e.waitMessage("no-image", v1beta2.ApplicationStateFailed, "(for more than 30s)")
		cluster.Eventually(t, appTimeout, "the driver pod deleted", func() (bool, error) {
			var pod corev1.Pod
			err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: app.DriverPodName()}, &pod)
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return pod.DeletionTimestamp != nil, err
		})
	})

	t.Run("executor image cannot be pulled", func(t *testing.T) {
		app := e.sparkPi("no-exec-image", 1)
		app.Spec.Executor.Image = ptr.To(unreachableImage)
		e.create(app)
		e.waitMessage("no-exec-image", v1beta2.ApplicationStateRunning, "executor pod ", "cannot start: container spark-kubernetes-executor", unreachableImage)
		if err := e.c.Delete(e.ctx, app); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("driver killed for memory", func(t *testing.T) {
		e.create(e.failApp("oom", "oom"))
		e.waitMessage("oom", v1beta2.ApplicationStateFailed, "OOMKilled")
	})

	t.Run("exit code and last words", func(t *testing.T) {
		e.create(e.failApp("exits", "exit", "7"))
		e.waitMessage("exits", v1beta2.ApplicationStateFailed, "exit code 7", "FAILURE last words before exit")
	})
}

// freezeKubelet stops the real node's kubelet (SIGSTOP) as a node that stops answering does: its
// containers keep running, nothing is reported. The kubelet is let go on again, and the node
// waited for to be Ready, when the test ends.
func (e *env) freezeKubelet() {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(realNode.State(), "pids", "kubelet.pid"))
	if err != nil {
		e.t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		e.t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		e.t.Fatalf("stopping the kubelet (pid %d): %v", pid, err)
	}
	e.t.Cleanup(func() {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			e.t.Errorf("letting the kubelet go on: %v", err)
		}
		cluster.Eventually(e.t, appTimeout, "the real node Ready again", func() (bool, error) {
			var node corev1.Node
			if err := e.c.Get(e.ctx, client.ObjectKey{Name: nodeName}, &node); err != nil {
				return false, err
			}
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady {
					return c.Status == corev1.ConditionTrue, nil
				}
			}
			return false, nil
		})
	})
}

// TestNodeLost: a running driver whose node stops answering (its kubelet frozen) fails the run
// once the node has not been Ready for --node-lost-timeout, saying so, with its driver deleted,
// although the node controller evicts nothing from a zone whose every node is down.
func TestNodeLost(t *testing.T) {
	e := newEnv(t, "--node-lost-timeout=20s")
	app := e.failApp("lost", "slow", "100") // long enough to be running when the node goes
	e.create(app)
	e.waitState("lost", v1beta2.ApplicationStateRunning)
	e.freezeKubelet()
	app = e.waitMessage("lost", v1beta2.ApplicationStateFailed, "driver pod lost-driver is lost: its node "+nodeName+" has not been Ready since", "more than 20s")
	t.Logf("FAILED: %s", app.Status.AppState.ErrorMessage)
	var pod corev1.Pod
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "lost-driver"}, &pod); err == nil && pod.DeletionTimestamp.IsZero() {
		t.Errorf("driver pod lost-driver not deleted")
	} else if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

// killExecutor kills, from the host, the JVM of the executor in pod: its container exits as a
// container whose process was killed does.
func (e *env) killExecutor(pod string) {
	e.t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, f := range procs {
		env, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(env), "SPARK_EXECUTOR_POD_NAME="+pod+"\x00") {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(f), "cmdline"))
		if !strings.Contains(string(cmdline), "java") {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			e.t.Fatalf("killing the JVM of %s (pid %d): %v", pod, pid, err)
		}
		return
	}
	e.t.Fatalf("no JVM of executor pod %s on this machine", pod)
}

// TestExecutorLost: an executor whose container is killed mid-job shows as FAILED in the status
// (with an ExecutorFailed event); Spark replaces it and the job completes with the right answer.
func TestExecutorLost(t *testing.T) {
	e := newEnv(t)
	e.create(e.failApp("exec-lost", "slow", "8"))
	app := e.waitState("exec-lost", v1beta2.ApplicationStateRunning)
	var first string
	cluster.Eventually(t, appTimeout, "an executor running", func() (bool, error) {
		running := e.running("exec-lost", v1beta2.SparkRoleExecutor)
		if len(running) > 0 {
			first = running[0]
		}
		return first != "", nil
	})
	e.waitLog(app, "Starting task")
	e.killExecutor(first)
	app = e.waitState("exec-lost", v1beta2.ApplicationStateCompleted)
	states := app.Status.ExecutorState
	if states[first] != v1beta2.ExecutorStateFailed || len(states) < 2 {
		t.Errorf("executor states %v: want %s FAILED and its replacement", states, first)
	}
	if log := e.driverLog(app); !strings.Contains(log, "FAILURE sum 28") {
		t.Errorf("the driver's log has no right answer (FAILURE sum 28):\n%s", cluster.Tail(log, 30))
	}
}

// TestRuntimeRestart: the node's containerd stopped and started again under a running job: the
// job completes with its answer, and an application created after the restart runs too.
func TestRuntimeRestart(t *testing.T) {
	e := newEnv(t)
	e.create(e.failApp("survives", "slow", "8"))
	app := e.waitState("survives", v1beta2.ApplicationStateRunning)
	e.waitLog(app, "Starting task")
	if _, err := cluster.Script(e.ctx, realNode.State(), "restart-runtime"); err != nil {
		t.Fatal(err)
	}
	e.create(e.sparkPi("after", 1))
	app = e.waitState("survives", v1beta2.ApplicationStateCompleted)
	if log := e.driverLog(app); !strings.Contains(log, "FAILURE sum 28") {
		t.Errorf("the driver's log has no right answer (FAILURE sum 28):\n%s", cluster.Tail(log, 30))
	}
	e.waitLog(e.waitState("after", v1beta2.ApplicationStateCompleted), "Pi is roughly 3.1")
}
