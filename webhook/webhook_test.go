/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package webhook

import (
	"context"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func TestHosts(t *testing.T) {
	tests := []struct {
		opts Options
		want []string
	}{
		{Options{ServiceName: "wh", ServiceNamespace: "ops"}, []string{"wh.ops.svc", "wh.ops", "wh", "wh.ops.svc.cluster.local"}},
		{Options{URLHost: "localhost"}, []string{"localhost"}},
	}
	for _, tc := range tests {
		if d := cmp.Diff(tc.want, tc.opts.Hosts()); d != "" {
			t.Errorf("%+v (-want +got):\n%s", tc.opts, d)
		}
	}
}

func TestClientConfig(t *testing.T) {
	path := PathMutatePods
	port := int32(443)
	tests := []struct {
		name string
		opts Options
		want admissionregistrationv1.WebhookClientConfig
	}{
		{"url", Options{URLHost: "127.0.0.1", Port: 9443}, admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:9443" + path), CABundle: []byte("ca")}},
		{"ipv6 url", Options{URLHost: "::1", Port: 9443}, admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://[::1]:9443" + path), CABundle: []byte("ca")}},
		{"service", Options{ServiceName: "wh", ServiceNamespace: "ops", ServicePort: 443}, admissionregistrationv1.WebhookClientConfig{
			Service: &admissionregistrationv1.ServiceReference{Namespace: "ops", Name: "wh", Path: &path, Port: &port}, CABundle: []byte("ca"),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, clientConfig(tc.opts.withDefaults(), path, []byte("ca"))); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestConfigurations(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"team": "data"}}
	m, v := Configurations(Options{URLHost: "127.0.0.1", FailurePolicy: admissionregistrationv1.Ignore, NamespaceSelector: sel}, []byte("ca"))
	if m.Name != DefaultConfigName || v.Name != DefaultConfigName {
		t.Errorf("names %q, %q", m.Name, v.Name)
	}
	pod := m.Webhooks[0]
	wantSel := &metav1.LabelSelector{
		MatchLabels:      map[string]string{"sparkoperator.k8s.io/launched-by-spark-operator": "true"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "sparkoperator.k8s.io/customised", Operator: metav1.LabelSelectorOpDoesNotExist}},
	}
	if d := cmp.Diff(wantSel, pod.ObjectSelector); d != "" {
		t.Errorf("pod webhook object selector (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]admissionregistrationv1.OperationType{admissionregistrationv1.Create}, pod.Rules[0].Operations); d != "" {
		t.Errorf("pod webhook operations (-want +got):\n%s", d)
	}
	for _, w := range v.Webhooks {
		if *w.FailurePolicy != admissionregistrationv1.Ignore || cmp.Diff(sel, w.NamespaceSelector) != "" {
			t.Errorf("%s: failure policy %s, namespace selector %v", w.Name, *w.FailurePolicy, w.NamespaceSelector)
		}
	}
	if got := []string{v.Webhooks[0].Rules[0].Resources[0], v.Webhooks[1].Rules[0].Resources[0]}; cmp.Diff([]string{"sparkapplications", "scheduledsparkapplications"}, got) != "" {
		t.Errorf("validated resources %v", got)
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		ok   bool
	}{
		{"service", Options{ServiceName: "wh", ServiceNamespace: "ops"}, true},
		{"url needs a secret namespace", Options{URLHost: "localhost"}, false},
		{"url", Options{URLHost: "localhost", SecretNamespace: "ops"}, true},
		// The certificates cert-controller makes name DNS names only.
		{"url by IP", Options{URLHost: "127.0.0.1", SecretNamespace: "ops"}, false},
		{"url by IP, external certificates", Options{URLHost: "127.0.0.1", CertProvider: CertProviderExternal}, true},
		{"neither", Options{SecretNamespace: "ops"}, false},
		{"bad policy", Options{ServiceName: "wh", ServiceNamespace: "ops", FailurePolicy: "Maybe"}, false},
	}
	for _, tc := range tests {
		if err := tc.opts.withDefaults().validate(); (err == nil) != tc.ok {
			t.Errorf("%s: validate() = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestSetupNeedsItsServer(t *testing.T) {
	mgr, err := manager.New(&rest.Config{Host: "https://127.0.0.1:1"}, manager.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	err = Setup(context.Background(), mgr, Options{URLHost: "localhost", SecretNamespace: "ops", CertDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "build it with webhook.NewServer(opts)") {
		t.Fatalf("Setup with the default webhook server: %v, want an error", err)
	}
}

// optionsReader records the options of the reads made through it.
type optionsReader struct {
	client.Reader
	got client.GetOptions
}

func (r *optionsReader) Get(_ context.Context, _ client.ObjectKey, _ client.Object, opts ...client.GetOption) error {
	r.got = client.GetOptions{}
	r.got.ApplyOptions(opts)
	return nil
}

// TestFromWatchCache: the driver-name check's pod reads ask for resourceVersion "0", which the
// API server answers from its watch cache, keeping the options they were given.
func TestFromWatchCache(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []client.GetOption
	}{
		{name: "no options"},
		{name: "the caller's options kept", opts: []client.GetOption{client.UnsafeDisableDeepCopy}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &optionsReader{}
			if err := (fromWatchCache{rec}).Get(context.Background(), client.ObjectKey{Name: "p"}, &corev1.Pod{}, tc.opts...); err != nil {
				t.Fatal(err)
			}
			if rec.got.Raw == nil || rec.got.Raw.ResourceVersion != "0" {
				t.Errorf("read with %+v, want resourceVersion \"0\"", rec.got.Raw)
			}
			if want := len(tc.opts) > 0; (rec.got.UnsafeDisableDeepCopy != nil) != want {
				t.Errorf("the caller's options: UnsafeDisableDeepCopy set %v, want %v", rec.got.UnsafeDisableDeepCopy != nil, want)
			}
		})
	}
}
