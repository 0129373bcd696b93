/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/sparkop/spark-operator/scheduler/external"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/scheduler/reservation"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/webhook"
)

// selectorOperator maps a parsed selector's operator to its LabelSelector spelling; = and ==
// become In and != becomes NotIn, as LabelSelector has no equality operators (nor Gt, Lt).
func selectorOperator(op selection.Operator) (metav1.LabelSelectorOperator, bool) {
	switch op {
	case selection.Equals, selection.DoubleEquals, selection.In:
		return metav1.LabelSelectorOpIn, true
	case selection.NotEquals, selection.NotIn:
		return metav1.LabelSelectorOpNotIn, true
	case selection.Exists:
		return metav1.LabelSelectorOpExists, true
	case selection.DoesNotExist:
		return metav1.LabelSelectorOpDoesNotExist, true
	}
	return "", false
}

// options are the operator's command-line settings.
type options struct {
	kubeconfig string
	// namespaces to watch; empty means all.
	namespaces []string
	// namespaceSelector restricts the watched namespaces to those whose labels match.
	namespaceSelector labels.Selector

	leaderElect          bool
	leaderElectionID     string
	leaderElectionNS     string
	leaseDuration        time.Duration
	renewDeadline        time.Duration
	retryPeriod          time.Duration
	unschedulableTimeout time.Duration
	driverStartTimeout   time.Duration
	nodeLostTimeout      time.Duration
	metricsAddr          string
	metrics              metricsFlags
	pprofAddr            string
	healthProbeAddr      string
	controllerWorkers    int
	submissionWorkers    int
	submissionMode       submission.Mode
	sparkHome            string
	apiQPS               float64
	apiBurst             int
	defaultBatchSched    string
	// The embedded gang scheduler (spec.batchScheduler: gang).
	gangEnabled            bool
	gangBackfill           bool
	gangPreemption         bool
	gangReservationTimeout time.Duration
	gangPreemptionWait     time.Duration
	gangStartBacklog       int
	gangEnforcement        string
	gangPlaceholderImage   string
	kubernetesEnabled      bool // spec.batchScheduler: kubernetes, the gang scheduler's Workload API variant
	kubernetesNaive        bool // spec.batchScheduler: kubernetes-naive, for benchmarks
	// spec.batchScheduler: external, served through the gang scheduler's queues.
	external             external.Config
	externalInterval     time.Duration
	driverPodGracePeriod time.Duration
	maxTrackedExecutors  int
	uiServiceEnabled     bool
	ingressURLFormat     string
	ingressClassName     string
	ingressTLS           []networkingv1.IngressTLS
	ingressAnnotations   map[string]string
	driverPDB            bool
	cacheSyncTimeout     time.Duration
	// defaultTTL is the time to live of finished applications that set none; 0: none.
	defaultTTL time.Duration
	// appSelector, when set, limits the applications (and scheduled ones, and SparkConnects)
	// the controllers see to those whose labels match.
	appSelector labels.Selector
	// logEncoder is "console" (glog's text) or "json"; logVerbosity is -v, for the JSON logger.
	logEncoder   string
	logVerbosity int
	// notes are what start logs about the flags once it has a logger (a flag ignored).
	notes []string
	// rateLimiter paces the SparkApplication controller's requeues; nil: controller-runtime's.
	rateLimiter workqueue.TypedRateLimiter[reconcile.Request]

	// The integrations with batch schedulers running in the cluster, Kubeflow's
	// --enable-batch-scheduler: Volcano, YuniKorn, and coscheduling under each of
	// kubeSchedulerNames.
	batchSchedulerEnabled       bool
	kubeSchedulerNames          []string
	coschedulingScheduleTimeout time.Duration

	// memoryLimitRatio is the share of the container's memory limit given to the Go runtime as
	// its soft memory limit (setMemoryLimit); 0: none.
	memoryLimitRatio float64

	controllerEnabled   bool
	sparkConnectEnabled bool
	webhookEnabled      bool
	webhook             webhook.Options
}

