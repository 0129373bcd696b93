/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package certs gives the webhook server its TLS certificate without an external tool: it
// makes a CA and a serving certificate, keeps them in a Secret that every replica and restart
// reuses, writes them where the webhook server reads them, hands the CA bundle to whoever
// registers the webhook configurations, and renews both before they expire.
package certs

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"slices"
	"strings"
	"time"
)

// Keys of the Secret. tls.crt and tls.key follow the kubernetes.io/tls convention.
const (
	KeyCACert   = "ca.crt"
	KeyCAKey    = "ca.key"
	KeyCABundle = "ca-bundle.crt" // current CA, then the previous one while it is valid
	KeyCert     = "tls.crt"
	KeyKey      = "tls.key"
)

// File names in the certificate directory, controller-runtime's webhook server defaults.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// clockSkew backdates certificates so that API servers with a clock slightly behind accept them.
const clockSkew = time.Minute

// Bundle is the webhook's certificates, PEM-encoded: the CA that signs serving certificates
// now, every CA clients should trust, and the serving certificate with its key.
type Bundle struct {
	// CACert and CAKey are the current signing CA.
	CACert, CAKey []byte
	// CABundle is what clients trust: the current CA, followed by earlier CAs while they are
	// valid, so that a serving certificate signed by any of them is accepted.
	CABundle  []byte
	Cert, Key []byte
}

// Hosts are the names the serving certificate is valid for.
type Hosts struct {
	DNSNames []string
	IPs      []net.IP
}

// A CA lives twice the serving validity and is replaced when half of its life is over; serving
// certificates are replaced when less than a third of their validity is left. A new CA enters
// the CA bundle a third of the serving validity before the first certificate it signs is
// served, which leaves API servers time to see the new bundle: rotation needs no downtime.
const caLifetimeFactor = 2

// Generate makes a new CA and a serving certificate for hosts signed by it, the certificate
// valid for validity from now and the CA for twice as long.
func Generate(hosts Hosts, validity time.Duration, now time.Time) (*Bundle, error) {
	if validity <= 0 {
		return nil, errors.New("certificate validity must be positive")
	}
	b, err := newCA(validity*caLifetimeFactor, now)
	if err != nil {
		return nil, err
	}
	return b, b.issue(hosts, validity, now)
}

// newCA returns a bundle with only a fresh CA, trusted alone.
func newCA(validity time.Duration, now time.Time) (*Bundle, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "spark-operator-webhook-ca-" + now.UTC().Format("20060102T150405.000Z")},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("creating CA certificate: %w", err)
	}
	keyData, err := keyPEM(caKey)
	if err != nil {
		return nil, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return &Bundle{CACert: caPEM, CAKey: keyData, CABundle: slices.Clone(caPEM)}, nil
}

// issue replaces the serving certificate with one for hosts signed by the current CA, valid
// for validity from now but not beyond the CA.
func (b *Bundle) issue(hosts Hosts, validity time.Duration, now time.Time) error {
	if len(hosts.DNSNames) == 0 && len(hosts.IPs) == 0 {
		return errors.New("the serving certificate needs at least one DNS name or IP address")
	}
	ca, err := parseCert(b.CACert)
	if err != nil {
		return fmt.Errorf("CA certificate: %w", err)
	}
	caKey, err := parseKey(b.CAKey)
	if err != nil {
		return fmt.Errorf("CA key: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	cn := "spark-operator-webhook"
	if len(hosts.DNSNames) > 0 {
		cn = hosts.DNSNames[0]
	}
	notAfter := now.Add(validity)
	if ca.NotAfter.Before(notAfter) {
		notAfter = ca.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn},
		DNSNames:     hosts.DNSNames,
		IPAddresses:  hosts.IPs,
		NotBefore:    now.Add(-clockSkew),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("creating serving certificate: %w", err)
	}
	keyData, err := keyPEM(key)
	if err != nil {
		return err
	}
	b.Cert = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	b.Key = keyData
	return nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}

func keyPEM(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

func parseKey(data []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM key")
	}
	return x509.ParseECPrivateKey(block.Bytes)
}

func parseCert(data []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

// ServingCert parses the bundle's serving certificate.
func (b *Bundle) ServingCert() (*x509.Certificate, error) { return parseCert(b.Cert) }

// CAs parses the CA bundle, skipping what is not a certificate.
func (b *Bundle) CAs() []*x509.Certificate {
	var out []*x509.Certificate
	rest := b.CABundle
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return out
		}
		if c, err := x509.ParseCertificate(block.Bytes); err == nil && block.Type == "CERTIFICATE" {
			out = append(out, c)
		}
	}
}

