/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package webhook runs the operator's admission webhooks: the pod mutator (package podmutator)
// and the SparkApplication and ScheduledSparkApplication validators (package validation). It
// has cert-controller make and renew its certificates and registers its own webhook
// configurations, or serves a certificate cert-manager provides (CertProviderExternal).
//
// Wiring into a controller-runtime manager:
//
//	mgr, _ := ctrl.NewManager(cfg, ctrl.Options{WebhookServer: webhook.NewServer(opts), ...})
//	if err := webhook.Setup(ctx, mgr, opts); err != nil { ... }
package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/webhook/appmutator"
	"github.com/sparkop/spark-operator/webhook/podmutator"
	"github.com/sparkop/spark-operator/webhook/validation"
)

// Paths the handlers are served at (the Kubeflow operator's paths).
const (
	PathMutatePods                        = "/mutate--v1-pod"
	PathMutateSparkApplication            = "/mutate-sparkoperator-k8s-io-v1beta2-sparkapplication"
	PathValidateSparkApplication          = "/validate-sparkoperator-k8s-io-v1beta2-sparkapplication"
	PathValidateScheduledSparkApplication = "/validate-sparkoperator-k8s-io-v1beta2-scheduledsparkapplication"
	PathValidateSparkConnect              = "/validate-sparkoperator-k8s-io-v1alpha1-sparkconnect"
)

// Defaults of Options.
const (
	DefaultPort          = 9443
	DefaultSecretName    = "spark-operator-webhook-certs"
	DefaultCertValidity  = 365 * 24 * time.Hour
	DefaultCAValidity    = 10 * 365 * 24 * time.Hour
	DefaultConfigName    = "spark-operator-webhook"
	DefaultTimeout       = int32(10)
	defaultServiceDomain = "cluster.local"
)

// Options configure the webhooks. The zero value of a field takes its default.
type Options struct {
	// Port and Host are where the webhook server listens (default :9443, all addresses).
	Port int
	Host string
	// CertDir is where the serving certificate is written and read (tls.crt, tls.key);
	// default <temp dir>/spark-operator-webhook-certs.
	CertDir string
	// SecretName and SecretNamespace name the Secret keeping the certificates (default
	// spark-operator-webhook-certs in ServiceNamespace).
	SecretName, SecretNamespace string
	// ServiceName and ServiceNamespace name the Service in front of the webhook server; the
	// configurations point at it unless URLHost is set, and the certificate names it.
	ServiceName, ServiceNamespace string
	// URLHost, when set, registers the webhooks by URL https://URLHost:Port/<path> instead of
	// through the Service: for a webhook running outside the cluster (local development).
	URLHost string
	// FailurePolicy of all the webhooks: Fail (default) refuses the requests the webhook does
	// not answer, Ignore lets them through unchanged and unvalidated.
	FailurePolicy admissionregistrationv1.FailurePolicyType
	// EnableResourceQuota refuses new SparkApplications whose driver and executors do not fit
	// in what a ResourceQuota of their namespace has left.
	EnableResourceQuota bool
	// BatchSchedulers are the operator's enabled batch schedulers and its default, so the
	// validating webhook refuses applications naming one that is not enabled, and the pod
	// webhook lets them place the pods of runs they admitted (scheduler.PodPlacer).
	BatchSchedulers validation.BatchSchedulers
	// KnownSchedulers are the Kubernetes schedulers running besides the default one and the
	// batch schedulers' own: the validating webhook warns of a pod schedulerName naming another.
	KnownSchedulers []string
	// NamespaceSelector limits the webhooks to matching namespaces; nil means all.
	NamespaceSelector *metav1.LabelSelector
	// CertValidity is the lifetime of the serving certificates made (default one year);
	// CAValidity that of the CA signing them (default ten years). Each is renewed when less
	// than a third of CertValidity is left.
	CertValidity, CAValidity time.Duration

	// ConfigName names the MutatingWebhookConfiguration and ValidatingWebhookConfiguration
	// (default spark-operator-webhook).
	ConfigName string
	// ServicePort is the port of the Service (default Port).
	ServicePort int32
	// CertCheckInterval is how often the certificates are checked for renewal (default a
	// tenth of CertValidity, at most 10 minutes).
	CertCheckInterval time.Duration
	// TimeoutSeconds is how long the API server waits for the webhook (default 10).
	TimeoutSeconds int32
	// CertProvider says who makes the serving certificate and registers the webhooks:
	// CertProviderSelf (default) or CertProviderExternal.
	CertProvider CertProvider
}

// CertProvider says who provides the webhook's certificates.
type CertProvider string

const (
	// CertProviderSelf: the webhook makes its own CA and serving certificate, keeps them in the
	// Secret, and creates and keeps its webhook configurations with that CA bundle.
	CertProviderSelf CertProvider = "self"
	// CertProviderExternal: another tool (cert-manager) writes tls.crt and tls.key into CertDir
	// (a mounted Secret) and the CA bundle into the webhook configurations, which the installer
	// (the Helm chart) owns. The webhook only serves, reloading the files when they change.
	CertProviderExternal CertProvider = "external"
)

