/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package cluster

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// OperatorBinary returns the path of cmd/spark-operator built from the repository (see
// buildCommand), for tests that run the operator as its own process, as it runs in a cluster.
var OperatorBinary = sync.OnceValues(func() (string, error) { return buildCommand("spark-operator") })

// SparkctlBinary returns the path of cmd/sparkctl built from the repository (see buildCommand).
var SparkctlBinary = sync.OnceValues(func() (string, error) { return buildCommand("sparkctl") })

// BinariesEnv names the folder where make test has built cmd/spark-operator and cmd/sparkctl
// once for the whole run (hack/test.sh): the test processes take them from there.
const BinariesEnv = "SPARKOP_TEST_BINARIES"

// buildCommand returns the path of cmd/NAME of the repository: in BinariesEnv's folder when it is
// set, else built now into the repository's .cache/test-bin, once per test process. The build
// goes to a file of its own, renamed into place: other test processes may be running the one it
// replaces (a rename leaves them theirs), and no file is left behind per process.
func buildCommand(name string) (string, error) {
	if dir := os.Getenv(BinariesEnv); dir != "" {
		bin := filepath.Join(dir, name)
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("%s is set, but %s is not built: %w", BinariesEnv, name, err)
		}
		return bin, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".cache", "test-bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	tmp := fmt.Sprintf("%s.%d", out, os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, "./cmd/"+name)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("building %s: %v\n%s", name, err, b)
	}
	return out, os.Rename(tmp, out)
}

// Operator is an operator process a test started.
type Operator struct {
	cmd    *exec.Cmd
	exited chan struct{}
	// Log is the file its output goes to.
	Log string
}

// StartOperator runs the operator with args (which must not set the metrics or health
// addresses: it picks them) and waits until /readyz answers. The process is stopped when the
// test ends, and the end of its log is shown if the test failed.
func StartOperator(t *testing.T, name string, args ...string) *Operator {
	t.Helper()
	bin, err := OperatorBinary()
	if err != nil {
		t.Fatal(err)
	}
	health := FreePort(t)
	logFile, err := os.CreateTemp(t.TempDir(), name+"-*.log")
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	args = append([]string{"--metrics-bind-address=0", "--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(health)}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	op := &Operator{cmd: cmd, exited: make(chan struct{}), Log: logFile.Name()}
	go func() { _ = cmd.Wait(); close(op.exited) }()
	t.Cleanup(func() {
		op.Stop()
		if t.Failed() {
			b, _ := os.ReadFile(op.Log)
			t.Logf("%s log:\n%s", name, Tail(string(b), 40))
		}
	})
	Eventually(t, 60*time.Second, name+" to be ready", func() (bool, error) {
		select {
		case <-op.exited:
			return false, fmt.Errorf("%s exited (log: %s)", name, op.Log)
		default:
		}
		resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(health) + "/readyz")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	return op
}

// Stop ends the operator as Kubernetes ends a pod: SIGTERM, then SIGKILL after 15 seconds.
func (o *Operator) Stop() {
	_ = o.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-o.exited:
	case <-time.After(15 * time.Second):
		o.Kill()
	}
}

// Terminate sends the operator SIGTERM, as Kubernetes does first to a pod it stops (a rolling
// update), and returns at once; WaitExit waits for the process to end.
func (o *Operator) Terminate() {
	_ = o.cmd.Process.Signal(syscall.SIGTERM)
}

// WaitExit waits up to timeout for the process to end and returns its exit code, or -1 (and
// false) if it has not ended, or was ended by a signal.
func (o *Operator) WaitExit(timeout time.Duration) (int, bool) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-o.exited:
	case <-t.C:
		if !o.Exited() {
			return -1, false
		}
	}
	return o.cmd.ProcessState.ExitCode(), true
}

// Kill ends the operator at once, as a crashed or OOM-killed process ends: no deferred status
// writes, no graceful shutdown.
func (o *Operator) Kill() {
	_ = o.cmd.Process.Signal(syscall.SIGKILL)
	<-o.exited
}

// Exited reports whether the operator process has ended, by a signal of the test or on its own.
func (o *Operator) Exited() bool {
	select {
	case <-o.exited:
		return true
	default:
		return false
	}
}

// FreePort is a TCP port free on 127.0.0.1 at the time of the call.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// QuickJVM sets, in a Spark configuration (made if nil), the Java options of the driver and
// executors so that they compile with C1 only and collect with one thread: a test's job of
// seconds takes less CPU than with the server defaults, on a 2-core machine running many.
func QuickJVM(conf map[string]string) map[string]string {
	if conf == nil {
		conf = map[string]string{}
	}
	for _, k := range []string{"spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"} {
		conf[k] = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
	}
	return conf
}

// SparkPi is a small SparkPi application of one executor: a tenth of a CPU for the driver, so
// that many fit beside other tests on the shared cluster. Tests change what they need.
func SparkPi(ns, name string) *v1beta2.SparkApplication {
	return &v1beta2.SparkApplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1beta2.SparkApplicationSpec{
			Type:                v1beta2.SparkApplicationTypeScala,
			Mode:                v1beta2.DeployModeCluster,
			SparkVersion:        "4.0.4",
			Image:               ptr.To("docker.io/apache/spark:4.0.4"),
			MainClass:           ptr.To("org.apache.spark.examples.SparkPi"),
			MainApplicationFile: "local:///opt/spark/examples/jars/spark-examples.jar",
			Driver:              v1beta2.DriverSpec{SparkPodSpec: v1beta2.SparkPodSpec{Cores: ptr.To[int32](1), CoreRequest: ptr.To("100m"), Memory: ptr.To("512m")}},
			Executor: v1beta2.ExecutorSpec{SparkPodSpec: v1beta2.SparkPodSpec{Cores: ptr.To[int32](1), Memory: ptr.To("512m")},
				Instances: ptr.To[int32](1)},
		},
	}
}
