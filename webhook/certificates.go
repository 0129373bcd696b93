/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"k8s.io/utils/ptr"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/sparkop/spark-operator/internal/ownedcache"
)

// setupSelfSigned gives the webhook certificates made by cert-controller's rotator (what Kueue
// and Gatekeeper use): it keeps a CA and a serving certificate in the Secret, renews them, and
// injects the CA into the caBundle of both configurations whenever they change. Every replica
// runs it against the same Secret (a replica losing a write race adopts the winner's). The
// configurations are created here, at start, if missing; after that a deleted one stays
// deleted (an uninstall), as the rotator only updates what exists.
func setupSelfSigned(ctx context.Context, mgr manager.Manager, o Options) error {
	ds, ok := mgr.GetWebhookServer().(*ctrlwebhook.DefaultServer)
	if !ok {
		return errors.New("webhook: the manager's webhook server must be webhook.NewServer's")
	}
	// The manager's client reads from a cache that has not started yet.
	direct, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return fmt.Errorf("webhook: creating a client: %w", err)
	}
	key := types.NamespacedName{Namespace: o.SecretNamespace, Name: o.SecretName}
	// A process may set the webhook up again (tests restarting it in place), and
	// controller-runtime refuses a controller name used before in the process.
	suffix := ""
	if n := setups.Add(1); n > 1 {
		suffix = fmt.Sprintf("-%d", n)
	}
	hosts := o.Hosts()
	cr := &rotator.CertRotator{
		SecretKey:      key,
		CertDir:        o.CertDir,
		CAName:         "spark-operator-webhook-ca",
		CAOrganization: "spark-operator",
		DNSName:        hosts[0],
		ExtraDNSNames:  hosts[1:],
		ExtKeyUsages:   &[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsReady:        make(chan struct{}),
		Webhooks: []rotator.WebhookInfo{
			{Name: o.ConfigName, Type: rotator.Mutating},
			{Name: o.ConfigName, Type: rotator.Validating},
		},
		CaCertDuration:         o.CAValidity,
		ServerCertDuration:     o.CertValidity,
		LookaheadInterval:      o.CertValidity / 3,
		RotationCheckFrequency: o.CertCheckInterval,
		ControllerName:         "webhook-cert-rotator" + suffix,
	}
	secret, err := ensureCertificates(ctx, direct, cr)
	if err != nil {
		return err
	}
	// The certificate read directly from the API server is served from the first handshake:
	// the cache that follows the Secret syncs only once the manager runs, and a restarted
	// replica must not refuse handshakes until then.
	serving := &servingCertificate{key: key, certDir: o.CertDir}
	// A Secret whose certificate does not load is the rotator's to repair; the new one is
	// served when it is written.
	if err := serving.load(secret); err != nil && !errors.Is(err, errNoKeyPair) {
		return fmt.Errorf("webhook: certificate Secret %s: %w", key, err)
	}
	ds.Options.TLSOpts = append(ds.Options.TLSOpts, func(c *tls.Config) { c.GetCertificate = serving.get })
	if err := serving.setup(mgr, "webhook-serving-certificate"+suffix); err != nil {
		return err
	}
	// The configurations are written only once this replica answers TLS (registered), so
	// that the API server never turns to a server that cannot answer yet.
	reg := &registration{client: direct, opts: o, secret: key, serves: ds.StartedChecker(), synced: mgr.GetCache().WaitForCacheSync}
	if err := mgr.Add(everyReplica{reg}); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("webhook-registered"+suffix, reg.check); err != nil {
		return err
	}
	// The rotator's cache must outlive the rotator, whose first read of the Secret cannot be
	// cancelled (ownedcache).
	return rotator.AddRotator(ownedcache.Manager(mgr), cr)
}

// registration creates the webhook configurations, or brings their webhooks up to date, with
// the CA the Secret holds, once the webhook server answers TLS; the replica is ready only
// then. A restart keeps the CA bundle they already have; the rotator keeps it from then on.
type registration struct {
	client client.Client
	opts   Options
	secret types.NamespacedName
	serves healthz.Checker
	// synced waits for the manager's cache, from which the validator lists applications.
	synced func(context.Context) bool
	done   atomic.Bool
}

