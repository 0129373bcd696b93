package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/controllers/metrics"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/webhook"
)

// optionsCase is a command line and what it parses to: options check accepts, or an error
// containing wantErr.
type optionsCase struct {
	name    string
	args    []string
	check   func(t *testing.T, o *options)
	wantErr string
}

// runOptionsCases parses each case's command line with parse and checks the outcome.
func runOptionsCases(t *testing.T, tests []optionsCase, parse func(args []string) (*options, error)) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parse(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, o)
		})
	}
}

func TestParseOptions(t *testing.T) {
	tests := []optionsCase{
		{
			name: "defaults",
			check: func(t *testing.T, o *options) {
				if o.submissionMode != submission.ModeNative || o.namespaces != nil || !o.namespaceSelector.Empty() ||
					o.driverPodGracePeriod != 10*time.Second || o.maxTrackedExecutors != 1000 || o.leaderElect ||
					o.unschedulableTimeout != 0 || o.driverStartTimeout != 5*time.Minute || o.leaseDuration != 15*time.Second ||
					o.submissionWorkers != 32 || !o.controllerEnabled || o.webhook.CertProvider != webhook.CertProviderSelf ||
					o.memoryLimitRatio != 0.9 {
					t.Errorf("unexpected defaults: %+v", o)
				}
			},
		},
		{
			name: "namespaces list and selector",
			args: []string{"--namespaces", "a, b,,c", "--namespace-selector", "spark=enabled"},
			check: func(t *testing.T, o *options) {
				if diff := cmp.Diff([]string{"a", "b", "c"}, o.namespaces); diff != "" {
					t.Error(diff)
				}
				if o.namespaceSelector.String() != "spark=enabled" {
					t.Errorf("selector = %s", o.namespaceSelector)
				}
			},
		},
		{
			name: "known schedulers",
			args: []string{"--known-schedulers", "volcano, yunikorn,,"},
			check: func(t *testing.T, o *options) {
				if diff := cmp.Diff([]string{"volcano", "yunikorn"}, o.webhook.KnownSchedulers); diff != "" {
					t.Error(diff)
				}
			},
		},
		{
			name: "Kubeflow's metrics flags",
			args: []string{"--metrics-endpoint", "/prom", "--metrics-prefix", "kf_", "--metrics-labels", "app_type, namespace",
				"--metrics-labels", "team", "--metrics-job-start-latency-buckets", "30, 60,90", "--metrics-job-submit-latency-buckets", "0.5,1"},
			check: func(t *testing.T, o *options) {
				want := metrics.Options{Prefix: "kf_", Labels: []string{"app_type", "namespace", "team"},
					StartLatencyBuckets: []float64{30, 60, 90}, SubmitLatencyBuckets: []float64{0.5, 1}}
				if diff := cmp.Diff(want, o.metrics.opts); diff != "" || o.metrics.endpoint != "/prom" || len(o.metrics.extraHandlers()) != 1 {
					t.Errorf("metrics %+v: %s", o.metrics, diff)
				}
			},
		},
		{name: "metrics endpoint not a path", args: []string{"--metrics-endpoint", "prom"}, wantErr: "--metrics-endpoint must be a path"},
		{name: "metrics prefix not a name", args: []string{"--metrics-prefix", "a-b"}, wantErr: `metrics prefix "a-b"`},
		{name: "metrics buckets not numbers", args: []string{"--metrics-job-start-latency-buckets", "30,x"}, wantErr: `"x" is not a number of seconds`},
		{name: "memory limit ratio above 1", args: []string{"--memory-limit-ratio", "1.5"}, wantErr: "--memory-limit-ratio must be within 0 (none) and 1, got 1.5"},
		{name: "negative memory limit ratio", args: []string{"--memory-limit-ratio", "-0.1"}, wantErr: "--memory-limit-ratio must be within 0 (none) and 1"},
		{
			// The Kubeflow operator's batch scheduler flags.
			name: "Kubeflow batch scheduler flags",
			args: []string{"--enable-batch-scheduler", "--kube-scheduler-names", "kube-scheduler, other,", "--default-batch-scheduler", "kube-scheduler"},
			check: func(t *testing.T, o *options) {
				if diff := cmp.Diff([]string{"kube-scheduler", "other"}, o.kubeSchedulerNames); diff != "" {
					t.Error(diff)
				}
				if !o.batchSchedulerEnabled || o.defaultBatchSched != "kube-scheduler" || o.coschedulingScheduleTimeout != time.Minute {
					t.Errorf("batch scheduler options: enabled %v, default %q, timeout %s", o.batchSchedulerEnabled, o.defaultBatchSched, o.coschedulingScheduleTimeout)
				}
			},
		},
		{name: "kube-scheduler names without --enable-batch-scheduler", args: []string{"--kube-scheduler-names", "kube-scheduler"},
			wantErr: "--kube-scheduler-names needs --enable-batch-scheduler"},
		{name: "a kube-scheduler name that is no name", args: []string{"--enable-batch-scheduler", "--kube-scheduler-names", "Kube Scheduler"},
			wantErr: `--kube-scheduler-names: "Kube Scheduler" is not a scheduler name`},
		{name: "a kube-scheduler name taken by the operator's own", args: []string{"--enable-batch-scheduler", "--kube-scheduler-names", "gang"},
			wantErr: `--kube-scheduler-names: "gang" is the name of another batch scheduler of the operator`},
		{name: "a kube-scheduler name taken by Volcano", args: []string{"--enable-batch-scheduler", "--kube-scheduler-names", "kube-scheduler,volcano"},
			wantErr: `--kube-scheduler-names: "volcano" is the name of another batch scheduler of the operator`},
		{name: "a kube-scheduler name twice", args: []string{"--enable-batch-scheduler", "--kube-scheduler-names", "a,a"},
			wantErr: `--kube-scheduler-names: "a" is named twice`},
		{name: "a schedule timeout under a second", args: []string{"--coscheduling-schedule-timeout", "10ms"},
			wantErr: "--coscheduling-schedule-timeout must be at least 1s"},
		{
			name: "gang enforcement",
			args: []string{"--gang-enforcement", "placeholders"},
			check: func(t *testing.T, o *options) {
				if o.gangEnforcement != "placeholders" || o.gangPlaceholderImage != "registry.k8s.io/pause:3.10" {
					t.Errorf("enforcement = %q, image %q", o.gangEnforcement, o.gangPlaceholderImage)
				}
			},
		},
		{name: "start backlog when unset", check: wantStartBacklog(256)},
		{name: "a smaller start backlog with placeholders", args: []string{"--gang-enforcement", "placeholders"}, check: wantStartBacklog(96)},
		{name: "a start backlog given wins over the placeholders' default", args: []string{"--gang-enforcement", "placeholders", "--gang-start-backlog", "256"},
			check: wantStartBacklog(256)},
		{name: "pacing off with placeholders", args: []string{"--gang-enforcement", "placeholders", "--gang-start-backlog=0"}, check: wantStartBacklog(0)},
		{
			name: "the plugin enforcement",
			args: []string{"--gang-enforcement", "plugin"},
			check: func(t *testing.T, o *options) {
				if o.gangEnforcement != "plugin" {
					t.Errorf("enforcement = %q", o.gangEnforcement)
				}
			},
		},
		{
			name:    "an unknown enforcement",
			args:    []string{"--gang-enforcement", "strict"},
			wantErr: `--gang-enforcement: unknown enforcement "strict"; use "placeholders", "plugin" or "advisory"`,
		},
		{
			name:    "a known scheduler that is no name",
			args:    []string{"--known-schedulers", "Not A Name"},
			wantErr: "--known-schedulers",
		},
		{
			name: "spark-submit mode",
			args: []string{"--submission-mode", "spark-submit"},
			check: func(t *testing.T, o *options) {
				if o.submissionMode != submission.ModeSparkSubmit || o.submissionWorkers != 4 {
					t.Errorf("mode = %s, workers = %d; want spark-submit with 4 workers", o.submissionMode, o.submissionWorkers)
				}
			},
		},
		{
			name: "SparkConnect controller on by default",
			check: func(t *testing.T, o *options) {
				if !o.sparkConnectEnabled {
					t.Error("the SparkConnect controller is off by default")
				}
			},
		},
		{
			name: "SparkConnect controller off",
			args: []string{"--enable-spark-connect=false"},
			check: func(t *testing.T, o *options) {
				if o.sparkConnectEnabled {
					t.Error("--enable-spark-connect=false left the SparkConnect controller on")
				}
			},
		},
		{name: "bad mode", args: []string{"--submission-mode", "jvm"}, wantErr: `unknown submission mode "jvm"`},
		{name: "bad namespace", args: []string{"--namespaces", "Not_A_Namespace"}, wantErr: `"Not_A_Namespace" is not a namespace name`},
		{name: "bad selector", args: []string{"--namespace-selector", "a=(b"}, wantErr: "--namespace-selector"},
		{
			name: "leader election timing and the unschedulable timeout",
			args: []string{"--leader-election-lease-duration=8s", "--leader-election-renew-deadline=5s",
				"--leader-election-retry-period=1s", "--driver-unschedulable-timeout=5m", "--driver-start-timeout=90s"},
			check: func(t *testing.T, o *options) {
				got := []time.Duration{o.leaseDuration, o.renewDeadline, o.retryPeriod, o.unschedulableTimeout, o.driverStartTimeout}
				if diff := cmp.Diff([]time.Duration{8 * time.Second, 5 * time.Second, time.Second, 5 * time.Minute, 90 * time.Second}, got); diff != "" {
					t.Errorf("[lease, renew, retry, unschedulable, start] (-want +got):\n%s", diff)
				}
			},
		},
		{name: "renew deadline beyond the lease", args: []string{"--leader-election-renew-deadline=20s"},
			wantErr: "leader election needs 0 < --leader-election-retry-period (2s) < --leader-election-renew-deadline (20s) < --leader-election-lease-duration (15s)"},
		{name: "negative unschedulable timeout", args: []string{"--driver-unschedulable-timeout=-1s"},
			wantErr: "--driver-unschedulable-timeout must not be negative, got -1s"},
		{name: "negative start timeout", args: []string{"--driver-start-timeout=-1s"},
			wantErr: "--driver-start-timeout must not be negative, got -1s"},
		{name: "negative workers", args: []string{"--submission-workers", "-1"}, wantErr: "--submission-workers must be at least 1"},
		{
			name: "explicit workers win over the mode's default",
			args: []string{"--submission-mode", "spark-submit", "--submission-workers", "2"},
			check: func(t *testing.T, o *options) {
				if o.submissionWorkers != 2 {
					t.Errorf("workers = %d, want 2", o.submissionWorkers)
				}
			},
		},
		{name: "stray argument", args: []string{"extra"}, wantErr: "unexpected arguments"},
		{name: "webhook without a way to be reached", args: []string{"--enable-webhook"}, wantErr: "--enable-webhook needs --webhook-service-name"},
		{name: "webhook by URL without a Secret namespace", args: []string{"--enable-webhook", "--webhook-url-host", "127.0.0.1"}, wantErr: "needs --webhook-secret-namespace"},
		{name: "bad failure policy", args: []string{"--webhook-failure-policy", "Maybe"}, wantErr: `--webhook-failure-policy must be "Fail" or "Ignore"`},
		{name: "webhook timeout out of range", args: []string{"--webhook-timeout-seconds", "31"}, wantErr: "--webhook-timeout-seconds must be between 1 and 30, got 31"},
		{name: "nothing to run", args: []string{"--enable-controller=false"}, wantErr: "--enable-controller=false needs --enable-webhook"},
		{name: "external scheduler without gang", args: []string{"--external-scheduler-url", "http://s/"}, wantErr: "--external-scheduler-url needs --enable-gang-scheduler"},
		{name: "external scheduler URL with no scheme", args: []string{"--enable-gang-scheduler", "--external-scheduler-url", "s:8090"}, wantErr: "not an http or https URL"},
		{name: "external as the default", args: []string{"--enable-gang-scheduler", "--external-scheduler-url", "http://s/", "--default-batch-scheduler", "external"}, wantErr: "cannot be the default yet"},
		{
			name: "external scheduler",
			args: []string{"--enable-gang-scheduler", "--external-scheduler-url", "https://s:8443/", "--external-scheduler-timeout", "2s"},
			check: func(t *testing.T, o *options) {
				if o.external.URL != "https://s:8443/" || o.external.Timeout != 2*time.Second || o.externalInterval != 5*time.Second {
					t.Errorf("external scheduler options = %+v, interval %s", o.external, o.externalInterval)
				}
			},
		},
		{name: "unknown certificate provider", args: []string{"--webhook-cert-provider", "vault"}, wantErr: `--webhook-cert-provider: certificate provider must be "self" or "external", got "vault"`},
		{name: "external certificates need their folder", args: []string{"--enable-webhook", "--webhook-cert-provider", "external"}, wantErr: "needs --webhook-cert-dir"},
		{
			name: "webhook Deployment with cert-manager's certificate",
			args: []string{"--enable-controller=false", "--enable-webhook", "--webhook-cert-provider", "external", "--webhook-cert-dir", "/etc/webhook/certs"},
			check: func(t *testing.T, o *options) {
				if o.controllerEnabled || !o.webhookEnabled || o.webhook.CertProvider != webhook.CertProviderExternal || o.webhook.CertDir != "/etc/webhook/certs" {
					t.Errorf("options = %+v", o)
				}
			},
		},
		{name: "selector the webhook cannot express", args: []string{"--namespace-selector", "tier>3"}, wantErr: "cannot select namespaces for the webhook"},
		{
			name: "webhook follows the watched namespaces",
			args: []string{"--enable-webhook", "--webhook-service-name", "svc", "--webhook-service-namespace", "ops",
				"--namespaces", "a,b", "--namespace-selector", "spark=enabled,!legacy", "--webhook-failure-policy", "Ignore"},
			check: func(t *testing.T, o *options) {
				want := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
					{Key: "legacy", Operator: metav1.LabelSelectorOpDoesNotExist, Values: []string{}},
					{Key: "spark", Operator: metav1.LabelSelectorOpIn, Values: []string{"enabled"}},
				}}
				if diff := cmp.Diff(want, o.webhook.NamespaceSelector); diff != "" {
					t.Errorf("namespace selector (-want +got):\n%s", diff)
				}
				if !o.webhookEnabled || o.webhook.FailurePolicy != "Ignore" || o.webhook.ServiceNamespace != "ops" {
					t.Errorf("webhook options = %+v", o.webhook)
				}
			},
		},
	}
	runOptionsCases(t, tests, func(args []string) (*options, error) {
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		return parseOptions(fs, args)
	})
}

// wantStartBacklog checks the gang start backlog parsed.
func wantStartBacklog(want int) func(*testing.T, *options) {
	return func(t *testing.T, o *options) {
		if o.gangStartBacklog != want {
			t.Errorf("start backlog = %d, want %d", o.gangStartBacklog, want)
		}
	}
}