// rawFlags are the flags parsed into options only after the flag set is parsed.
type rawFlags struct {
	namespaces, namespaceSelector, mode, kubeSchedulerNames string
	failurePolicy, certProvider, knownSchedulers            string
	timeout                                                 int
}

// parseOptions reads the flags in args into options, registering them on fs (which may also
// hold glog's flags, withGlogFlags), and checks them. The Kubeflow operator's flag names are
// accepted too (kubeflowFlags).
func parseOptions(fs *pflag.FlagSet, args []string) (*options, error) {
	o, r := &options{}, &rawFlags{}
	addClusterFlags(fs, o, r)
	addSchedulerFlags(fs, o, r)
	addControllerFlags(fs, o)
	addWebhookFlags(fs, o, r)
	kf := kubeflowFlags(fs, o)
	if err := fs.Parse(goFlagSpelling(fs, args)); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	errs := kf.apply(fs, o)
	if !fs.Changed("gang-start-backlog") {
		if e, err := gang.ParseEnforcement(o.gangEnforcement); err == nil {
			o.gangStartBacklog = gang.DefaultStartBacklog(e)
		}
	}

	for _, ns := range strings.Split(r.namespaces, ",") {
		if ns = strings.TrimSpace(ns); ns == "" {
			continue
		}
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--namespaces: %q is not a namespace name: %s", ns, strings.Join(msgs, "; ")))
			continue
		}
		o.namespaces = append(o.namespaces, ns)
	}
	sel, err := labels.Parse(r.namespaceSelector)
	if err != nil {
		errs = append(errs, fmt.Errorf("--namespace-selector: %w", err))
	}
	o.namespaceSelector = sel
	if o.submissionMode, err = submission.ParseMode(r.mode); err != nil {
		errs = append(errs, fmt.Errorf("--submission-mode: %w", err))
	}
	errs = append(errs, checkLimits(o)...)
	errs = append(errs, checkSchedulers(o, r)...)
	errs = append(errs, checkWebhook(o, r)...)
	return o, errors.Join(errs...)
}

// addClusterFlags adds the flags of the operator's place in the cluster: its API access, namespaces, leader election, endpoints and workers.
func addClusterFlags(fs *pflag.FlagSet, o *options, r *rawFlags) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to a kubeconfig; in a pod the in-cluster configuration is used.")
	fs.StringVar(&r.namespaces, "namespaces", "", "Comma-separated namespaces to watch; empty watches all.")
	fs.StringVar(&r.namespaceSelector, "namespace-selector", "", "Only watch namespaces whose labels match this selector (e.g. spark=enabled).")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "Elect a leader among replicas; the chart turns it on when it runs more than one.")
	fs.StringVar(&o.leaderElectionID, "leader-election-id", "spark-operator-lock", "Name of the leader-election Lease.")
	fs.StringVar(&o.leaderElectionNS, "leader-election-namespace", "", "Namespace of the leader-election Lease; defaults to the operator's own.")
	fs.DurationVar(&o.leaseDuration, "leader-election-lease-duration", 15*time.Second, "How long a standby waits after the leader's last renewal before it takes over.")
	fs.DurationVar(&o.renewDeadline, "leader-election-renew-deadline", 10*time.Second, "How long the leader keeps retrying to renew before it gives up leading; less than the lease duration.")
	fs.DurationVar(&o.retryPeriod, "leader-election-retry-period", 2*time.Second, "How often candidates try to acquire or renew the lease.")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "Address of the Prometheus metrics endpoint; 0 disables it.")
	o.metrics.add(fs)
	fs.StringVar(&o.healthProbeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz endpoints; 0 disables them.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "", "Address of Go's /debug/pprof endpoints, for profiling; empty disables them.")
	fs.IntVar(&o.controllerWorkers, "controller-workers", 10, "Concurrent reconciles of SparkApplications (status work).")
	fs.IntVar(&o.submissionWorkers, "submission-workers", 0, "Concurrent submissions, in a pool of their own so status work never waits for them. "+
		"Default: 32 in native mode (each submission is a few API calls), 4 in spark-submit mode (each is a JVM).")
	fs.StringVar(&r.mode, "submission-mode", string(submission.ModeNative), `How applications are submitted: "native" or "spark-submit" (per app: annotation `+`sparkoperator.k8s.io/submitter).`)
	fs.StringVar(&o.sparkHome, "spark-home", "", "SPARK_HOME holding bin/spark-submit, for the spark-submit mode.")
	fs.Float64Var(&o.apiQPS, "kube-api-qps", 1000, "Queries per second to the Kubernetes API, for each kind of object apart (each has a client of its own). "+
		"At 100, SparkApplications alone would cap submissions near 1,500 a minute; the API server's priority and fairness shares it out whatever this allows.")
	fs.Float64Var(&o.memoryLimitRatio, "memory-limit-ratio", 0.9, "Set the Go runtime's soft memory limit to this share of the container's memory limit (its cgroup's), "+
		"so that garbage is collected before the kernel kills the operator at the limit; 0: none. GOMEMLIMIT in the environment wins.")
	fs.IntVar(&o.apiBurst, "kube-api-burst", 2000, "Burst of queries to the Kubernetes API, for each kind of object apart.")

}

