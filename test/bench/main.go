/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Command bench measures the operator against the local control plane. Each --scenario prints
// a table or a few lines and one machine-readable RESULT line per run.
//
// submit (the default) starts the operator in a given submission mode, creates N
// SparkApplications at an offered rate (or as fast as it can), and times each from its create
// call to its driver pod appearing in a watch:
//
//	RESULT mode=native apps=1000 apps_per_min=… p50_ms=… p99_ms=… rss_mib=… settled_rss_mib=… api_writes_per_app=… api_reads_per_app=…
//
// restart and failover (restart.go) time how soon a new application gets its driver after the
// operator is killed, with N finished applications present.
//
// gang (gang.go) runs N mixed-size applications at once, with a Spark stand-in (spark.go),
// with or without the gang scheduler; scale (scale.go) runs the gang scheduler with N of them
// queued at once across many Queues on a cluster of many kwok nodes.
//
// See docs/benchmarks.md for how to run it and the figures measured.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"maps"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

type config struct {
	kubeconfig string
	operator   string
	sparkHome  string
	mode       string
	apps       int
	perMinute  float64
	timeout    time.Duration
	keep       bool
	namespace  string
	extraArgs  string
	webhook    bool
	scenario   string
	gang       bool
	// scheduler is the batch scheduler of the gang scenario's applications (gangSchedulers).
	scheduler string
	// enforcement and load: the gang scenario's --gang-enforcement ("": the operator's default)
	// and competing load ("none" or "competing").
	enforcement string
	load        string
	// queues is the scale scenario's number of Queues.
	queues int
	// files are the arguments: the spread scenario's RESULT lines.
	files []string
}

func main() {
	var c config
	flag.StringVar(&c.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the local cluster")
	flag.StringVar(&c.operator, "operator", "bin/spark-operator", "operator binary to start")
	flag.StringVar(&c.sparkHome, "spark-home", "", "SPARK_HOME for the spark-submit mode")
	flag.StringVar(&c.mode, "mode", "native", "submission mode: native or spark-submit")
	flag.IntVar(&c.apps, "apps", 1000, "applications to create")
	flag.Float64Var(&c.perMinute, "rate", 0, "offered rate in applications per minute; 0 creates as fast as possible")
	flag.DurationVar(&c.timeout, "timeout", 15*time.Minute, "give up after this long")
	flag.BoolVar(&c.keep, "keep", false, "keep the namespace and its applications afterwards")
	flag.StringVar(&c.namespace, "namespace", "", "restart, failover: reuse this namespace (kept by an earlier run with --keep) and the finished applications in it")
	flag.StringVar(&c.extraArgs, "operator-args", "", "extra flags for the operator, space-separated")
	flag.BoolVar(&c.webhook, "webhook", false, "run the operator with its admission webhooks and report their latency")
	flag.StringVar(&c.scenario, "scenario", "submit", `what to measure: "submit" (submission speed), "restart" or "failover" `+
		`(time to a new application's driver after the operator is killed, with --apps finished applications present), `+
		`"gang" (--apps mixed-size applications at once, with or without (--gang=false) the gang scheduler), `+
		`"scale" (the gang scheduler with --apps of the gang scenario's applications queued at once across --queues Queues, on every node of the cluster), `+
		`"real-node" (--apps small SparkPi applications run for real, natively and then by spark-submit; a cluster up with --real-node), `+
		`"spread" (a Markdown table of the gang RESULT lines in the files given as arguments, or standard input: each comparison's runs and the least–most of its figures)`)
	flag.BoolVar(&c.gang, "gang", true, `gang: run the operator with the gang scheduler as the default (false: the same load without it)`)
	flag.StringVar(&c.scheduler, "scheduler", "gang", `gang: the applications' batch scheduler: "gang" (the embedded one), "kubernetes" (its Workload API variant; `+
		`a cluster up with --workload-api), "kubernetes-naive" (Workload and PodGroups with no admission), "external" (the example external scheduler, run in this process), `+
		`"volcano", "yunikorn", "kube-scheduler" (coscheduling), "kueue" (its SparkApplication integration, the run making its ClusterQueue and LocalQueue; the operator with its gang core, which admits what Kueue resumes by the nodes' fit), "kueue-alone" (the same with no batch scheduler in the operator: Kueue's quota alone): `+
		`the real schedulers, started on the cluster by hack/local-cluster.sh volcano, yunikorn, coscheduling, kueue`)
	flag.StringVar(&c.enforcement, "enforcement", "", `gang: the operator's --gang-enforcement, "advisory", "placeholders" or "plugin" (the cluster's scheduler must be spark-scheduler: hack/local-cluster.sh up --spark-scheduler) (empty: its default); prints the RESULT line of the gang comparisons`)
	flag.StringVar(&c.load, "load", "none", `gang: "competing" runs plain pods beside the applications, arriving and leaving steadily and taking ~30% of the CPU`)
	flag.IntVar(&c.queues, "queues", 20, `scale: Queues of different priorities and quotas the applications are spread over`)
	flag.Parse()
	c.files = flag.Args()
	if c.load != "none" && c.load != "competing" {
		fmt.Fprintf(os.Stderr, "--load: %q is neither none nor competing\n", c.load)
		os.Exit(2)
	}
	scenarios := map[string]func(context.Context, config) error{
		"submit":   run,
		"restart":  runRestart,
		"failover": runFailover,
		"gang":     runGang,
		"scale":    runScale,
		// real-node (realnode.go): real Spark, native submission against spark-submit.
		"real-node": runRealNode,
		"spread":    runSpread,
	}
	scenario, ok := scenarios[c.scenario]
	if !ok {
		fmt.Fprintf(os.Stderr, "bench: unknown --scenario %q\n", c.scenario)
		os.Exit(2)
	}
	if err := scenario(context.Background(), c); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// benchEnv is what every scenario works in: clients of the local cluster and a namespace of
// its own, removed (and waited for) by cleanup unless --keep.
type benchEnv struct {
	cfg     *rest.Config
	cl      client.Client
	cs      kubernetes.Interface
	ns      string
	cleanup func()
	// own counts the benchmark's own requests (apicount.go).
	own *ownRequests
}

func newBenchEnv(ctx context.Context, c config, prefix string) (*benchEnv, error) {
	if c.apps < 1 {
		return nil, fmt.Errorf("--apps must be at least 1")
	}
	if c.kubeconfig == "" {
		return nil, fmt.Errorf("--kubeconfig (or KUBECONFIG) is required")
	}
	restCfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		return nil, err
	}
	restCfg.QPS, restCfg.Burst = 2000, 4000
	own := &ownRequests{n: map[requestKey]float64{}}
	restCfg.Wrap(own.wrap)
	cl, err := client.New(restCfg, client.Options{Scheme: cluster.Scheme})
	if err != nil {
		return nil, err
	}
	e := &benchEnv{cfg: restCfg, cl: cl, cs: kubernetes.NewForConfigOrDie(restCfg), cleanup: func() {}, own: own}
	if c.namespace != "" {
		e.ns = c.namespace
		return e, nil
	}
	e.ns = fmt.Sprintf("bench-%s-%d", prefix, time.Now().Unix())
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}); err != nil {
		return nil, err
	}
	if !c.keep {
		// Wait for the namespace to be gone: deleting thousands of objects loads the API
		// server, and the next run must not measure that.
		e.cleanup = func() {
			nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}
			_ = cl.Delete(context.Background(), nsObj)
			_ = cl.Delete(context.Background(), &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e.ns}})
			_ = cl.Delete(context.Background(), &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e.ns}})
			_ = os.RemoveAll(webhookCertDir(e.ns))
			_ = wait.PollUntilContextTimeout(context.Background(), time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
				err := cl.Get(ctx, client.ObjectKeyFromObject(nsObj), nsObj)
				return apierrors.IsNotFound(err), nil
			})
		}
	}
	if err := cl.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "spark"}}); err != nil {
		e.cleanup()
		return nil, err
	}
	return e, nil
}