// ParseCertProvider reads a CertProvider from its name.
func ParseCertProvider(s string) (CertProvider, error) {
	switch p := CertProvider(s); p {
	case CertProviderSelf, CertProviderExternal:
		return p, nil
	}
	return "", fmt.Errorf("certificate provider must be %q or %q, got %q", CertProviderSelf, CertProviderExternal, s)
}

// withDefaults fills in the defaults.
func (o Options) withDefaults() Options {
	if o.Port == 0 {
		o.Port = DefaultPort
	}
	if o.CertDir == "" {
		o.CertDir = filepath.Join(os.TempDir(), "spark-operator-webhook-certs")
	}
	if o.SecretName == "" {
		o.SecretName = DefaultSecretName
	}
	if o.SecretNamespace == "" {
		o.SecretNamespace = o.ServiceNamespace
	}
	if o.FailurePolicy == "" {
		o.FailurePolicy = admissionregistrationv1.Fail
	}
	if o.CertValidity == 0 {
		o.CertValidity = DefaultCertValidity
	}
	if o.CAValidity == 0 {
		o.CAValidity = DefaultCAValidity
	}
	if o.CertCheckInterval == 0 {
		o.CertCheckInterval = min(o.CertValidity/10, 10*time.Minute)
	}
	if o.ConfigName == "" {
		o.ConfigName = DefaultConfigName
	}
	if o.ServicePort == 0 {
		o.ServicePort = int32(o.Port)
	}
	if o.TimeoutSeconds == 0 {
		o.TimeoutSeconds = DefaultTimeout
	}
	if o.CertProvider == "" {
		o.CertProvider = CertProviderSelf
	}
	return o
}

func (o Options) validate() error {
	var errs []error
	if _, err := ParseCertProvider(string(o.CertProvider)); err != nil {
		errs = append(errs, fmt.Errorf("webhook: %w", err))
	}
	if o.CertProvider == CertProviderSelf {
		if o.URLHost == "" && (o.ServiceName == "" || o.ServiceNamespace == "") {
			errs = append(errs, errors.New("webhook: set ServiceName and ServiceNamespace, or URLHost"))
		}
		if o.SecretNamespace == "" {
			errs = append(errs, errors.New("webhook: set SecretNamespace (or ServiceNamespace)"))
		}
		if net.ParseIP(o.URLHost) != nil {
			errs = append(errs, fmt.Errorf("webhook: URLHost %q is an IP address, but the certificates made name DNS names only: use a name such as localhost", o.URLHost))
		}
	}
	if o.FailurePolicy != admissionregistrationv1.Fail && o.FailurePolicy != admissionregistrationv1.Ignore {
		errs = append(errs, fmt.Errorf("webhook: failure policy %q is neither Fail nor Ignore", o.FailurePolicy))
	}
	if o.CertValidity < 0 || o.CAValidity < 0 {
		errs = append(errs, errors.New("webhook: negative certificate validity"))
	}
	return errors.Join(errs...)
}

// Hosts are the DNS names the serving certificate must be valid for: the Service's and URLHost.
func (o Options) Hosts() []string {
	var h []string
	if o.ServiceName != "" && o.ServiceNamespace != "" {
		svc := o.ServiceName + "." + o.ServiceNamespace
		h = append(h, svc+".svc", svc, o.ServiceName, svc+".svc."+defaultServiceDomain)
	}
	if o.URLHost != "" {
		h = append(h, o.URLHost)
	}
	return h
}

// NewServer returns the webhook server for manager.Options.WebhookServer: it listens on
// Host:Port and serves the certificate in CertDir (CertProviderExternal), reloading it when it
// is renewed, or the one Setup makes.
func NewServer(opts Options) ctrlwebhook.Server {
	o := opts.withDefaults()
	return ctrlwebhook.NewServer(ctrlwebhook.Options{
		Host:     o.Host,
		Port:     o.Port,
		CertDir:  o.CertDir,
		CertName: corev1.TLSCertKey,
		KeyName:  corev1.TLSPrivateKeyKey,
	})
}

