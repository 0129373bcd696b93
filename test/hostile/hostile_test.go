/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package hostile feeds the operator, webhooks on, with generated malformed and hostile
// SparkApplications and ScheduledSparkApplications through the real API server. Each object
// must be refused with a message naming a field it got wrong, or be accepted and end terminal
// with a message, or wait with a visible reason. The operator must never panic nor exit.
//
//	go test ./test/hostile -hostile.count=2000 -hostile.seed=7
package hostile

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/examples/external-scheduler/sjf"
	"github.com/sparkop/spark-operator/test/cluster"
)

var (
	count = flag.Int("hostile.count", 200, "how many objects to generate (a fifth of them ScheduledSparkApplications)")
	seed  = flag.Uint64("hostile.seed", 1, "seed of the generator; a failure names the seed and object to replay")
)

// A mutation makes an object hostile in one way. field is what a refusal must name (a part of
// the field's path as the API server or the webhook prints it).
type mutation struct {
	field string
	apply func(r *rand.Rand, app *v1beta2.SparkApplication)
}

func spec(f func(r *rand.Rand, s *v1beta2.SparkApplicationSpec)) func(*rand.Rand, *v1beta2.SparkApplication) {
	return func(r *rand.Rand, a *v1beta2.SparkApplication) { f(r, &a.Spec) }
}

func pick[T any](r *rand.Rand, vs ...T) T { return vs[r.IntN(len(vs))] }

var (
	int32s = []int32{math.MinInt32, -1, 0, 1, 2, 1000, math.MaxInt32 - 1, math.MaxInt32}
	int64s = []int64{math.MinInt64, -1, 0, 1, 5, 86400, math.MaxInt64 / int64(time.Second), math.MaxInt64/int64(time.Second) + 1, math.MaxInt64}
	sizes  = []string{"", "0", "1", "512m", "1g", "-1g", "1.5g", "1e9", "lots", "9999999999999g", "99999999999999999999g",
		"8191p", "9999999999999p", " 2g ", "2G", "2gb", "2x", "\u00b2g"}
	quantities = []string{"", "0", "100m", "1", "1.5", "-1", "1e9", "999999999999999", "abc", "0.0001m"}
	strs       = []string{"", " ", "x", strings.Repeat("a", 300), "\u202e\u0000", "../../etc/passwd", "$(rm -rf /)", "ü"}
)

