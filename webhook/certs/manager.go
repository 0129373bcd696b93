/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Manager keeps the webhook's certificates: in a Secret, in CertDir, and in the CA bundle it
// passes to OnCABundle. Start it with a controller-runtime manager (it is a Runnable that runs
// on every replica, not only the leader) to renew the certificates in time; call Ensure once
// before the webhook server starts so that it finds its files.
type Manager struct {
	// Client reads and writes the Secret. It must not be a cache-backed client that has not
	// started: use an uncached client.
	Client client.Client
	// SecretName and SecretNamespace name the Secret holding the certificates.
	SecretName, SecretNamespace string
	// Hosts are the names the serving certificate is valid for.
	Hosts Hosts
	// Validity is the lifetime of newly made certificates. They are renewed when less than a
	// third of it is left.
	Validity time.Duration
	// CertDir is where tls.crt and tls.key are written for the webhook server.
	CertDir string
	// CheckInterval is how often Start looks at the certificates; defaults to a tenth of
	// Validity, at most 10 minutes.
	CheckInterval time.Duration
	// PropagationDelay is how long a new CA is in the CA bundle before a certificate it signed
	// is served, so that API servers have seen the new bundle; default a tenth of Validity, at
	// most a minute.
	PropagationDelay time.Duration
	// OnCABundle, when set, is called with the CA bundle after each change of it (and at the
	// first Ensure), to register it in the webhook configurations.
	OnCABundle func(ctx context.Context, caBundle []byte) error
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu          sync.Mutex
	lastBundle  []byte // CA bundle last handed to OnCABundle
	lastWritten []byte // serving certificate last written to CertDir
}

func (m *Manager) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Ensure makes sure that the Secret holds a usable bundle (creating or renewing it when needed,
// or adopting one another replica made), that OnCABundle got its CA bundle and that CertDir
// holds its serving certificate, in that order: clients trust the new CA before it is served.
func (m *Manager) Ensure(ctx context.Context) (*Bundle, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, err := m.ensureSecret(ctx)
	if err != nil {
		return nil, err
	}
	if m.OnCABundle != nil && !bytes.Equal(m.lastBundle, b.CABundle) {
		if err := m.OnCABundle(ctx, b.CABundle); err != nil {
			return nil, fmt.Errorf("registering the CA bundle: %w", err)
		}
		m.lastBundle = slicesClone(b.CABundle)
	}
	if !bytes.Equal(m.lastWritten, b.Cert) {
		if err := WriteFiles(m.CertDir, b); err != nil {
			return nil, err
		}
		m.lastWritten = slicesClone(b.Cert)
	}
	return b, nil
}

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }

// CABundle is the CA bundle last handed to OnCABundle; nil before the first Ensure.
func (m *Manager) CABundle() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slicesClone(m.lastBundle)
}

// CheckFiles tells whether dir holds a serving certificate and its key that belong together,
// as a certificate provided by someone else (a mounted cert-manager Secret) must.
func CheckFiles(dir string) error {
	certPath, keyPath := filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile)
	if _, err := tls.LoadX509KeyPair(certPath, keyPath); err != nil {
		return fmt.Errorf("loading %s and %s: %w", certPath, keyPath, err)
	}
	return nil
}

// ensureSecret returns the Secret's bundle, changing it when Next says so. Replicas racing to
// write it settle on the first write: the others see a conflict and adopt it.
func (m *Manager) ensureSecret(ctx context.Context) (*Bundle, error) {
	key := types.NamespacedName{Namespace: m.SecretNamespace, Name: m.SecretName}
	for attempt := 0; attempt < 5; attempt++ {
		secret := &corev1.Secret{}
		err := m.Client.Get(ctx, key, secret)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading Secret %s: %w", key, err)
		}
		exists := err == nil
		var old *Bundle
		if exists {
			old = fromSecret(secret)
		}
		b, why, err := Next(old, m.Hosts, m.Validity, m.propagation(), m.now())
		if err != nil {
			return nil, err
		}
		if b == nil {
			return old, nil
		}
		log.FromContext(ctx).Info("updating webhook certificates", "secret", key.String(), "reason", why)
		if secret.Labels == nil {
			secret.Labels = map[string]string{}
		}
		secret.Labels["app.kubernetes.io/component"] = "webhook-certificates"
		secret.Data = map[string][]byte{
			KeyCACert: b.CACert, KeyCAKey: b.CAKey, KeyCABundle: b.CABundle, KeyCert: b.Cert, KeyKey: b.Key,
		}
		if exists {
			err = m.Client.Update(ctx, secret)
		} else {
			secret.ObjectMeta = metav1.ObjectMeta{Name: m.SecretName, Namespace: m.SecretNamespace, Labels: secret.Labels}
			secret.Type = corev1.SecretTypeOpaque
			err = m.Client.Create(ctx, secret)
		}
		switch {
		case err == nil:
			return b, nil
		case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
			continue // another replica wrote it first: use theirs
		default:
			return nil, fmt.Errorf("writing Secret %s: %w", key, err)
		}
	}
	return nil, fmt.Errorf("secret %s keeps changing under us", key)
}

// propagation is how long a new CA is trusted before it signs the served certificate.
func (m *Manager) propagation() time.Duration {
	if m.PropagationDelay > 0 {
		return m.PropagationDelay
	}
	return min(m.Validity/10, time.Minute)
}

func fromSecret(s *corev1.Secret) *Bundle {
	b := &Bundle{CACert: s.Data[KeyCACert], CAKey: s.Data[KeyCAKey], CABundle: s.Data[KeyCABundle], Cert: s.Data[KeyCert], Key: s.Data[KeyKey]}
	if len(b.CABundle) == 0 {
		b.CABundle = b.CACert
	}
	return b
}

// WriteFiles writes the serving certificate and key to dir, each atomically (through a rename),
// the key first; a reader that sees a new certificate with the old key retries on its next look.
func WriteFiles(dir string, b *Bundle) error {
	if dir == "" {
		return errors.New("no certificate directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{KeyFile, b.Key}, {CertFile, b.Cert}} {
		tmp, err := os.CreateTemp(dir, "."+f.name+"-*")
		if err != nil {
			return err
		}
		_, werr := tmp.Write(f.data)
		cerr := tmp.Close()
		if err := errors.Join(werr, cerr); err != nil {
			_ = os.Remove(tmp.Name())
			return err
		}
		if err := os.Rename(tmp.Name(), filepath.Join(dir, f.name)); err != nil {
			_ = os.Remove(tmp.Name())
			return err
		}
	}
	return nil
}

// Start checks the certificates every CheckInterval until ctx ends, renewing them when due
// and picking up renewals made by other replicas. Errors are logged and retried.
func (m *Manager) Start(ctx context.Context) error {
	interval := m.CheckInterval
	if interval <= 0 {
		interval = min(m.Validity/10, 10*time.Minute)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if _, err := m.Ensure(ctx); err != nil {
				log.FromContext(ctx).Error(err, "checking webhook certificates")
			}
		}
	}
}

// NeedLeaderElection is false: every replica serves the webhook and needs the files.
func (m *Manager) NeedLeaderElection() bool { return false }