// addSchedulerFlags adds the batch schedulers' flags.
func addSchedulerFlags(fs *pflag.FlagSet, o *options, r *rawFlags) {
	fs.StringVar(&o.defaultBatchSched, "default-batch-scheduler", "", "Batch scheduler for applications that name none, and for SparkConnect sessions; empty lets every application and session through.")
	fs.BoolVar(&o.gangEnabled, "enable-gang-scheduler", false, `Enable the embedded gang scheduler (spec.batchScheduler: gang; with --default-batch-scheduler=gang for applications naming none). `+
		`Needs the Queue CRD and cluster-wide read access to pods and nodes.`)
	fs.BoolVar(&o.kubernetesEnabled, "enable-kubernetes-scheduler", false, `Enable spec.batchScheduler: kubernetes: the gang scheduler's admission (its queues, quotas and --gang-* settings), `+
		`with executors placed all or nothing by kube-scheduler through the Workload API (scheduling.k8s.io/v1beta1, Kubernetes 1.37 with the GenericWorkload feature gate). `+
		`On a cluster without that API, applications naming it fail saying so.`)
	fs.BoolVar(&o.kubernetesNaive, "enable-kubernetes-naive-scheduler", false, `For benchmarks: enable spec.batchScheduler: kubernetes-naive, the Workload API without admission `+
		`(a driver group and an executor gang group per run, every run started at once), which half-starts applications on a full cluster.`)
	fs.BoolVar(&o.batchSchedulerEnabled, "enable-batch-scheduler", false, "Enable the batch schedulers the Kubeflow operator enables with the same flag, running in the cluster: "+
		"volcano (needs Volcano's CRDs), yunikorn, and coscheduling (scheduler-plugins) under each of --kube-scheduler-names. "+
		"An application naming one whose CRDs are missing is refused, saying so.")
	fs.StringVar(&r.kubeSchedulerNames, "kube-scheduler-names", "", "Comma-separated names of kube-scheduler profiles running scheduler-plugins' Coscheduling plugin "+
		"(e.g. kube-scheduler): each is a spec.batchScheduler value whose pods are scheduled by it, in a PodGroup per run; with --enable-batch-scheduler.")
	fs.DurationVar(&o.coschedulingScheduleTimeout, "coscheduling-schedule-timeout", time.Minute, "The PodGroups' scheduleTimeoutSeconds for --kube-scheduler-names.")
	fs.BoolVar(&o.gangBackfill, "gang-backfill", false, "Let a smaller application of a queue be admitted before the head of its queue when it cannot delay it.")
	fs.BoolVar(&o.gangPreemption, "gang-preemption", false, "Let a waiting application evict whole lower-priority applications of its queue (or ones borrowing beyond their quota).")
	fs.IntVar(&o.gangStartBacklog, "gang-start-backlog", gang.DefaultStartBacklog(gang.EnforcementAdvisory), "Start admitted applications' drivers only while fewer executors than this, of drivers started just before, wait to be released to their nodes; 0 starts them all at once. "+
		fmt.Sprintf("Unset: %d with --gang-enforcement=placeholders, whose releases take three writes each.", gang.DefaultStartBacklog(gang.EnforcementPlaceholders)))
	fs.DurationVar(&o.gangReservationTimeout, "gang-reservation-timeout", reservation.DefaultTimeout, "How long node capacity planned for an admitted application's pod is kept while the pod is not bound.")
	fs.StringVar(&o.gangEnforcement, "gang-enforcement", string(gang.EnforcementAdvisory), `How reserved capacity is kept from pods the gang scheduler did not admit: "placeholders" (placeholder pods hold it; works with the stock kube-scheduler), "plugin" (the cluster's scheduler is spark-scheduler, whose plugin holds it) or "advisory" (not kept: other pods may take it). See docs/gang-scheduling.md.`)
	fs.StringVar(&o.gangPlaceholderImage, "gang-placeholder-image", gang.DefaultPlaceholderImage, "Image of the gang scheduler's placeholder pods (--gang-enforcement=placeholders): a container that does nothing, such as pause.")
	fs.DurationVar(&o.gangPreemptionWait, "gang-preemption-wait", 2*time.Minute, "How long an admitted application's driver waits for the pods of the applications it preempted to end on its planned node before it is planned again.")
	fs.StringVar(&o.external.URL, "external-scheduler-url", "", "URL of an external scheduler that admits applications naming spec.batchScheduler: external (docs/gang-scheduling.md); "+
		"empty disables it. Needs --enable-gang-scheduler: its applications wait in the gang scheduler's queues.")
	fs.DurationVar(&o.external.Timeout, "external-scheduler-timeout", 5*time.Second, "How long a request to the external scheduler may take, its answer included; then its applications stay queued.")
	fs.StringVar(&o.external.CAFile, "external-scheduler-ca-file", "", "PEM bundle of the CAs that sign the external scheduler's certificate (https), instead of the system's.")
	fs.DurationVar(&o.externalInterval, "external-scheduler-interval", 5*time.Second, "How often the external scheduler is asked again while its applications wait and nothing else changes.")

}