var mutations = []mutation{
	{"timeToLiveSeconds", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) { s.TimeToLiveSeconds = ptr.To(pick(r, int64s...)) })},
	{"restartPolicy", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.RestartPolicy = v1beta2.RestartPolicy{
			Type:                             pick(r, v1beta2.RestartPolicyNever, v1beta2.RestartPolicyOnFailure, v1beta2.RestartPolicyAlways, "Sometimes"),
			OnFailureRetries:                 pick(r, nil, ptr.To(pick(r, int32s...))),
			OnSubmissionFailureRetries:       pick(r, nil, ptr.To(pick(r, int32s...))),
			OnFailureRetryInterval:           pick(r, nil, ptr.To(pick(r, int64s...))),
			OnSubmissionFailureRetryInterval: pick(r, nil, ptr.To(pick(r, int64s...))),
		}
	})},
	{"failureRetries", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) { s.FailureRetries = ptr.To(pick(r, int32s...)) })},
	{"retryInterval", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) { s.RetryInterval = ptr.To(pick(r, int64s...)) })},
	{"instances", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) { s.Executor.Instances = ptr.To(pick(r, int32s...)) })},
	{"cores", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		p := pick(r, &s.Driver.SparkPodSpec, &s.Executor.SparkPodSpec)
		p.Cores = ptr.To(pick(r, int32s...))
	})},
	{"core", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		p := pick(r, &s.Driver.SparkPodSpec, &s.Executor.SparkPodSpec)
		p.CoreRequest, p.CoreLimit = ptr.To(pick(r, quantities...)), pick(r, nil, ptr.To(pick(r, quantities...)))
	})},
	{"memory", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		p := pick(r, &s.Driver.SparkPodSpec, &s.Executor.SparkPodSpec)
		p.Memory, p.MemoryOverhead = ptr.To(pick(r, sizes...)), pick(r, nil, ptr.To(pick(r, sizes...)))
	})},
	{"memoryOverheadFactor", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.MemoryOverheadFactor = ptr.To(pick(r, "", "0", "0.1", "-1", "1e300", "NaN", "Inf", "x"))
	})},
	{"memoryLimit", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.Driver.MemoryLimit = ptr.To(pick(r, quantities...))
	})},
	{"terminationGracePeriodSeconds", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.Driver.TerminationGracePeriodSeconds = ptr.To(pick(r, int64s...))
	})},
	{"gpu", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.Executor.GPU = &v1beta2.GPUSpec{Name: pick(r, "nvidia.com/gpu", "", "not a name"), Quantity: pick(r, int64s...)}
	})},
	{"dynamicAllocation", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true,
			InitialExecutors: ptr.To(pick(r, int32s...)), MinExecutors: ptr.To(pick(r, int32s...)),
			MaxExecutors: ptr.To(pick(r, int32s...)), ShuffleTrackingTimeout: ptr.To(pick(r, int64s...))}
	})},
	{"port", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.Monitoring = &v1beta2.MonitoringSpec{ExposeDriverMetrics: true,
			Prometheus: &v1beta2.PrometheusSpec{JmxExporterJar: pick(r, strs...), Port: ptr.To(pick(r, int32s...))}}
	})},
	{"nodeSelector", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		// Matches no node: accepted, and never placed.
		sel := map[string]string{"sparkop.dev/no-such-node": "true"}
		if r.IntN(2) == 0 {
			s.NodeSelector = sel
		} else {
			s.Driver.NodeSelector = sel
		}
	})},
	{"sparkConf", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.SparkConf = map[string]string{pick(r, "spark.master", "spark.kubernetes.namespace", "spark.kubernetes.authenticate.x",
			"spark.executor.instances", "spark.driver.memory", "spark.driver.port", "", " "): pick(r, strs...)}
	})},
	{"type", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.Type = pick(r, v1beta2.SparkApplicationTypePython, v1beta2.SparkApplicationTypeR, "Cobol", "")
	})},
	{"mode", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.Mode = pick(r, v1beta2.DeployModeClient, "local", "")
	})},
	{"sparkVersion", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.SparkVersion = pick(r, "", "latest", "2.4.8", "99.0.0", "v3")
		s.Driver.Template = pick(r, nil, &corev1.PodTemplateSpec{})
	})},
	{"mainApplicationFile", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) { s.MainApplicationFile = pick(r, strs...) })},
	{"image", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) { s.Image = ptr.To(pick(r, strs...)) })},
	{"arguments", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		for range r.IntN(50) {
			s.Arguments = append(s.Arguments, pick(r, strs...))
		}
	})},
	{"deps", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.Deps.Jars = []string{pick(r, strs...), "http://[::1", "s3a://bucket/a b.jar"}
		s.Deps.Packages = []string{pick(r, "a:b:c", "not-coordinates", "")}
	})},
	{"env", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.Driver.EnvVars = map[string]string{pick(r, "A", "1BAD", "", "A=B"): pick(r, strs...)}
	})},
	{"labels", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.Driver.Labels = map[string]string{pick(r, "ok", "spark-role", "bad key!", strings.Repeat("k", 70)): pick(r, "v", strings.Repeat("v", 70), "bad value!")}
	})},
	{"volumeMounts", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.Driver.VolumeMounts = []corev1.VolumeMount{{Name: pick(r, "missing", "", "UPPER"), MountPath: pick(r, "/x", "", "relative")}}
	})},
	{"ports", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.Driver.Ports = []v1beta2.Port{{Name: pick(r, "p", "", "bad name!"), Protocol: pick(r, corev1.ProtocolTCP, "SCTP", "QUIC"),
			ContainerPort: pick(r, int32s...)}}
	})},
	{"servicePort", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.SparkUIOptions = &v1beta2.SparkUIConfiguration{ServicePort: ptr.To(pick(r, int32s...))}
	})},
	{"podName", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.Driver.PodName = ptr.To(pick(r, "UPPER", "", strings.Repeat("p", 300), "ok-name"))
	})},
	// Every batch scheduler the operator has, enabled (see TestHostileInput), and ones it
	// has not: each either refuses the application naming what is wrong, or takes it to a
	// state with a reason (queued, failed, waiting for a scheduler that does not run here).
	{"batchScheduler", spec(func(r *rand.Rand, s *v1beta2.SparkApplicationSpec) {
		s.BatchScheduler = ptr.To(pick(r, "gang", "volcano", "yunikorn", "kube-scheduler", "kubernetes", "external", "no-such", ""))
		opts := &v1beta2.BatchSchedulerConfiguration{}
		switch r.IntN(4) {
		case 0:
			opts.Queue = ptr.To(pick(r, append([]string{"default", "root.default", "no-such-queue"}, strs...)...))
		case 1:
			opts.PriorityClassName = ptr.To(pick(r, append([]string{"no-such-class", "system-cluster-critical"}, strs...)...))
		case 2:
			opts.Resources = corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse(pick(r, "0", "1", "100m", "1000000")),
				corev1.ResourceMemory: apiresource.MustParse(pick(r, "0", "1Gi", "1Ei"))}
		default:
			opts = nil
		}
		s.BatchSchedulerOptions = opts
	})},
	{"name", func(r *rand.Rand, a *v1beta2.SparkApplication) {
		a.Name = pick(r, strings.Repeat("n", 64), "UPPER-"+a.Name, a.Name+".dotted", "9"+a.Name, a.Name+strings.Repeat("x", 40))
	}},
}

