/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparksubmit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
	"github.com/sparkop/spark-operator/submission"
)

// Submitter runs spark-submit to create the driver of an attempt.
type Submitter struct {
	// SparkHome holds bin/spark-submit; $SPARK_HOME when empty.
	SparkHome string
	// Kubeconfig is the file spark-submit's Kubernetes client (fabric8) authenticates with,
	// passed as $KUBECONFIG. When empty, fabric8 falls back to its own discovery (the pod's
	// service account when the operator runs in the cluster).
	Kubeconfig string
	// MasterURL is the API server URL. When empty it is taken from Kubeconfig's current
	// context, else from the in-cluster KUBERNETES_SERVICE_HOST/PORT.
	MasterURL string
	// Client reads driver pods: the idempotency check before running spark-submit, and the
	// created pod after it. A cached client is fine: both reads are retried for a while.
	Client client.Client
	// TempDir is where the per-submission directories with the pod templates are made;
	// the system's temporary directory when empty.
	TempDir string
	// DriverLookupTimeout bounds the wait for the driver pod to be readable through Client
	// after spark-submit has created it. Defaults to 30s.
	DriverLookupTimeout time.Duration
}

var _ submission.Submitter = (*Submitter)(nil)

// Submit implements submission.Submitter.
func (s *Submitter) Submit(ctx context.Context, app *v1beta2.SparkApplication, attempt submission.Attempt) (submission.Result, error) {
	if app == nil {
		return submission.Result{}, errors.New("spark-submit submitter: no SparkApplication given")
	}
	if s.Client == nil {
		return submission.Result{}, errors.New("spark-submit submitter: no Kubernetes client configured")
	}
	if attempt.DriverPodName == "" || attempt.SubmissionID == "" {
		return submission.Result{}, fmt.Errorf("spark-submit submitter: attempt %+v lacks a driver pod name or submission ID", attempt)
	}
	if res, found, err := s.existingDriver(ctx, app.Namespace, attempt); found || err != nil {
		return res, err
	}

	sparkSubmit, err := s.sparkSubmitPath()
	if err != nil {
		return submission.Result{}, err
	}
	master, err := s.masterURL()
	if err != nil {
		return submission.Result{}, err
	}
	dir, err := os.MkdirTemp(s.TempDir, "spark-submit-"+app.Name+"-")
	if err != nil {
		return submission.Result{}, fmt.Errorf("creating the directory for pod templates: %w", err)
	}
	defer os.RemoveAll(dir)

	opts, err := writeFiles(dir, app, attempt.Scheduling)
	if err != nil {
		return submission.Result{}, err
	}
	opts.MasterURL = master
	args, err := BuildArgs(app, attempt, opts)
	if err != nil {
		return submission.Result{}, &submission.Error{Message: err.Error()}
	}

	cmd := exec.CommandContext(ctx, sparkSubmit, args...)
	cmd.Dir = dir
	cmd.Env = s.env(dir)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// Grandchildren holding the pipes open must not keep Submit waiting after the JVM exits.
	cmd.WaitDelay = 5 * time.Second
	if runErr := cmd.Run(); runErr != nil {
		if ctx.Err() != nil {
			return submission.Result{}, fmt.Errorf("spark-submit interrupted: %w", ctx.Err())
		}
		// A concurrent run of the same attempt may have created the driver first.
		if res, found, err := s.existingDriver(ctx, app.Namespace, attempt); found && err == nil {
			return res, nil
		}
		var exitErr *exec.ExitError
		if !errors.As(runErr, &exitErr) {
			return submission.Result{}, fmt.Errorf("running %s: %w", sparkSubmit, runErr)
		}
		return submission.Result{}, &submission.Error{
			Message: fmt.Sprintf("spark-submit failed (exit code %d): %s", exitErr.ExitCode(), Summarize(out.String())),
		}
	}
	return s.awaitDriver(ctx, app.Namespace, attempt)
}