// inParallel calls do for 0 … n-1 from workers goroutines, starting call i no sooner than
// i×interval after the first when interval is positive, and returns how many calls failed
// (each failure is printed).
func inParallel(n, workers int, interval time.Duration, do func(i int) error) int {
	start := time.Now()
	jobs := make(chan int)
	var failed atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := do(i); err != nil {
					failed.Add(1)
					fmt.Fprintln(os.Stderr, err)
				}
			}
		}()
	}
	for i := range n {
		if interval > 0 {
			if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
				time.Sleep(wait)
			}
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return int(failed.Load())
}

func benchApp(ns string, i int) *v1beta2.SparkApplication {
	return &v1beta2.SparkApplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("bench-%05d", i)},
		Spec: v1beta2.SparkApplicationSpec{
			Type:                v1beta2.SparkApplicationTypeScala,
			Mode:                v1beta2.DeployModeCluster,
			SparkVersion:        "4.0.4",
			Image:               ptr.To("docker.io/apache/spark:4.0.4"),
			MainClass:           ptr.To("org.apache.spark.examples.SparkPi"),
			MainApplicationFile: "local:///opt/spark/examples/jars/spark-examples.jar",
			Arguments:           []string{"100"},
			Driver: v1beta2.DriverSpec{SparkPodSpec: v1beta2.SparkPodSpec{
				Cores: ptr.To[int32](1), Memory: ptr.To("512m"), ServiceAccount: ptr.To("spark"),
			}},
			Executor: v1beta2.ExecutorSpec{SparkPodSpec: v1beta2.SparkPodSpec{
				Cores: ptr.To[int32](1), Memory: ptr.To("512m"),
			}, Instances: ptr.To[int32](1)},
		},
	}
}

