/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Command spark-operator runs the SparkApplication and ScheduledSparkApplication controllers
// and the submission pool on one controller-runtime manager.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strings"
	"time"
	// The time zones of ScheduledSparkApplications' spec.timeZone, in images without
	// /usr/share/zoneinfo (the chart's is built on an empty base).
	_ "time/tzdata"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/manager/signals"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/controllers/metrics"
	"github.com/sparkop/spark-operator/controllers/scheduledsparkapplication"
	"github.com/sparkop/spark-operator/controllers/sparkapplication"
	"github.com/sparkop/spark-operator/controllers/sparkconnect"
	"github.com/sparkop/spark-operator/controllers/uiresources"
	"github.com/sparkop/spark-operator/internal/crdcheck"
	"github.com/sparkop/spark-operator/internal/eventnote"
	"github.com/sparkop/spark-operator/internal/leaderlock"
	"github.com/sparkop/spark-operator/internal/nsfilter"
	"github.com/sparkop/spark-operator/internal/restconn"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/submission/native"
	"github.com/sparkop/spark-operator/submission/sparksubmit"
	"github.com/sparkop/spark-operator/webhook"
)

func main() {
	if err := newCommand(start).Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "spark-operator: %v\n", err)
		var bad badFlags
		if errors.As(err, &bad) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// badFlags is a command line the operator cannot run with.
type badFlags struct{ error }

// newCommand is the operator's command line: `spark-operator [flags]` runs what its flags
// enable, and the Kubeflow operator's `controller start` and `webhook start` run the
// controller alone or the webhook alone with the same flags. run is called with the options.
func newCommand(run func(*options) error) *cobra.Command {
	root := startCommand("spark-operator", "Runs the Spark operator: the controllers and, with --enable-webhook, the admission webhooks.", nil, run)
	// Flags come before or after; anything cobra takes for a stray argument is pflag's to refuse.
	root.Args = cobra.ArbitraryArgs
	controller := &cobra.Command{Use: "controller", Short: "The controller alone (as the Kubeflow operator's command)"}
	controller.AddCommand(startCommand("start", "Runs the controllers and the submission pool, without the webhooks.", []string{"--enable-webhook=false"}, run))
	hook := &cobra.Command{Use: "webhook", Short: "The admission webhooks alone (as the Kubeflow operator's command)"}
	hook.AddCommand(startCommand("start", "Runs the admission webhooks, without the controllers.", []string{"--enable-controller=false", "--enable-webhook"}, run))
	root.AddCommand(controller, hook)
	return root
}

// startCommand is a command that parses its flags (after the preset ones, which they
// override) into options and runs with them. pflag parses them, not cobra, so that glog's
// flags and the one-dash spelling come along (withGlogFlags, goFlagSpelling).
func startCommand(use, short string, preset []string, run func(*options) error) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, DisableFlagParsing: true, SilenceUsage: true, SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := withGlogFlags(pflag.NewFlagSet(cmd.CommandPath(), pflag.ContinueOnError))
			o, err := parseOptions(fs, append(slices.Clone(preset), args...))
			if errors.Is(err, pflag.ErrHelp) {
				return nil
			} else if err != nil {
				return badFlags{err}
			}
			return run(o)
		}}
}

// start runs the operator until it is signalled to stop.
func start(o *options) error {
	log := newLogger(o, os.Stderr)
	ctrllog.SetLogger(log)
	klog.SetLogger(log)
	for _, note := range o.notes {
		log.Info(note)
	}
	setMemoryLimit(log, o.memoryLimitRatio, memlimit.FromCgroup)
	if err := run(signals.SetupSignalHandler(), o); err != nil {
		log.Error(err, "operator stopped")
		return err
	}
	return nil
}