func (r *registration) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("webhook-registration")
	if !r.synced(ctx) {
		return nil // stopped before the cache synced
	}
	delay := 50 * time.Millisecond
	for {
		err := r.serves(nil)
		if err == nil {
			err = r.register(ctx)
		}
		if err == nil {
			r.done.Store(true)
			log.Info("webhook configurations registered", "name", r.opts.ConfigName)
			return nil
		}
		log.V(1).Info("webhook configurations not registered yet", "reason", err.Error())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

func (r *registration) register(ctx context.Context) error {
	secret := &corev1.Secret{}
	if err := r.client.Get(ctx, r.secret, secret); err != nil {
		return fmt.Errorf("reading certificate Secret %s: %w", r.secret, err)
	}
	return ApplyConfigurations(ctx, r.client, r.opts, secret.Data[caCertKey])
}

func (r *registration) check(*http.Request) error {
	if !r.done.Load() {
		return errors.New("webhook configurations not registered yet")
	}
	return nil
}

// Where the rotator keeps its CA in the Secret (beside tls.crt and tls.key).
const (
	caCertKey = "ca.crt"
	caKeyKey  = "ca.key"
)

// ensureCertificates returns the Secret, creating it and its first certificates if missing,
// with the rotator's own functions and in its format: the rotator fills Secrets but does not
// create them (the Helm chart ships it empty, so that uninstalling removes it), and makes the
// first certificates only once the manager runs, when the server already serves; made here,
// the configurations can trust the CA first. From then on the rotator renews them.
func ensureCertificates(ctx context.Context, c client.Client, cr *rotator.CertRotator) (*corev1.Secret, error) {
	for range 5 {
		secret := &corev1.Secret{}
		err := c.Get(ctx, cr.SecretKey, secret)
		if apierrors.IsNotFound(err) {
			secret.Name, secret.Namespace = cr.SecretKey.Name, cr.SecretKey.Namespace
			secret.Labels = map[string]string{"app.kubernetes.io/component": "webhook-certificates"}
			err = c.Create(ctx, secret)
		}
		if err == nil && len(secret.Data[corev1.TLSCertKey]) > 0 {
			return secret, nil
		}
		if err == nil {
			// As the rotator: valid from an hour back, for API servers whose clock is behind,
			// and for the whole validity from now.
			now := time.Now()
			begin := now.Add(-time.Hour)
			var ca *rotator.KeyPairArtifacts
			var crt, key []byte
			if ca, err = cr.CreateCACert(begin, now.Add(cr.CaCertDuration)); err == nil {
				crt, key, err = cr.CreateCertPEM(ca, begin, now.Add(cr.ServerCertDuration))
			}
			if err != nil {
				return nil, fmt.Errorf("webhook: making certificates: %w", err)
			}
			secret.Data = map[string][]byte{caCertKey: ca.CertPEM, caKeyKey: ca.KeyPEM, corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}
			if err = c.Update(ctx, secret); err == nil {
				return secret, nil
			}
		}
		if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("webhook: certificate Secret %s: %w", cr.SecretKey, err)
		} // else another replica was first: use its certificates
	}
	return nil, fmt.Errorf("webhook: certificate Secret %s keeps changing under us", cr.SecretKey)
}

// servingCertificate serves the certificate in the Secret from the moment it is written, on
// every replica: it follows that one Secret through its own cache. A file-based certificate
// watcher could not start before the rotator's first certificate exists. The files are written
// to CertDir as well, where the rotator waits for them before it reports readiness.
type servingCertificate struct {
	key     types.NamespacedName
	certDir string
	reader  client.Reader
	cert    atomic.Pointer[tls.Certificate]
}

func (s *servingCertificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := s.cert.Load(); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("no serving certificate in Secret %s yet", s.key)
}

func (s *servingCertificate) setup(mgr manager.Manager, name string) error {
	secrets, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{s.key.Namespace: {}},
		ByObject:          map[client.Object]cache.ByObject{&corev1.Secret{}: {Field: fields.OneTermEqualSelector("metadata.name", s.key.Name)}},
	})
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	if err := mgr.Add(ownedcache.Runnable(secrets)); err != nil {
		return err
	}
	s.reader = secrets
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WatchesRawSource(source.Kind(secrets, &corev1.Secret{}, &handler.TypedEnqueueRequestForObject[*corev1.Secret]{})).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false), MaxConcurrentReconciles: 1}).
		Complete(s)
}

// Reconcile loads the Secret's serving certificate; one the Secret does not hold yet comes
// with the Secret's next change.
func (s *servingCertificate) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	secret := &corev1.Secret{}
	if err := s.reader.Get(ctx, s.key, secret); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if err := s.load(secret); err != nil && !errors.Is(err, errNoKeyPair) {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, nil
}

var errNoKeyPair = errors.New("no valid serving certificate and key")

// load serves the certificate secret holds and writes it to certDir.
func (s *servingCertificate) load(secret *corev1.Secret) error {
	crt, key := secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey]
	pair, err := tls.X509KeyPair(crt, key)
	if err != nil {
		return fmt.Errorf("%w: %v", errNoKeyPair, err)
	}
	if err := os.MkdirAll(s.certDir, 0o700); err != nil {
		return err
	}
	for name, data := range map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key} {
		if err := os.WriteFile(filepath.Join(s.certDir, name), data, 0o600); err != nil {
			return err
		}
	}
	s.cert.Store(&pair)
	return nil
}

// everyReplica runs a runnable on every replica, not only the leader: each serves the webhook.
type everyReplica struct{ manager.Runnable }

func (everyReplica) NeedLeaderElection() bool { return false }

// CheckFiles tells whether dir holds a serving certificate and its key that belong together,
// as a certificate provided by someone else (a mounted cert-manager Secret) must.
func CheckFiles(dir string) error {
	certPath, keyPath := filepath.Join(dir, corev1.TLSCertKey), filepath.Join(dir, corev1.TLSPrivateKeyKey)
	if _, err := tls.LoadX509KeyPair(certPath, keyPath); err != nil {
		return fmt.Errorf("loading %s and %s: %w", certPath, keyPath, err)
	}
	return nil
}

var setups atomic.Int64