// schedules for the ScheduledSparkApplications: bad ones, ones that never fire, and hourly
// ones (none fire during the test).
var schedules = []string{"@hourly", "@every 1h", "0 0 30 2 *", "* * * * * * *", "@every 0s", "@every 999999999h",
	"CRON_TZ=Mars/Olympus @hourly", "every day", "", "@every -1h", "0 3 * * *"}

// generated is one object and the mutations it carries.
type generated struct {
	obj     client.Object
	applied []string
}

func (g generated) String() string {
	return fmt.Sprintf("%T %s (%s)", g.obj, g.obj.GetName(), strings.Join(g.applied, ", "))
}

func base(ns, name string) *v1beta2.SparkApplication {
	app := cluster.SparkPi(ns, name)
	app.Spec.Executor.CoreRequest = ptr.To("10m")
	app.Spec.Driver.CoreRequest = ptr.To("10m")
	return app
}

func generate(r *rand.Rand, ns string, i int) generated {
	app := base(ns, fmt.Sprintf("h-%04d", i))
	var applied []string
	for range 1 + r.IntN(3) {
		m := mutations[r.IntN(len(mutations))]
		m.apply(r, app)
		applied = append(applied, m.field)
	}
	// The simulated kubelet completes the driver after a second, unless a mutation replaced
	// the driver's annotations.
	if app.Spec.Driver.Annotations == nil {
		app.Spec.Driver.Annotations = map[string]string{"kwok.sparkop.dev/run-seconds": "1"}
	}
	if i%5 != 4 {
		return generated{app, applied}
	}
	ssa := &v1beta2.ScheduledSparkApplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app.Name},
		Spec: v1beta2.ScheduledSparkApplicationSpec{
			Schedule: pick(r, schedules...), TimeZone: pick(r, "", "UTC", "Europe/Berlin", "Mars/Olympus", "Local"),
			Template: app.Spec, ConcurrencyPolicy: pick(r, v1beta2.ConcurrencyAllow, v1beta2.ConcurrencyForbid, "Sometimes"),
			SuccessfulRunHistoryLimit: pick(r, nil, ptr.To(pick(r, int32s...))),
			FailedRunHistoryLimit:     pick(r, nil, ptr.To(pick(r, int32s...))),
		},
	}
	applied = append(applied, "schedule", "timeZone", "concurrencyPolicy", "RunHistoryLimit")
	return generated{ssa, applied}
}

// refusedForAField reports whether a refusal names one of the fields the object got wrong.
func refusedForAField(err error, applied []string) bool {
	msg := strings.ToLower(err.Error())
	for _, f := range applied {
		if strings.Contains(msg, strings.ToLower(f)) {
			return true
		}
	}
	return false
}

