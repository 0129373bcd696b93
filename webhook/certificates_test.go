/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package webhook

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestFirstCertificatesValidForTheirWholeLifetime: the first CA and serving certificate are
// valid from an hour back (API servers whose clock is behind) to their whole validity from
// now, for validities shorter than that hour too.
func TestFirstCertificatesValidForTheirWholeLifetime(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cert, ca time.Duration
	}{
		{name: "defaults", cert: DefaultCertValidity, ca: DefaultCAValidity},
		{name: "shorter than the hour back", cert: 9 * time.Second, ca: 30 * time.Second},
		{name: "a day", cert: 24 * time.Hour, ca: 48 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().Build()
			cr := &rotator.CertRotator{
				SecretKey: types.NamespacedName{Namespace: "ops", Name: "certs"},
				CAName:    "ca", CAOrganization: "test", DNSName: "wh.ops.svc",
				ExtKeyUsages:   &[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
				CaCertDuration: tc.ca, ServerCertDuration: tc.cert,
			}
			before := time.Now()
			secret, err := ensureCertificates(context.Background(), c, cr)
			if err != nil {
				t.Fatal(err)
			}
			for key, validity := range map[string]time.Duration{caCertKey: tc.ca, corev1.TLSCertKey: tc.cert} {
				block, _ := pem.Decode(secret.Data[key])
				if block == nil {
					t.Fatalf("%s: no PEM", key)
				}
				crt, err := x509.ParseCertificate(block.Bytes)
				if err != nil {
					t.Fatalf("%s: %v", key, err)
				}
				// Certificates carry whole seconds.
				if nb := before.Add(-time.Hour - time.Second); crt.NotBefore.Before(nb) || crt.NotBefore.After(time.Now().Add(-time.Hour)) {
					t.Errorf("%s: valid from %s, want an hour before %s", key, crt.NotBefore, before)
				}
				if until := before.Add(validity - time.Second); crt.NotAfter.Before(until) {
					t.Errorf("%s: valid until %s, want %s from %s", key, crt.NotAfter, validity, before)
				}
			}
		})
	}
}