// webhookHistogram is the webhook's own latency metric (webhook/metrics.go).
const webhookHistogram = "spark_webhook_request_duration_seconds"

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// operatorProcess is the operator the benchmark started and measures.
type operatorProcess struct {
	cmd        *exec.Cmd
	metricsURL string
	log        string
	waitOnce   sync.Once
	exited     chan struct{}
}

// metrics scrapes the operator's metrics endpoint.
func (o *operatorProcess) metrics() (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(o.metricsURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// labelValue returns the value of m's label name, or "".
func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// webhookLatency reads the webhook's own request-duration histogram from the operator's
// metrics and estimates p50 and p99 within its buckets, as Prometheus' histogram_quantile does.
func (o *operatorProcess) webhookLatency() (p50, p99 time.Duration, count uint64, err error) {
	families, err := o.metrics()
	if err != nil {
		return 0, 0, 0, err
	}
	family, ok := families[webhookHistogram]
	if !ok {
		return 0, 0, 0, fmt.Errorf("the operator exposes no %s", webhookHistogram)
	}
	cumulative := map[float64]uint64{}
	for _, m := range family.GetMetric() {
		h := m.GetHistogram()
		count += h.GetSampleCount()
		for _, b := range h.GetBucket() {
			cumulative[b.GetUpperBound()] += b.GetCumulativeCount()
		}
	}
	bounds := slices.Sorted(maps.Keys(cumulative))
	quantile := func(q float64) time.Duration {
		rank := q * float64(count)
		lower, below := 0.0, uint64(0)
		for _, ub := range bounds {
			if n := cumulative[ub]; float64(n) >= rank {
				if math.IsInf(ub, 1) {
					ub = lower
				}
				frac := 0.0
				if n > below {
					frac = (rank - float64(below)) / float64(n-below)
				}
				return time.Duration((lower + (ub-lower)*frac) * float64(time.Second))
			}
			lower, below = ub, cumulative[ub]
		}
		return time.Duration(lower * float64(time.Second))
	}
	return quantile(0.5), quantile(0.99), count, nil
}

// webhookCertDir is where the operators of a run on ns keep their webhook's certificates: one
// directory for them all, as a failover's standby serves with the leader's; the run's cleanup
// removes it.
func webhookCertDir(ns string) string { return filepath.Join(os.TempDir(), ns+"-certs") }

// startOperator starts the operator on ns with the benchmark's flags, then args, logging to a
// file named after name.
func startOperator(ctx context.Context, c config, ns, name string, args ...string) (*operatorProcess, error) {
	health, err := freePort()
	if err != nil {
		return nil, err
	}
	metrics, err := freePort()
	if err != nil {
		return nil, err
	}
	args = append([]string{
		"--kubeconfig", c.kubeconfig, "--namespaces", ns, "--submission-mode", c.mode,
		"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(metrics),
		"--health-probe-bind-address", "127.0.0.1:" + strconv.Itoa(health),
	}, args...)
	if c.webhook {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		args = append(args, "--enable-webhook", "--webhook-url-host", "localhost", "--webhook-port", strconv.Itoa(port),
			"--webhook-secret-namespace", ns, "--webhook-config-name", ns, "--webhook-cert-dir", webhookCertDir(ns))
	}
	if c.sparkHome != "" {
		args = append(args, "--spark-home", c.sparkHome)
	}
	args = append(args, strings.Fields(c.extraArgs)...)
	// One log per run (its namespace is the run's own), kept for reading after the run.
	logPath := filepath.Join(os.TempDir(), "bench-operator-"+name+"-"+ns+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, c.operator, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", c.operator, err)
	}
	op := &operatorProcess{cmd: cmd, metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics), log: logPath}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", health))
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		op.stop()
		return nil, fmt.Errorf("operator not ready (log: %s): %w", logPath, err)
	}
	return op, nil
}

// done is closed once the process has exited.
func (o *operatorProcess) done() <-chan struct{} {
	o.waitOnce.Do(func() {
		o.exited = make(chan struct{})
		go func() { _ = o.cmd.Wait(); close(o.exited) }()
	})
	return o.exited
}

func (o *operatorProcess) stop() {
	_ = o.cmd.Process.Signal(os.Interrupt)
	select {
	case <-o.done():
	case <-time.After(15 * time.Second):
		o.kill()
	}
}

// kill ends the operator as a crash or an OOM kill does: no lease released, nothing flushed.
func (o *operatorProcess) kill() {
	_ = o.cmd.Process.Kill()
	<-o.done()
}

// settle is how long the benchmark waits after the last driver appears before it reads the
// operator's resident memory again.
const settle = 20 * time.Second

// rssMiB reads one of the kernel's figures of the operator's resident memory: VmHWM, the
// high-water mark, or VmRSS, the current size.
func (o *operatorProcess) rssMiB(field string) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", o.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0, err
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, o.cmd.Process.Pid)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