// addControllerFlags adds the flags of the controllers' work: timeouts, the UI, the driver's PDB, what runs.
func addControllerFlags(fs *pflag.FlagSet, o *options) {
	fs.DurationVar(&o.driverPodGracePeriod, "driver-pod-grace-period", 10*time.Second, "How long a submitted application's driver pod may be missing before the application fails.")
	fs.DurationVar(&o.unschedulableTimeout, "driver-unschedulable-timeout", 0, "Fail a run whose driver pod the scheduler cannot place for this long (with its reason); 0 waits indefinitely.")
	fs.DurationVar(&o.nodeLostTimeout, "node-lost-timeout", 5*time.Minute, "Fail a run whose driver pod is on a node that has not been Ready for this long (its kubelet stopped answering), and delete the pod; 0 leaves a lost node to the node controller's eviction.")
	fs.DurationVar(&o.driverStartTimeout, "driver-start-timeout", 5*time.Minute, "Fail a run whose driver pod is on a node but cannot start (its image cannot be pulled, its container cannot be created) for this long, with the kubelet's reason; 0 waits indefinitely.")
	fs.IntVar(&o.maxTrackedExecutors, "max-tracked-executors", 1000, "Most executors listed in an application's status, so it never outgrows etcd's object size limit.")
	fs.BoolVar(&o.uiServiceEnabled, "enable-ui-service", true, "Create a Service for each application's Spark UI.")
	fs.StringVar(&o.ingressURLFormat, "ingress-url-format", "", "If set, create an Ingress for each Spark UI at this URL; {{$appName}} and {{$appNamespace}} are replaced.")
	fs.StringVar(&o.ingressClassName, "ingress-class-name", "", "IngressClass of the Spark UI Ingresses.")
	fs.BoolVar(&o.driverPDB, "enable-driver-pdb", false, "Create a PodDisruptionBudget for the driver of each application that sets spec.driverPodDisruptionBudget.")

}