// existingDriver looks for the attempt's driver pod. found is true when the pod exists and
// belongs to this attempt; a pod of another attempt is an error, since starting ours would
// need it gone first.
func (s *Submitter) existingDriver(ctx context.Context, namespace string, attempt submission.Attempt) (res submission.Result, found bool, err error) {
	pod := &corev1.Pod{}
	err = s.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: attempt.DriverPodName}, pod)
	if apierrors.IsNotFound(err) {
		return submission.Result{}, false, nil
	}
	if err != nil {
		return submission.Result{}, false, fmt.Errorf("looking for driver pod %s/%s: %w", namespace, attempt.DriverPodName, err)
	}
	if id := pod.Labels[v1beta2.LabelSubmissionID]; id != attempt.SubmissionID {
		return submission.Result{}, false, fmt.Errorf("driver pod %s/%s already exists for submission %q, not for this submission %q; it must be deleted before this attempt can start",
			namespace, attempt.DriverPodName, id, attempt.SubmissionID)
	}
	return submission.Result{
		SparkApplicationID: pod.Labels[v1beta2.SparkAppSelectorLabel],
		DriverPodName:      pod.Name,
	}, true, nil
}

// awaitDriver reads the pod spark-submit has just created; a cached client may need a moment
// to see it.
func (s *Submitter) awaitDriver(ctx context.Context, namespace string, attempt submission.Attempt) (submission.Result, error) {
	timeout := s.DriverLookupTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	var res submission.Result
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		r, found, err := s.existingDriver(ctx, namespace, attempt)
		if err != nil {
			lastErr = err
			return false, nil
		}
		res = r
		return found, nil
	})
	if err != nil {
		if lastErr != nil {
			return submission.Result{}, fmt.Errorf("spark-submit succeeded, but its driver pod is not readable: %w", lastErr)
		}
		return submission.Result{}, fmt.Errorf("spark-submit succeeded, but driver pod %s/%s did not appear within %s: %w", namespace, attempt.DriverPodName, timeout, err)
	}
	return res, nil
}

// writeFiles puts the pod templates and a quiet log4j configuration into dir.
func writeFiles(dir string, app *v1beta2.SparkApplication, sched sparkpod.RoleScheduling) (Options, error) {
	driver, executor, err := PodTemplates(app, sched)
	if err != nil {
		return Options{}, &submission.Error{Message: err.Error()}
	}
	opts := Options{
		DriverPodTemplateFile:   filepath.Join(dir, "driver-pod-template.yaml"),
		ExecutorPodTemplateFile: filepath.Join(dir, "executor-pod-template.yaml"),
	}
	for file, pod := range map[string]*corev1.Pod{opts.DriverPodTemplateFile: driver, opts.ExecutorPodTemplateFile: executor} {
		data, err := yaml.Marshal(pod)
		if err != nil {
			return Options{}, fmt.Errorf("encoding pod template: %w", err)
		}
		if err := os.WriteFile(file, data, 0o600); err != nil {
			return Options{}, fmt.Errorf("writing pod template: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, log4jFile), []byte(log4jConfig), 0o600); err != nil {
		return Options{}, fmt.Errorf("writing log4j configuration: %w", err)
	}
	return opts, nil
}

// A submission only needs warnings and errors; Spark's INFO output is dozens of lines per
// run that would bury the one line explaining a failure.
const (
	log4jFile   = "log4j2.properties"
	log4jConfig = `rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %p %c: %m%n
`
)

func (s *Submitter) env(dir string) []string {
	env := os.Environ()
	env = setEnv(env, "SPARK_HOME", s.sparkHome())
	if s.Kubeconfig != "" {
		env = setEnv(env, "KUBECONFIG", s.Kubeconfig)
	}
	opts := "-Dlog4j2.configurationFile=file:" + filepath.Join(dir, log4jFile)
	if prev := os.Getenv("SPARK_SUBMIT_OPTS"); prev != "" {
		opts = prev + " " + opts
	}
	return setEnv(env, "SPARK_SUBMIT_OPTS", opts)
}

func setEnv(env []string, key, value string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

func (s *Submitter) sparkHome() string {
	if s.SparkHome != "" {
		return s.SparkHome
	}
	return os.Getenv("SPARK_HOME")
}

func (s *Submitter) sparkSubmitPath() (string, error) {
	home := s.sparkHome()
	if home == "" {
		return "", errors.New("spark-submit submitter: neither SparkHome nor $SPARK_HOME is set (run hack/install-spark.sh)")
	}
	p := filepath.Join(home, "bin", "spark-submit")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("spark-submit submitter: %w", err)
	}
	return p, nil
}

func (s *Submitter) masterURL() (string, error) {
	if s.MasterURL != "" {
		return s.MasterURL, nil
	}
	if s.Kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
		if err != nil {
			return "", fmt.Errorf("spark-submit submitter: reading the API server URL from %s: %w", s.Kubeconfig, err)
		}
		return cfg.Host, nil
	}
	if host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT"); host != "" && port != "" {
		return "https://" + net.JoinHostPort(host, port), nil
	}
	return "", errors.New("spark-submit submitter: no MasterURL, no Kubeconfig, and not running in a cluster")
}