// withGlogFlags adds glog's flags (-v, -logtostderr, …), which glog registers on Go's global
// flag set, to fs. The global set also carries flags other libraries register on import, such
// as controller-runtime's own --kubeconfig, which the operator defines itself. An operator runs
// in a container, where logs belong on stderr rather than in files, so that is the default.
func withGlogFlags(fs *pflag.FlagSet) *pflag.FlagSet {
	for _, name := range []string{"v", "vmodule", "logtostderr", "alsologtostderr", "stderrthreshold", "log_dir", "log_backtrace_at"} {
		if f := flag.CommandLine.Lookup(name); f != nil {
			fs.AddGoFlag(f)
		}
	}
	if f := fs.Lookup("logtostderr"); f != nil && f.Value.Set("true") == nil {
		f.DefValue = "true"
	}
	return fs
}

func run(ctx context.Context, o *options) error {
	cfg, err := restConfig(o.kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(o.apiQPS), o.apiBurst
	scheme, err := newScheme()
	if err != nil {
		return err
	}

	if o.controllerEnabled {
		if err := checkCRDs(ctx, cfg, o); err != nil {
			return err
		}
	}

	mgr, err := buildManager(cfg, scheme, o)
	if err != nil {
		return err
	}
	schedulers, err := buildSchedulers(o, mgr)
	if err != nil {
		return err
	}
	if o.webhookEnabled {
		o.webhook.BatchSchedulers = webhookSchedulers(o, schedulers)
		if err := webhook.Setup(ctx, mgr, o.webhook); err != nil {
			return fmt.Errorf("setting up the webhooks: %w", err)
		}
	}
	if o.controllerEnabled {
		if err := setupControllers(mgr, o, cfg, scheme, schedulers); err != nil {
			return err
		}
	}
	if err := addChecks(mgr, o); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// newScheme is the scheme of every kind the operator reads or writes.
func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1beta2.AddToScheme, v1alpha1.AddToScheme, schedv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return scheme, nil
}

// buildManager is the manager for o: its caches, endpoints, leader election and webhook server.
func buildManager(cfg *rest.Config, scheme *runtime.Scheme, o *options) (manager.Manager, error) {
	mgrOpts := manager.Options{
		Scheme:                        scheme,
		Cache:                         cacheOptions(o),
		Metrics:                       metricsserver.Options{BindAddress: o.metricsAddr, ExtraHandlers: o.metrics.extraHandlers()},
		HealthProbeBindAddress:        o.healthProbeAddr,
		PprofBindAddress:              o.pprofAddr,
		LeaderElection:                o.leaderElect,
		LeaderElectionID:              o.leaderElectionID,
		LeaderElectionNamespace:       o.leaderElectionNS,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &o.leaseDuration,
		RenewDeadline:                 &o.renewDeadline,
		RetryPeriod:                   &o.retryPeriod,
		// A standby fills its caches before it leads, so a failover does not start with a
		// list of every application.
		Controller: config.Controller{MaxConcurrentReconciles: o.controllerWorkers, EnableWarmup: ptr.To(true), CacheSyncTimeout: o.cacheSyncTimeout},
	}
	mgrOpts.NewCache = func(config *rest.Config, opts cache.Options) (cache.Cache, error) {
		hc, err := restconn.Own(config)
		if err != nil {
			return nil, err
		}
		opts.HTTPClient = hc
		return cache.New(config, opts)
	}
	if o.webhookEnabled {
		mgrOpts.WebhookServer = webhook.NewServer(o.webhook)
	}
	var lock *leaderlock.Lock
	if o.leaderElect {
		var err error
		if lock, err = leaderLock(cfg, o); err != nil {
			return nil, err
		}
		mgrOpts.LeaderElectionResourceLockInterface = lock
	}
	mgr, err := newManager(cfg, mgrOpts)
	if err != nil {
		return nil, err
	}
	if lock != nil {
		// client-go's leader elector records through the old events API (resourcelock's
		// EventRecorder); the manager's events.k8s.io recorder does not fit it.
		//lint:ignore SA1019 the elector needs a recorder of the old events API
		lock.SetEventRecorder(mgr.GetEventRecorderFor(lock.Identity()))
		// Its watch runs on every replica, before and beside the election.
		if err := mgr.Add(lock); err != nil {
			return nil, err
		}
	}
	return mgr, nil
}

// addChecks adds the health and readiness checks.
func addChecks(mgr manager.Manager, o *options) error {
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if o.webhookEnabled {
		// Not ready until it serves: a Service must not send admission requests to a replica
		// still loading its certificate.
		if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
			return err
		}
	}
	return nil
}