// addWebhookFlags adds the webhooks' flags.
func addWebhookFlags(fs *pflag.FlagSet, o *options, r *rawFlags) {
	fs.BoolVar(&o.controllerEnabled, "enable-controller", true, "Run the controllers and the submission pool; turn it off to run only the webhooks (a webhook Deployment).")
	fs.BoolVar(&o.sparkConnectEnabled, "enable-spark-connect", true, "Run the SparkConnect controller (needs the sparkconnects CRD); with --enable-controller.")
	fs.BoolVar(&o.webhookEnabled, "enable-webhook", false, "Serve the mutating and validating admission webhooks and register them with the API server.")
	fs.IntVar(&o.webhook.Port, "webhook-port", webhook.DefaultPort, "Port the webhook server listens on.")
	fs.StringVar(&o.webhook.CertDir, "webhook-cert-dir", "", "Where the webhook's serving certificate (tls.crt, tls.key) is written, or read with an external provider; a temporary folder by default.")
	fs.StringVar(&r.certProvider, "webhook-cert-provider", string(webhook.CertProviderSelf), `Who makes the webhook's certificate: "self" (the operator, kept in --webhook-secret-name, `+
		`with the webhook configurations it registers) or "external" (cert-manager writes it to --webhook-cert-dir and the CA bundle into the installer's configurations).`)
	fs.StringVar(&o.webhook.ServiceName, "webhook-service-name", "", "Service in front of the webhook, named in its registrations (in a cluster).")
	fs.StringVar(&o.webhook.ServiceNamespace, "webhook-service-namespace", "", "Namespace of that Service.")
	fs.StringVar(&o.webhook.URLHost, "webhook-url-host", "", "Register the webhook by URL https://HOST:PORT instead of by Service (an operator running outside the cluster); HOST is a DNS name, such as localhost.")
	fs.StringVar(&o.webhook.SecretName, "webhook-secret-name", webhook.DefaultSecretName, "Secret holding the webhook's CA and serving certificate.")
	fs.StringVar(&o.webhook.SecretNamespace, "webhook-secret-namespace", "", "Namespace of that Secret; the Service's namespace by default.")
	fs.StringVar(&r.failurePolicy, "webhook-failure-policy", "Fail", `What the API server does when the webhook cannot be reached: "Fail" or "Ignore".`)
	fs.IntVar(&r.timeout, "webhook-timeout-seconds", int(webhook.DefaultTimeout), "How long the API server waits for the webhook, 1 to 30 seconds.")
	fs.StringVar(&o.webhook.ConfigName, "webhook-config-name", webhook.DefaultConfigName, "Name of the Mutating- and ValidatingWebhookConfiguration the operator keeps.")
	fs.BoolVar(&o.webhook.EnableResourceQuota, "enable-resource-quota-enforcement", false, "Reject applications whose driver and executors would exceed a ResourceQuota of their namespace.")
	fs.StringVar(&r.knownSchedulers, "known-schedulers", "", "Comma-separated Kubernetes schedulers that run in the cluster besides default-scheduler and the batch schedulers' own; "+
		"the webhook warns of a spec.driver/executor.schedulerName naming another.")

}