// settled says whether an accepted application has come to rest in a way a user can read,
// and why not.
func settled(app *v1beta2.SparkApplication) (bool, string) {
	st := app.Status
	switch {
	case st.AppState.State == v1beta2.ApplicationStateCompleted:
		return true, ""
	case st.AppState.State == v1beta2.ApplicationStateFailed:
		return st.AppState.ErrorMessage != "", "FAILED without a message"
	case st.AppState.ErrorMessage != "":
		// Waiting with a reason: a driver that cannot be placed, a retry after a failure.
		return true, ""
	case st.ExecutionAttempts >= 2:
		// restartPolicy Always: it keeps running, as asked.
		return true, ""
	}
	if c := meta.FindStatusCondition(st.Conditions, "Queued"); c != nil && c.Status == metav1.ConditionTrue && c.Message != "" {
		return true, ""
	}
	return false, fmt.Sprintf("state %q, no message", st.AppState.State)
}

func scheduledSettled(ssa *v1beta2.ScheduledSparkApplication) (bool, string) {
	switch ssa.Status.ScheduleState {
	case v1beta2.ScheduleStateScheduled:
		return true, ""
	case v1beta2.ScheduleStateFailedValidation:
		return ssa.Status.Reason != "", "FailedValidation without a reason"
	}
	return false, fmt.Sprintf("scheduleState %q", ssa.Status.ScheduleState)
}

var panicked = regexp.MustCompile(`(?i)panic|fatal error|goroutine \d+ \[`)

func TestHostileInput(t *testing.T) {
	c := cluster.Client(t)
	ctx := context.Background()
	ns := cluster.Namespace(t, c, "hostile")
	external := httptest.NewServer(sjf.Handler())
	t.Cleanup(external.Close)
	op := cluster.StartOperator(t, "operator", "--kubeconfig", cluster.Kubeconfig(t), "--namespaces", ns,
		"--enable-webhook", "--webhook-url-host", "localhost", "--webhook-port", strconv.Itoa(cluster.FreePort(t)),
		"--webhook-secret-namespace", ns, "--webhook-config-name", "hostile-"+ns, "--webhook-cert-dir", t.TempDir(),
		"--submission-workers", "8", "--driver-pod-grace-period", "5s",
		// Every batch scheduler, so that the applications naming one test what it does with them.
		"--enable-gang-scheduler", "--enable-batch-scheduler", "--enable-kubernetes-scheduler",
		"--external-scheduler-url="+external.URL)

	r := rand.New(rand.NewPCG(*seed, uint64(*count)))
	t.Logf("seed %d, %d objects", *seed, *count)
	var accepted []generated
	refused := 0
	for i := range *count {
		g := generate(r, ns, i)
		err := c.Create(ctx, g.obj)
		switch {
		case err == nil:
			accepted = append(accepted, g)
		case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err):
			refused++
			if !refusedForAField(err, g.applied) {
				t.Errorf("%s: refused without naming a field it got wrong: %v", g, err)
			}
		default:
			// Anything else (a webhook that failed, a timeout) is the operator failing.
			t.Errorf("%s: create failed: %v", g, err)
		}
	}
	t.Logf("%d refused, %d accepted", refused, len(accepted))

	// Every accepted object must come to rest with something a user can read.
	var mu sync.Mutex
	why := map[string]string{}
	cluster.Eventually(t, 4*time.Minute, "every accepted object to settle", func() (bool, error) {
		if op.Exited() {
			return false, fmt.Errorf("the operator exited; log: %s", op.Log)
		}
		mu.Lock()
		defer mu.Unlock()
		clear(why)
		for _, g := range accepted {
			if err := c.Get(ctx, client.ObjectKeyFromObject(g.obj), g.obj); err != nil {
				if apierrors.IsNotFound(err) {
					continue // a time to live of 0 deletes it once finished
				}
				return false, err
			}
			var ok bool
			var reason string
			switch o := g.obj.(type) {
			case *v1beta2.SparkApplication:
				ok, reason = settled(o)
			case *v1beta2.ScheduledSparkApplication:
				ok, reason = scheduledSettled(o)
			}
			if !ok {
				why[g.String()] = reason
			}
		}
		return len(why) == 0, nil
	})
	mu.Lock()
	for g, reason := range why {
		t.Errorf("%s did not settle: %s", g, reason)
	}
	mu.Unlock()

	if op.Exited() {
		t.Errorf("the operator exited")
	}
	log, err := os.ReadFile(op.Log)
	if err != nil {
		t.Fatal(err)
	}
	if m := panicked.Find(log); m != nil {
		t.Errorf("the operator's log shows a panic (%q); log: %s", m, op.Log)
	}
}
