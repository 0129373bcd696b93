/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Command cert-manager-lite runs cert-manager's own controllers against a kubeconfig, in one
// process and without leader election, metrics or webhook, for the local test cluster
// (hack/local-cluster.sh cert-manager). cert-manager's cmd/controller and cmd/cainjector are
// modules of their own that are not published, so this wires the library packages of the root
// module, the way those commands do:
//
//   - the certificates controllers (trigger, key manager, request manager, issuing, readiness,
//     revision manager), which turn a Certificate into a Secret and renew it;
//   - the certificaterequests approver and the SelfSigned and CA issuers' signers;
//   - the issuers and clusterissuers controllers, which mark issuers Ready;
//   - the cainjector, which fills the caBundle of webhook configurations, APIServices and CRDs
//     annotated cert-manager.io/inject-ca-from or inject-ca-from-secret.
//
// ACME, Vault and Venafi issuers, the ingress and Gateway shims and the CertificateSigningRequest
// controllers are not run.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	cmscheme "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/scheme"
	"github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	crapprover "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	crca "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	crselfsigned "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	"github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	"github.com/cert-manager/cert-manager/pkg/controller/issuers"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"github.com/cert-manager/cert-manager/pkg/util"
	utilfeature "github.com/cert-manager/cert-manager/pkg/util/feature"
	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	cliflag "k8s.io/component-base/cli/flag"
	logsapi "k8s.io/component-base/logs/api/v1"
	apireg "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	// The issuer implementations the issuers controllers set up (they register themselves).
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

const cmModule = "github.com/cert-manager/cert-manager"

// controllers are the cert-manager controllers this binary runs; importing their packages
// registers them in controller.Known().
var controllers = []string{
	issuers.ControllerName,
	clusterissuers.ControllerName,
	crapprover.ControllerName,
	crselfsigned.CRControllerName,
	crca.CRControllerName,
	trigger.ControllerName,
	keymanager.ControllerName,
	requestmanager.ControllerName,
	issuing.ControllerName,
	readiness.ControllerName,
	revisionmanager.ControllerName,
}

type options struct {
	kubeconfig               string
	namespace                string
	clusterResourceNamespace string
	qps                      float32
	burst                    int
	workers                  int
	enableOwnerRef           bool
	minBackoff, maxBackoff   time.Duration
	featureGates             map[string]bool
	controller, caInjector   bool
	logging                  *logsapi.LoggingConfiguration
}

func main() {
	if err := run(); err != nil {
		logf.Log.Error(err, "cert-manager-lite failed")
		logf.FlushLogs()
		os.Exit(1)
	}
	logf.FlushLogs()
}

func run() error {
	o := options{logging: logsapi.NewLoggingConfiguration()}
	fs := pflag.NewFlagSet("cert-manager-lite", pflag.ContinueOnError)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "path to a kubeconfig; in-cluster configuration when empty")
	fs.StringVar(&o.namespace, "namespace", "", "watch only this namespace (ClusterIssuers are then not served); all when empty")
	fs.StringVar(&o.clusterResourceNamespace, "cluster-resource-namespace", "kube-system",
		"namespace of the Secrets that ClusterIssuers refer to")
	fs.Float32Var(&o.qps, "kube-api-qps", 50, "client-side QPS limit, used only if the API server has no priority and fairness")
	fs.IntVar(&o.burst, "kube-api-burst", 100, "client-side burst limit, as --kube-api-qps")
	fs.IntVar(&o.workers, "concurrent-workers", 5, "workers per controller")
	fs.BoolVar(&o.enableOwnerRef, "enable-certificate-owner-ref", false,
		"make each Certificate the owner of its Secret, so deleting the Certificate deletes the Secret")
	fs.DurationVar(&o.minBackoff, "certificate-request-minimum-backoff-duration", time.Hour,
		"first delay before a failed issuance is retried")
	fs.DurationVar(&o.maxBackoff, "certificate-request-maximum-backoff-duration", 32*time.Hour,
		"longest delay before a failed issuance is retried")
	fs.Var(cliflag.NewMapStringBool(&o.featureGates), "feature-gates", "cert-manager feature gates, key=value pairs")
	fs.BoolVar(&o.controller, "controller", true, "run the certificate, certificate request and issuer controllers")
	fs.BoolVar(&o.caInjector, "cainjector", true, "run the CA injector")
	logf.AddFlags(o.logging, fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return err
	}

	setAppVersion()
	logf.InitLogs()
	if err := logf.ValidateAndApply(o.logging); err != nil {
		return fmt.Errorf("logging flags: %w", err)
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(o.featureGates); err != nil {
		return fmt.Errorf("--feature-gates: %w", err)
	}
	ctrl.SetLogger(logf.Log)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx = logf.NewContext(ctx, logf.Log)
	logf.Log.Info("starting cert-manager-lite", "version", util.AppVersion,
		"controller", o.controller, "cainjector", o.caInjector)

	restConfig, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	if err := waitForCRDs(ctx, restConfig); err != nil {
		return err
	}

	g, ctx := errgroup.WithContext(ctx)
	if o.controller {
		g.Go(func() error { return runControllers(ctx, &o) })
	}
	if o.caInjector {
		g.Go(func() error { return runCAInjector(ctx, &o, restConfig) })
	}
	err = g.Wait()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// setAppVersion makes cert-manager's user agent and logs name the pinned release instead of
// "canary" (its own builds set it by -ldflags).
func setAppVersion() {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	for _, dep := range info.Deps {
		if dep.Path == cmModule {
			util.AppVersion = dep.Version
		}
	}
}

// waitForCRDs waits up to a minute for the cert-manager.io API group, which the informers of
// both halves need; hack/local-cluster.sh installs the CRDs before it starts us.
func waitForCRDs(ctx context.Context, cfg *rest.Config) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(context.Context) (bool, error) {
		res, err := dc.ServerResourcesForGroupVersion("cert-manager.io/v1")
		if err != nil {
			last = err
			return false, nil
		}
		for _, r := range res.APIResources {
			if r.Name == "certificates" {
				return true, nil
			}
		}
		last = errors.New("no certificates resource in cert-manager.io/v1")
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the cert-manager CRDs (install deploy/crds first): %w (last: %v)", err, last)
	}
	return nil
}