func (b *Bundle) clone() *Bundle {
	return &Bundle{CACert: slices.Clone(b.CACert), CAKey: slices.Clone(b.CAKey), CABundle: slices.Clone(b.CABundle), Cert: slices.Clone(b.Cert), Key: slices.Clone(b.Key)}
}

// Next decides what to change in b at now. It returns nil when b can stay as it is, else the
// new bundle and why. b may be nil or damaged: then everything is made anew. propagation is how
// long a new CA must have been in the CA bundle before a certificate it signed is served.
func Next(b *Bundle, hosts Hosts, validity, propagation time.Duration, now time.Time) (*Bundle, string, error) {
	if b == nil || len(b.CACert) == 0 {
		nb, err := Generate(hosts, validity, now)
		return nb, "no certificates yet", err
	}
	ca, caErr := parseCert(b.CACert)
	_, keyErr := parseKey(b.CAKey)
	if caErr != nil || keyErr != nil {
		nb, err := Generate(hosts, validity, now)
		return nb, "the CA is damaged", err
	}
	out := b.clone()
	var reasons []string

	// Trust: drop expired CAs; make sure the current one is in.
	var trusted []byte
	found := false
	for _, c := range b.CAs() {
		if now.After(c.NotAfter) {
			continue
		}
		if c.Equal(ca) {
			found = true
		}
		trusted = append(trusted, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	if !found {
		trusted = append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), trusted...)
	}
	if !bytes.Equal(trusted, b.CABundle) {
		out.CABundle = trusted
		reasons = append(reasons, "CA bundle updated")
	}

	// A CA past half its life is replaced; the old one stays trusted until it expires.
	if ca.NotAfter.Sub(now) <= validity*caLifetimeFactor/2 {
		fresh, err := newCA(validity*caLifetimeFactor, now)
		if err != nil {
			return nil, "", err
		}
		out.CACert, out.CAKey = fresh.CACert, fresh.CAKey
		out.CABundle = append(fresh.CABundle, out.CABundle...)
		ca, _ = parseCert(out.CACert)
		reasons = append(reasons, "new CA (the current one is past half its life)")
	}

	// The serving certificate.
	why := out.servingProblem(hosts, validity, now)
	if why != "" {
		usable := out.servingUsable(now)
		caAge := now.Sub(ca.NotBefore.Add(clockSkew))
		if !usable || caAge >= propagation {
			if err := out.issue(hosts, validity, now); err != nil {
				return nil, "", err
			}
			reasons = append(reasons, "new serving certificate: "+why)
		}
	}
	if len(reasons) == 0 {
		return nil, "", nil
	}
	return out, strings.Join(reasons, "; "), nil
}

// servingUsable tells whether clients trusting the CA bundle accept the serving certificate now.
func (b *Bundle) servingUsable(now time.Time) bool {
	cert, err := b.ServingCert()
	if err != nil {
		return false
	}
	if _, err := tls.X509KeyPair(b.Cert, b.Key); err != nil {
		return false
	}
	pool := x509.NewCertPool()
	for _, c := range b.CAs() {
		pool.AddCert(c)
	}
	_, err = cert.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	return err == nil
}

// servingProblem says why the serving certificate must be replaced, "" when it need not.
func (b *Bundle) servingProblem(hosts Hosts, validity time.Duration, now time.Time) string {
	if !b.servingUsable(now) {
		return "missing, damaged, expired or not signed by a trusted CA"
	}
	cert, _ := b.ServingCert()
	for _, name := range hosts.DNSNames {
		if !slices.Contains(cert.DNSNames, name) {
			return "lacks DNS name " + name
		}
	}
	for _, ip := range hosts.IPs {
		if !slices.ContainsFunc(cert.IPAddresses, ip.Equal) {
			return "lacks IP address " + ip.String()
		}
	}
	if cert.NotAfter.Sub(now) < validity/3 {
		return "less than a third of its validity left"
	}
	return ""
}
