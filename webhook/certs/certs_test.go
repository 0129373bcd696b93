/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package certs

import (
	"crypto/x509"
	"net"
	"testing"
	"time"
)

var testHosts = Hosts{DNSNames: []string{"svc.ns.svc"}, IPs: []net.IP{net.ParseIP("127.0.0.1")}}

func verifies(t *testing.T, b *Bundle, trusted []byte, now time.Time) error {
	t.Helper()
	cert, err := b.ServingCert()
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(trusted) {
		t.Fatal("empty CA bundle")
	}
	_, err = cert.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, DNSName: "svc.ns.svc"})
	return err
}

func TestGenerate(t *testing.T) {
	now := time.Now()
	b, err := Generate(testHosts, time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := verifies(t, b, b.CABundle, now); err != nil {
		t.Fatal(err)
	}
	cert, _ := b.ServingCert()
	if len(cert.IPAddresses) != 1 || !cert.IPAddresses[0].Equal(net.ParseIP("127.0.0.1")) {
		t.Errorf("IP SANs %v, want 127.0.0.1", cert.IPAddresses)
	}
	if got := cert.NotAfter.Sub(now); got <= time.Hour-time.Second || got > time.Hour {
		t.Errorf("serving certificate valid for %s, want 1h", got)
	}
	if next, why, err := Next(b, testHosts, time.Hour, time.Minute, now); err != nil || next != nil {
		t.Errorf("fresh bundle: Next = %v, %q, %v; want nothing to do", next != nil, why, err)
	}
	if _, err := Generate(Hosts{}, time.Hour, now); err == nil {
		t.Error("Generate without hosts: no error")
	}
}

func TestNextNewHost(t *testing.T) {
	now := time.Now()
	b, err := Generate(testHosts, time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	more := Hosts{DNSNames: append([]string{"other"}, testHosts.DNSNames...), IPs: testHosts.IPs}
	// Once the CA has been trusted for the propagation delay, it signs the new certificate.
	next, why, err := Next(b, more, time.Hour, time.Minute, now.Add(2*time.Minute))
	if err != nil || next == nil {
		t.Fatalf("Next = %v, %v; want a new certificate", next, err)
	}
	if string(next.CACert) != string(b.CACert) {
		t.Error("a new host replaced the CA")
	}
	cert, _ := next.ServingCert()
	if cert.DNSNames[0] != "other" {
		t.Errorf("DNS names %v, reason %q", cert.DNSNames, why)
	}
}

// TestRotationWithoutDowntime steps a clock through several lifetimes. An API server that
// trusts the CA bundle of the previous step (it has not seen the newest yet) must accept the
// certificate served at each step, and both the certificate and the CA must be renewed.
func TestRotationWithoutDowntime(t *testing.T) {
	const validity = time.Hour
	const propagation = validity / 10
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b, _, err := Next(nil, testHosts, validity, propagation, now)
	if err != nil {
		t.Fatal(err)
	}
	certs, cas := map[string]bool{string(b.Cert): true}, map[string]bool{string(b.CACert): true}
	for step := 0; step < 80; step++ {
		now = now.Add(validity / 20)
		prevTrust := b.CABundle
		next, _, err := Next(b, testHosts, validity, propagation, now)
		if err != nil {
			t.Fatal(err)
		}
		if next != nil {
			b = next
		}
		if err := verifies(t, b, prevTrust, now); err != nil {
			t.Fatalf("step %d (%s): served certificate not trusted with the previous CA bundle: %v", step, now, err)
		}
		if err := verifies(t, b, b.CABundle, now); err != nil {
			t.Fatalf("step %d: served certificate not trusted with its own CA bundle: %v", step, err)
		}
		certs[string(b.Cert)], cas[string(b.CACert)] = true, true
		if n := len(b.CAs()); n > 3 {
			t.Fatalf("step %d: %d CAs in the bundle: expired ones are not pruned", step, n)
		}
	}
	if len(certs) < 5 || len(cas) < 2 {
		t.Errorf("over 4 validities: %d serving certificates, %d CAs; want renewals of both", len(certs), len(cas))
	}
}

func TestNextDamaged(t *testing.T) {
	now := time.Now()
	next, _, err := Next(&Bundle{CACert: []byte("junk")}, testHosts, time.Hour, time.Minute, now)
	if err != nil || next == nil {
		t.Fatalf("Next = %v, %v", next, err)
	}
	if err := verifies(t, next, next.CABundle, now); err != nil {
		t.Fatal(err)
	}
}