// checkLimits checks the numbers and durations of the cluster and controller flags.
func checkLimits(o *options) []error {
	var errs []error
	if o.memoryLimitRatio < 0 || o.memoryLimitRatio > 1 {
		errs = append(errs, fmt.Errorf("--memory-limit-ratio must be within 0 (none) and 1, got %g", o.memoryLimitRatio))
	}
	if err := o.metrics.validate(); err != nil {
		errs = append(errs, err)
	}
	if o.controllerWorkers < 1 {
		errs = append(errs, fmt.Errorf("--controller-workers must be at least 1, got %d", o.controllerWorkers))
	}
	switch {
	case o.submissionWorkers < 0:
		errs = append(errs, fmt.Errorf("--submission-workers must be at least 1, got %d", o.submissionWorkers))
	case o.submissionWorkers == 0 && o.submissionMode == submission.ModeSparkSubmit:
		o.submissionWorkers = 4
	case o.submissionWorkers == 0:
		o.submissionWorkers = 32
	}
	if o.maxTrackedExecutors < 1 {
		errs = append(errs, fmt.Errorf("--max-tracked-executors must be at least 1, got %d", o.maxTrackedExecutors))
	}
	if o.driverPodGracePeriod <= 0 {
		errs = append(errs, fmt.Errorf("--driver-pod-grace-period must be positive, got %s", o.driverPodGracePeriod))
	}
	if o.unschedulableTimeout < 0 {
		errs = append(errs, fmt.Errorf("--driver-unschedulable-timeout must not be negative, got %s", o.unschedulableTimeout))
	}
	if o.nodeLostTimeout < 0 {
		errs = append(errs, fmt.Errorf("--node-lost-timeout must not be negative, got %s", o.nodeLostTimeout))
	}
	if o.driverStartTimeout < 0 {
		errs = append(errs, fmt.Errorf("--driver-start-timeout must not be negative, got %s", o.driverStartTimeout))
	}
	if o.retryPeriod <= 0 || o.renewDeadline <= o.retryPeriod || o.leaseDuration <= o.renewDeadline {
		errs = append(errs, fmt.Errorf("leader election needs 0 < --leader-election-retry-period (%s) < --leader-election-renew-deadline (%s) < --leader-election-lease-duration (%s)",
			o.retryPeriod, o.renewDeadline, o.leaseDuration))
	}
	return errs
}

// checkSchedulers checks the batch schedulers' flags.
func checkSchedulers(o *options, r *rawFlags) []error {
	var errs []error
	var err error
	if o.gangStartBacklog < 0 {
		errs = append(errs, fmt.Errorf("--gang-start-backlog must not be negative, got %d", o.gangStartBacklog))
	}
	if o.gangReservationTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--gang-reservation-timeout must be positive, got %s", o.gangReservationTimeout))
	}
	if _, err := gang.ParseEnforcement(o.gangEnforcement); err != nil {
		errs = append(errs, fmt.Errorf("--gang-enforcement: %w", err))
	}
	if o.gangPlaceholderImage == "" {
		errs = append(errs, fmt.Errorf("--gang-placeholder-image must not be empty"))
	}
	if o.gangPreemptionWait <= 0 {
		errs = append(errs, fmt.Errorf("--gang-preemption-wait must be positive, got %s", o.gangPreemptionWait))
	}
	if o.kubeSchedulerNames, err = parseKubeSchedulerNames(r.kubeSchedulerNames); err != nil {
		errs = append(errs, err)
	}
	if len(o.kubeSchedulerNames) > 0 && !o.batchSchedulerEnabled {
		errs = append(errs, errors.New("--kube-scheduler-names needs --enable-batch-scheduler"))
	}
	if o.coschedulingScheduleTimeout < time.Second {
		errs = append(errs, fmt.Errorf("--coscheduling-schedule-timeout must be at least 1s, got %s", o.coschedulingScheduleTimeout))
	}
	if o.apiQPS <= 0 || o.apiBurst < 1 {
		errs = append(errs, fmt.Errorf("--kube-api-qps and --kube-api-burst must be positive"))
	}
	return errs
}

