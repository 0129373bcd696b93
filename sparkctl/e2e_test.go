/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkop/spark-operator/test/cluster"
)

// syncBuffer is a bytes.Buffer safe to read while a command still writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// sparkctl runs one command in-process against the local cluster, in namespace ns when it
// is not empty, and returns its standard output and error.
func sparkctl(t *testing.T, ctx context.Context, stdin string, ns string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut syncBuffer
	err := startSparkctl(t, ctx, stdin, ns, &out, &errOut, args...)()
	return out.String(), errOut.String(), err
}

// startSparkctl starts a command and returns a function waiting for its end.
func startSparkctl(t *testing.T, ctx context.Context, stdin, ns string, out, errOut io.Writer, args ...string) func() error {
	t.Helper()
	cmd := NewRootCommand(IOStreams{In: strings.NewReader(stdin), Out: out, ErrOut: errOut})
	full := []string{"--kubeconfig", cluster.Kubeconfig(t)}
	if ns != "" {
		full = append(full, "-n", ns)
	}
	cmd.SetArgs(append(full, args...))
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	return func() error { return <-done }
}

func mustSparkctl(t *testing.T, ns string, args ...string) string {
	t.Helper()
	out, errOut, err := sparkctl(t, context.Background(), "", ns, args...)
	if err != nil {
		t.Fatalf("sparkctl %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// startOperator runs the operator for one namespace until the test ends.
func startOperator(t *testing.T, namespace string) {
	t.Helper()
	bin, err := cluster.OperatorBinary()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	logFile, err := os.Create(filepath.Join(t.TempDir(), "operator.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--kubeconfig", cluster.Kubeconfig(t), "--namespaces", namespace,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "127.0.0.1:"+port, "-logtostderr")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("operator log:\n%s", tailLines(string(b), 30))
		}
	})
	cluster.Eventually(t, 60*time.Second, "the operator to be ready", func() (bool, error) {
		resp, err := http.Get("http://127.0.0.1:" + port + "/readyz")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

const sparkPiYAML = `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: %s
spec:
  type: Scala
  mode: cluster
  sparkVersion: 4.0.4
  image: docker.io/apache/spark:4.0.4
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar
  # Tiny CPU requests: the local cluster is shared and may be busy.
  driver: {cores: 1, coreRequest: 10m, memory: 512m}
  executor: {cores: 1, coreRequest: 10m, memory: 512m, instances: 2}
`

// ageRE matches what kubectl-style ages look like, to mask them in comparisons.
var ageRE = regexp.MustCompile(`^[0-9]+[smhdy][0-9smhdy]*$`)

// rows splits a table into its cells, ages replaced by "AGE".
func rows(table string) [][]string {
	var out [][]string
	for _, line := range strings.Split(strings.TrimRight(table, "\n"), "\n") {
		cells := regexp.MustCompile(`\s{3,}`).Split(strings.TrimSpace(line), -1)
		for i, c := range cells {
			if ageRE.MatchString(c) {
				cells[i] = "AGE"
			}
		}
		out = append(out, cells)
	}
	return out
}

func wantRows(t *testing.T, what, table string, want [][]string) {
	t.Helper()
	if diff := cmp.Diff(want, rows(table)); diff != "" {
		t.Errorf("%s (-want +got):\n%s\nfull output:\n%s", what, diff, table)
	}
}