// runControllers builds a controller context the way cert-manager's controller does and runs
// the controllers listed above until ctx ends.
func runControllers(ctx context.Context, o *options) error {
	log := logf.FromContext(ctx, "controller")
	factory, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig:         o.kubeconfig,
		KubernetesAPIQPS:   o.qps,
		KubernetesAPIBurst: o.burst,
		Namespace:          o.namespace,
		IssuerOptions: controller.IssuerOptions{
			ClusterResourceNamespace: o.clusterResourceNamespace,
		},
		CertificateOptions: controller.CertificateOptions{
			EnableOwnerRef:                           o.enableOwnerRef,
			CopiedAnnotationPrefixes:                 []string{"*", "-kubectl.kubernetes.io/", "-fluxcd.io/", "-argocd.argoproj.io/"},
			CertificateRequestMinimumBackoffDuration: o.minBackoff,
			CertificateRequestMaximumBackoffDuration: o.maxBackoff,
		},
		SchedulerOptions: controller.SchedulerOptions{MaxConcurrentChallenges: 60},
	})
	if err != nil {
		return fmt.Errorf("building the controller context: %w", err)
	}
	base, err := factory.Build()
	if err != nil {
		return err
	}

	g, gctx := errgroup.WithContext(ctx)
	for _, name := range controllers {
		if name == clusterissuers.ControllerName && o.namespace != "" {
			continue // cluster-scoped
		}
		constructor, ok := controller.Known()[name]
		if !ok {
			return fmt.Errorf("controller %q is not registered", name)
		}
		c, err := constructor(factory)
		if err != nil {
			return fmt.Errorf("creating controller %q: %w", name, err)
		}
		log.V(logf.InfoLevel).Info("starting controller", "name", name)
		g.Go(func() error { return c.Run(o.workers, gctx) })
	}
	// The controllers have asked for their informers; start them all.
	base.SharedInformerFactory.Start(gctx.Done())
	base.KubeSharedInformerFactory.Start(gctx.Done())
	base.HTTP01ResourceMetadataInformersFactory.Start(gctx.Done())

	err = g.Wait()
	base.HTTP01ResourceMetadataInformersFactory.Shutdown()
	base.KubeSharedInformerFactory.Shutdown()
	base.SharedInformerFactory.Shutdown()
	if err == nil && ctx.Err() == nil {
		err = errors.New("the controllers stopped")
	}
	return err
}

// runCAInjector runs cert-manager's cainjector reconcilers in a controller-runtime manager set
// up as cert-manager's cainjector sets up its own, minus leader election and metrics.
func runCAInjector(ctx context.Context, o *options, restConfig *rest.Config) error {
	cfg := util.RestConfigWithUserAgent(restConfig, "cainjector")
	scheme := runtime.NewScheme()
	utilruntime.Must(kscheme.AddToScheme(scheme))
	utilruntime.Must(cmscheme.AddToScheme(scheme))
	utilruntime.Must(apiext.AddToScheme(scheme))
	utilruntime.Must(apireg.AddToScheme(scheme))

	var namespaces map[string]cache.Config
	if o.namespace != "" {
		namespaces = map[string]cache.Config{o.namespace: {}}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		Cache: cache.Options{
			ReaderFailOnMissingInformer: true,
			DefaultNamespaces:           namespaces,
		},
		// The injectors read Secrets directly (cert-manager's choice: no cache of every Secret).
		Client:                 client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		LeaderElection:         false,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return fmt.Errorf("creating the cainjector manager: %w", err)
	}
	err = cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		Namespace:                    o.namespace,
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor: map[string]bool{
			cainjector.MutatingWebhookConfigurationName:   true,
			cainjector.ValidatingWebhookConfigurationName: true,
			cainjector.APIServiceName:                     true,
			cainjector.CustomResourceDefinitionName:       true,
		},
	})
	if err != nil {
		return fmt.Errorf("registering the injectors: %w", err)
	}
	return mgr.Start(ctx)
}