// checkCRDs refuses to run the controllers on CRDs that would drop the status they write
// (internal/crdcheck): Kubeflow's, left installed by a move to this chart.
func checkCRDs(ctx context.Context, cfg *rest.Config, o *options) error {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	kinds := []crdcheck.Kind{crdcheck.SparkApplication, crdcheck.ScheduledSparkApplication}
	if o.sparkConnectEnabled {
		kinds = append(kinds, crdcheck.SparkConnect)
	}
	forbidden, err := crdcheck.Check(ctx, c, kinds...)
	if forbidden {
		ctrllog.Log.Info("not allowed to read the CRDs: their status schemas are not checked")
	}
	return err
}

// newManager creates the operator's manager. Every event recorder it hands out (to the
// controllers, the batch schedulers, the webhooks) cuts messages the API server would refuse
// as too long (internal/eventnote): without that, such an event is dropped.
func newManager(cfg *rest.Config, opts manager.Options) (manager.Manager, error) {
	mgr, err := manager.New(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	return eventnote.Manager(mgr), nil
}

// ownClient is a client like mgr's (reads from its cache, writes to the API server) on an API
// server connection of its own (internal/restconn).
func ownClient(cfg *rest.Config, mgr manager.Manager) (client.Client, error) {
	hc, err := restconn.Own(cfg)
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{HTTPClient: hc, Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		Cache: &client.CacheOptions{Reader: mgr.GetCache()}})
}

// setupControllers adds the SparkApplication and ScheduledSparkApplication controllers and the
// submission pool to mgr.
func setupControllers(mgr manager.Manager, o *options, cfg *rest.Config, scheme *runtime.Scheme, schedulers *scheduler.Registry) error {
	var namespaces *nsfilter.Filter
	if !o.namespaceSelector.Empty() {
		namespaces = &nsfilter.Filter{Reader: mgr.GetClient(), Selector: o.namespaceSelector}
	}
	// What submissions and the UI write (drivers, their ConfigMaps and Services, UI Services:
	// dozens at once, each waiting seconds on a busy API server) goes on a connection of its
	// own, so that the status writes a user waits for never wait for a stream behind them.
	objects, err := ownClient(cfg, mgr)
	if err != nil {
		return err
	}
	submitters, err := buildSubmitters(o, cfg, objects, mgr.GetAPIReader())
	if err != nil {
		return err
	}
	recorder := metrics.NewRecorderWith(ctrlmetrics.Registry, o.metrics.opts)

	apps := &sparkapplication.Reconciler{
		Client:                mgr.GetClient(),
		APIReader:             mgr.GetAPIReader(),
		Scheme:                scheme,
		Recorder:              mgr.GetEventRecorder(sparkapplication.ControllerName),
		Clock:                 clock.RealClock{},
		Submitters:            submitters,
		DefaultMode:           o.submissionMode,
		Schedulers:            schedulers,
		DefaultBatchScheduler: o.defaultBatchSched,
		UIClient:              objects,
		UI: uiresources.Options{
			ServiceEnabled:     o.uiServiceEnabled,
			IngressURLFormat:   o.ingressURLFormat,
			IngressClassName:   o.ingressClassName,
			IngressTLS:         o.ingressTLS,
			IngressAnnotations: o.ingressAnnotations,
		},
		DriverPDB:   o.driverPDB,
		Metrics:     recorder,
		Namespaces:  namespaces,
		RateLimiter: o.rateLimiter,
		Options: sparkapplication.Options{
			DriverPodGracePeriod: o.driverPodGracePeriod,
			MaxTrackedExecutors:  o.maxTrackedExecutors,
			UnschedulableTimeout: o.unschedulableTimeout,
			DriverStartTimeout:   o.driverStartTimeout,
			NodeLostTimeout:      o.nodeLostTimeout,
			SubmissionWorkers:    o.submissionWorkers,
			DefaultTimeToLive:    o.defaultTTL,
		},
	}
	if err := apps.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the SparkApplication controller: %w", err)
	}

	scheduled := &scheduledsparkapplication.Reconciler{Namespaces: namespaces}
	if err := scheduled.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the ScheduledSparkApplication controller: %w", err)
	}
	if o.sparkConnectEnabled {
		connects := &sparkconnect.Reconciler{Namespaces: namespaces, Schedulers: schedulers, DefaultBatchScheduler: o.defaultBatchSched}
		if err := connects.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the SparkConnect controller: %w", err)
		}
	}
	return nil
}