// Setup registers the handlers on mgr's webhook server. With CertProviderSelf it also creates
// or updates the webhook configurations and adds to mgr cert-controller's rotator, which makes
// and renews the certificates and keeps the configurations' CA bundle (see setupSelfSigned).
// With CertProviderExternal it checks that CertDir holds a certificate. mgr's webhook server
// must be built with NewServer(opts).
func Setup(ctx context.Context, mgr manager.Manager, opts Options) error {
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return err
	}
	if ds, ok := mgr.GetWebhookServer().(*ctrlwebhook.DefaultServer); ok {
		if ds.Options.CertDir != o.CertDir || ds.Options.Port != o.Port {
			return fmt.Errorf("webhook: the manager's webhook server serves %s on port %d, not %s on port %d: build it with webhook.NewServer(opts)",
				ds.Options.CertDir, ds.Options.Port, o.CertDir, o.Port)
		}
	}
	if o.CertProvider == CertProviderExternal {
		if err := CheckFiles(o.CertDir); err != nil {
			return fmt.Errorf("webhook: the external certificate provider has not provided a certificate: %w", err)
		}
	} else if err := setupSelfSigned(ctx, mgr, o); err != nil {
		return err
	}
	// The validator lists applications from the cache: its informer starts with the manager,
	// not lazily at the first request, and the configurations wait for it (registration).
	if _, err := mgr.GetCache().GetInformer(ctx, &v1beta2.SparkApplication{}); err != nil {
		return fmt.Errorf("webhook: SparkApplication informer: %w", err)
	}
	Register(mgr.GetWebhookServer(), mgr.GetScheme(), CacheFirst{Cache: mgr.GetClient(), API: mgr.GetAPIReader()}, o)
	return nil
}

// CacheFirst reads from the manager's cache, which already holds every SparkApplication, and
// asks the API server only for what the cache has not seen yet (an application created a
// moment before its driver). A live read per admitted pod would put an API round trip, and
// its queueing under load, into every pod creation.
type CacheFirst struct {
	Cache client.Reader
	API   client.Reader
}

func (r CacheFirst) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := r.Cache.Get(ctx, key, obj, opts...)
	if apierrors.IsNotFound(err) {
		return r.API.Get(ctx, key, obj, opts...)
	}
	return err
}

// List reads from the API server: it serves the ResourceQuota check, whose usage figures must
// be current, and runs once per application rather than once per pod.
func (r CacheFirst) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.API.List(ctx, list, opts...)
}

// fromWatchCache reads through the API server's watch cache (resourceVersion "0"): it holds
// every pod, where the operator's own cache holds only its own, and answers without a round
// trip to etcd, which an application's creation would otherwise wait for under load. What it
// serves may lag etcd by moments; the driver-name check it serves settles no race anyway (the
// submission pool reads etcd before it creates the driver, package drivername).
type fromWatchCache struct{ client.Reader }

func (r fromWatchCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return r.Reader.Get(ctx, key, obj, append(opts, &client.GetOptions{Raw: &metav1.GetOptions{ResourceVersion: "0"}})...)
}

// Register adds the handlers to server; scheme decodes the requests (it must know Pods and the
// sparkoperator.k8s.io types, v1beta2 and v1alpha1). reader reads SparkApplications and ResourceQuotas; an application
// created a moment before its driver must be found (see CacheFirst). Its API reader reads the
// pod a new application names as its driver (through the API server's watch cache,
// fromWatchCache), and its cache lists the namespace's applications, so that a driver pod
// name another application holds is refused.
func Register(server ctrlwebhook.Server, scheme *runtime.Scheme, reader CacheFirst, opts Options) {
	o := opts.withDefaults()
	pods := &podmutator.Defaulter{Reader: reader}
	if o.BatchSchedulers.Registry != nil {
		pods.Placer = o.BatchSchedulers.Registry
	}
	for path, w := range map[string]struct {
		name string
		hook *admission.Webhook
	}{
		PathMutatePods:             {"pod-mutator", admission.WithDefaulter(scheme, pods)},
		PathMutateSparkApplication: {"sparkapplication-mutator", admission.WithDefaulter(scheme, appmutator.Defaulter{})},
		PathValidateSparkApplication: {"sparkapplication-validator", admission.WithValidator(scheme,
			&validation.SparkApplicationValidator{Reader: reader, EnforceQuota: o.EnableResourceQuota, Schedulers: o.BatchSchedulers,
				Pods: fromWatchCache{reader.API}, Apps: reader.Cache, KnownSchedulers: o.KnownSchedulers})},
		PathValidateScheduledSparkApplication: {"scheduledsparkapplication-validator", admission.WithValidator(scheme,
			validation.ScheduledSparkApplicationValidator{})},
		PathValidateSparkConnect: {"sparkconnect-validator", admission.WithValidator(scheme, validation.SparkConnectValidator{})},
	} {
		w.hook.Handler = instrument(w.name, w.hook.Handler)
		w.hook.WithContextFunc = finishOnStop
		server.Register(path, w.hook)
	}
}

// finishOnStop is a request's context without the cancellation of the server's: controller-
// runtime's webhook server derives every request's context from its own, which the manager
// cancels as it stops, while the server waits for the requests in flight to be answered. A
// request the API server sent a replica just before a rolling update stopped it would be
// refused ("context canceled") on its first API read; it is answered instead. The API server
// bounds the call with its own timeout.
func finishOnStop(ctx context.Context, _ *http.Request) context.Context {
	return context.WithoutCancel(ctx)
}