var (
	stackLine     = regexp.MustCompile(`^\s+(at |\.\.\. \d+ (more|common frames omitted))`)
	exceptionLine = regexp.MustCompile(`^(Exception in thread "[^"]*" |Caused by: )?[A-Za-z_$][\w$]*(\.[\w$]+)*(Exception|Error)(: |$)`)
	errorLine     = regexp.MustCompile(`^(Error: |ERROR )`)
	spaces        = regexp.MustCompile(`\s+`)
)

// maxMessage bounds the summary: it lands in the application's status.
const maxMessage = 1200

// Summarize extracts from spark-submit's output the lines that explain a failure: spark-submit's
// own "Error:" lines, logged errors, and the first and the innermost (last "Caused by") Java
// exception with their messages, without stack frames. Without any of these it falls back to
// the last few lines.
func Summarize(output string) string {
	lines := strings.Split(strings.ReplaceAll(output, "\r\n", "\n"), "\n")
	// blocks are runs of lines starting at a recognised header and ending at a stack frame or
	// another header; messages of Kubernetes errors span several lines.
	var errs, exceptions []string
	var cur *[]string
	var buf strings.Builder
	flush := func() {
		if cur != nil && buf.Len() > 0 {
			*cur = append(*cur, strings.TrimSpace(buf.String()))
		}
		cur = nil
		buf.Reset()
	}
	for _, l := range lines {
		switch {
		case stackLine.MatchString(l):
			flush()
		case exceptionLine.MatchString(l):
			flush()
			cur = &exceptions
			buf.WriteString(strings.TrimPrefix(l, "Caused by: "))
		case errorLine.MatchString(l):
			flush()
			// spark-submit's and log4j's error lines are complete on their own.
			cur = &errs
			buf.WriteString(l)
			flush()
		case cur != nil && strings.TrimSpace(l) != "":
			buf.WriteString(" " + strings.TrimSpace(l))
		default:
			flush()
		}
	}
	flush()

	var parts []string
	seen := map[string]bool{}
	addPart := func(p string) {
		p = strings.TrimPrefix(p, `Exception in thread "main" `)
		// fabric8 repeats the API server's message in a dump of the Status object.
		if i := strings.Index(p, " Received status: Status("); i >= 0 {
			p = p[:i]
		}
		if p != "" && !seen[p] {
			seen[p] = true
			parts = append(parts, p)
		}
	}
	if len(exceptions) > 0 {
		addPart(exceptions[0])
		addPart(exceptions[len(exceptions)-1])
	}
	for _, e := range errs {
		addPart(e)
	}
	if len(parts) == 0 {
		var tail []string
		for i := len(lines) - 1; i >= 0 && len(tail) < 5; i-- {
			if l := strings.TrimSpace(lines[i]); l != "" && !stackLine.MatchString(lines[i]) {
				tail = append([]string{l}, tail...)
			}
		}
		if len(tail) == 0 {
			return "no output"
		}
		parts = tail
	}
	msg := spaces.ReplaceAllString(strings.Join(parts, " | "), " ")
	if len(msg) > maxMessage {
		msg = msg[:maxMessage] + "…"
	}
	return msg
}

// syncBuffer lets stdout and stderr share one buffer, keeping their lines in order.
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