// checkWebhook checks the webhooks' flags and sets what they say.
func checkWebhook(o *options, r *rawFlags) []error {
	var errs []error
	var err error
	switch p := admissionregistrationv1.FailurePolicyType(r.failurePolicy); p {
	case admissionregistrationv1.Fail, admissionregistrationv1.Ignore:
		o.webhook.FailurePolicy = p
	default:
		errs = append(errs, fmt.Errorf(`--webhook-failure-policy must be "Fail" or "Ignore", got %q`, r.failurePolicy))
	}
	if r.timeout < 1 || r.timeout > 30 {
		errs = append(errs, fmt.Errorf("--webhook-timeout-seconds must be between 1 and 30, got %d", r.timeout))
	}
	o.webhook.TimeoutSeconds = int32(r.timeout)
	if !o.controllerEnabled && !o.webhookEnabled {
		errs = append(errs, errors.New("--enable-controller=false needs --enable-webhook: there would be nothing to run"))
	}
	if err := checkExternalScheduler(o); err != nil {
		errs = append(errs, err)
	}
	if o.webhook.CertProvider, err = webhook.ParseCertProvider(r.certProvider); err != nil {
		errs = append(errs, fmt.Errorf("--webhook-cert-provider: %w", err))
	}
	external := o.webhook.CertProvider == webhook.CertProviderExternal
	if o.webhookEnabled && external && o.webhook.CertDir == "" {
		errs = append(errs, errors.New("--webhook-cert-provider=external needs --webhook-cert-dir, where the certificate is mounted"))
	}
	if o.webhookEnabled && !external && o.webhook.URLHost == "" && (o.webhook.ServiceName == "" || o.webhook.ServiceNamespace == "") {
		errs = append(errs, errors.New("--enable-webhook needs --webhook-service-name and --webhook-service-namespace, or --webhook-url-host"))
	}
	if o.webhookEnabled && !external && o.webhook.URLHost != "" && o.webhook.SecretNamespace == "" && o.webhook.ServiceNamespace == "" {
		errs = append(errs, errors.New("--webhook-url-host needs --webhook-secret-namespace for the certificate Secret"))
	}
	for _, name := range strings.Split(r.knownSchedulers, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--known-schedulers: %q is not a scheduler name: %s", name, strings.Join(msgs, "; ")))
			continue
		}
		o.webhook.KnownSchedulers = append(o.webhook.KnownSchedulers, name)
	}
	if o.webhook.NamespaceSelector, err = webhookNamespaceSelector(o); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// webhookNamespaceSelector limits the webhooks to the namespaces the operator watches, so the
// API server does not call them for namespaces the operator ignores.
func webhookNamespaceSelector(o *options) (*metav1.LabelSelector, error) {
	sel := &metav1.LabelSelector{}
	if len(o.namespaces) > 0 {
		sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: o.namespaces,
		})
	}
	if o.namespaceSelector != nil && !o.namespaceSelector.Empty() {
		reqs, _ := o.namespaceSelector.Requirements()
		for _, r := range reqs {
			op, ok := selectorOperator(r.Operator())
			if !ok {
				return nil, fmt.Errorf("--namespace-selector: operator %q cannot select namespaces for the webhook", r.Operator())
			}
			sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{
				Key: r.Key(), Operator: op, Values: r.Values().List(),
			})
		}
	}
	if len(sel.MatchExpressions) == 0 {
		return nil, nil
	}
	return sel, nil
}

// reservedSchedulerNames are batch scheduler names a kube-scheduler profile cannot take: the
// operator's own schedulers, and the Volcano and YuniKorn integrations that
// --enable-batch-scheduler enables in the Kubeflow operator, would be replaced by it.
var reservedSchedulerNames = []string{"default", "gang", "volcano", "yunikorn"}

// parseKubeSchedulerNames reads --kube-scheduler-names: kube-scheduler profile names, each a
// valid pod schedulerName, none repeated or reserved.
func parseKubeSchedulerNames(list string) ([]string, error) {
	var names []string
	var errs []error
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			continue
		case len(validation.IsDNS1123Subdomain(name)) > 0:
			errs = append(errs, fmt.Errorf("--kube-scheduler-names: %q is not a scheduler name: %s", name, strings.Join(validation.IsDNS1123Subdomain(name), "; ")))
		case slices.Contains(reservedSchedulerNames, name):
			errs = append(errs, fmt.Errorf("--kube-scheduler-names: %q is the name of another batch scheduler of the operator", name))
		case slices.Contains(names, name):
			errs = append(errs, fmt.Errorf("--kube-scheduler-names: %q is named twice", name))
		default:
			names = append(names, name)
		}
	}
	return names, errors.Join(errs...)
}