// leaderLock is the Lease the replicas elect their leader by (internal/leaderlock: a standby
// takes over as soon as its watch shows the lease released or run out, not at its next poll).
// The identity is the host name (the pod's) and a unique suffix.
func leaderLock(cfg *rest.Config, o *options) (*leaderlock.Lock, error) {
	ns := o.leaderElectionNS
	if ns == "" {
		b, err := os.ReadFile(inClusterNamespaceFile)
		if err != nil {
			return nil, fmt.Errorf("no --leader-election-namespace given and not in a cluster: %w", err)
		}
		ns = strings.TrimSpace(string(b))
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, err
	}
	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	// One slow request must not cost the leader its lease: each gives up well within the
	// renew deadline.
	cfg.Timeout = max(o.renewDeadline/2, time.Second)
	cs, err := coordinationv1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return leaderlock.New(cs, ns, o.leaderElectionID, host+"_"+string(uuid.NewUUID()), nil), nil
}

const inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		kubeconfig = os.Getenv("KUBECONFIG")
	}
	if kubeconfig == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("not in a cluster and no --kubeconfig or KUBECONFIG given: %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", kubeconfig, err)
	}
	return cfg, nil
}

// cacheOptions keeps in memory only what the operator owns: pods, Services, ConfigMaps,
// Ingresses and PodDisruptionBudgets it launched (by label), so memory stays flat however much else the cluster holds.
// Nothing reads managedFields, which are a large part of every cached pod and application.
func cacheOptions(o *options) cache.Options {
	selector := labels.SelectorFromSet(labels.Set{v1beta2.LabelLaunchedByOperator: "true"})
	launched := cache.ByObject{Label: selector}
	opts := cache.Options{DefaultTransform: cache.TransformStripManagedFields(), ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}:                   {Label: selector, Transform: sparkapplication.TrimPodForCache},
		&corev1.Service{}:               launched,
		&corev1.ConfigMap{}:             launched,
		&networkingv1.Ingress{}:         launched,
		&policyv1.PodDisruptionBudget{}: launched,
	}}
	if o.appSelector != nil {
		// Kubeflow's --label-selector-filter: the other applications are not seen at all.
		for _, obj := range []client.Object{&v1beta2.SparkApplication{}, &v1beta2.ScheduledSparkApplication{}, &v1alpha1.SparkConnect{}} {
			opts.ByObject[obj] = cache.ByObject{Label: o.appSelector}
		}
	}
	if len(o.namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range o.namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

func buildSubmitters(o *options, cfg *rest.Config, c client.Client, api client.Reader) (map[submission.Mode]submission.Submitter, error) {
	sparkUser := "spark"
	if u, err := user.Current(); err == nil {
		sparkUser = u.Username
	}
	submitters := map[submission.Mode]submission.Submitter{
		submission.ModeNative: &native.Submitter{Client: c, Reader: api, Options: native.Options{
			Master: "k8s://" + cfg.Host, SparkUser: sparkUser,
		}},
	}
	sparkHome := o.sparkHome
	if sparkHome == "" {
		sparkHome = os.Getenv("SPARK_HOME")
	}
	if sparkHome != "" {
		submitters[submission.ModeSparkSubmit] = &sparksubmit.Submitter{SparkHome: sparkHome, Kubeconfig: o.kubeconfig, Client: c}
	} else if o.submissionMode == submission.ModeSparkSubmit {
		return nil, errors.New("--submission-mode=spark-submit needs --spark-home or SPARK_HOME")
	}
	return submitters, nil
}
