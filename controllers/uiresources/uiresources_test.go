/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package uiresources

import (
	"errors"
	"strings"
	"testing"

	"github.com/sparkop/spark-operator/internal/uinames"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

func newApp(name string) *v1beta2.SparkApplication {
	return &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns1"}}
}

func TestNames(t *testing.T) {
	long := strings.Repeat("a", 63)
	longOther := strings.Repeat("a", 62) + "b"
	tests := []struct {
		app         string
		wantService string
		wantIngress string
	}{
		{app: "pi", wantService: "pi-ui-svc", wantIngress: "pi-ui-ingress"},
		{app: strings.Repeat("x", 56), wantService: strings.Repeat("x", 56) + "-ui-svc"},
		{app: long},
		{app: longOther},
	}
	seen := map[string]string{}
	for _, tc := range tests {
		app := newApp(tc.app)
		svc, ing := app.UIServiceName(), uinames.IngressName(app)
		for _, n := range []string{svc, ing} {
			if msgs := validation.IsDNS1035Label(n); len(msgs) > 0 {
				t.Errorf("name %q for app %q is not a DNS-1035 label: %v", n, tc.app, msgs)
			}
			if other, ok := seen[n]; ok && other != tc.app {
				t.Errorf("apps %q and %q both get %q", other, tc.app, n)
			}
			seen[n] = tc.app
		}
		if tc.wantService != "" && svc != tc.wantService {
			t.Errorf("service name of %q = %q, want %q", tc.app, svc, tc.wantService)
		}
		if tc.wantIngress != "" && ing != tc.wantIngress {
			t.Errorf("ingress name of %q = %q, want %q", tc.app, ing, tc.wantIngress)
		}
	}
}

func TestPorts(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	str := func(v string) *string { return &v }
	type ports struct {
		UI, Service int32
		Name        string
	}
	tests := []struct {
		name string
		conf map[string]string
		ui   *v1beta2.SparkUIConfiguration
		want ports
	}{
		{name: "defaults", want: ports{4040, 4040, "spark-driver-ui-port"}},
		{name: "spark.ui.port", conf: map[string]string{"spark.ui.port": "4041"}, want: ports{4041, 4041, "spark-driver-ui-port"}},
		{name: "random port falls back", conf: map[string]string{"spark.ui.port": "0"}, want: ports{4040, 4040, "spark-driver-ui-port"}},
		{name: "garbage falls back", conf: map[string]string{"spark.ui.port": "http"}, want: ports{4040, 4040, "spark-driver-ui-port"}},
		{name: "out of range falls back", conf: map[string]string{"spark.ui.port": "70000"}, want: ports{4040, 4040, "spark-driver-ui-port"}},
		{
			name: "service port and name",
			conf: map[string]string{"spark.ui.port": "4041"},
			ui:   &v1beta2.SparkUIConfiguration{ServicePort: i32(80), ServicePortName: str("http")},
			want: ports{4041, 80, "http"},
		},
		{name: "empty options", ui: &v1beta2.SparkUIConfiguration{ServicePortName: str("")}, want: ports{4040, 4040, "spark-driver-ui-port"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app := newApp("pi")
			app.Spec.SparkConf = tc.conf
			app.Spec.SparkUIOptions = tc.ui
			got := ports{uinames.UIPort(app), uinames.ServicePort(app), uinames.ServicePortName(app)}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("ports (-want +got):\n%s", d)
			}
		})
	}
}

func TestIngressURL(t *testing.T) {
	type result struct {
		URL, Host, Path string
		Invalid         bool
	}
	tests := []struct {
		format string
		tls    bool
		want   result
	}{
		{format: "{{$appName}}.example.com", want: result{URL: "http://pi.example.com", Host: "pi.example.com"}},
		{format: "{{ $appName }}-{{$appNamespace}}.example.com", want: result{URL: "http://pi-ns1.example.com", Host: "pi-ns1.example.com"}},
		{format: "ingress.example.com/{{$appNamespace}}/{{$appName}}", want: result{URL: "http://ingress.example.com/ns1/pi", Host: "ingress.example.com", Path: "/ns1/pi"}},
		{format: "https://ui.example.com/{{$appName}}", want: result{URL: "https://ui.example.com/pi", Host: "ui.example.com", Path: "/pi"}},
		{format: "ui.example.com", tls: true, want: result{URL: "https://ui.example.com", Host: "ui.example.com"}},
		{format: "/spark/{{$appName}}", want: result{URL: "http:///spark/pi", Path: "/spark/pi"}},
		{format: "*.example.com", want: result{URL: "http://*.example.com", Host: "*.example.com"}},
		{format: "", want: result{Invalid: true}},
		{format: "{{$appId}}.example.com", want: result{Invalid: true}},
		{format: "ftp://example.com", want: result{Invalid: true}},
		{format: "example.com:8080/x", want: result{Invalid: true}},
		{format: "example.com/x?y=1", want: result{Invalid: true}},
		{format: "Bad_Host.example.com", want: result{Invalid: true}},
		{format: "/", want: result{Invalid: true}},
		{format: "http://exa mple.com", want: result{Invalid: true}},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			u, err := uinames.IngressURL(tc.format, newApp("pi"), tc.tls)
			var got result
			switch {
			case err != nil:
				if !errors.Is(err, uinames.ErrInvalidIngressURL) {
					t.Errorf("error %v does not wrap uinames.ErrInvalidIngressURL", err)
				}
				got.Invalid = true
			default:
				got = result{URL: u.String(), Host: u.Hostname(), Path: u.Path}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("uinames.IngressURL(%q) (-want +got):\n%s (err %v)", tc.format, d, err)
			}
		})
	}
}

func TestDesiredIngressPaths(t *testing.T) {
	prefix, specific := networkingv1.PathTypePrefix, networkingv1.PathTypeImplementationSpecific
	rewrite := map[string]string{uinames.RewriteTargetAnnotation: "/$2"}
	type rule struct {
		Host, Path  string
		Type        networkingv1.PathType
		Annotations map[string]string
		Class       string
		TLS         []networkingv1.IngressTLS
	}
	tests := []struct {
		name   string
		format string
		opts   Options
		ui     *v1beta2.SparkUIConfiguration
		want   rule
	}{
		{name: "host only", format: "{{$appName}}.example.com", want: rule{Host: "pi.example.com", Path: "/", Type: prefix}},
		{name: "path without rewrite", format: "example.com/spark/{{$appName}}/", want: rule{Host: "example.com", Path: "/spark/pi", Type: prefix}},
		{
			name: "path with rewrite from options", format: "example.com/spark/{{$appName}}",
			opts: Options{IngressAnnotations: rewrite, IngressClassName: "nginx"},
			want: rule{Host: "example.com", Path: "/spark/pi(/|$)(.*)", Type: specific, Annotations: rewrite, Class: "nginx"},
		},
		{
			name: "app annotations and TLS override options", format: "example.com/{{$appName}}",
			opts: Options{
				IngressAnnotations: map[string]string{"a": "1", "b": "1"},
				IngressTLS:         []networkingv1.IngressTLS{{Hosts: []string{"opts"}}},
			},
			ui: &v1beta2.SparkUIConfiguration{
				IngressAnnotations: map[string]string{"b": "2"},
				IngressTLS:         []networkingv1.IngressTLS{{Hosts: []string{"example.com"}, SecretName: "s"}},
			},
			want: rule{
				Host: "example.com", Path: "/pi", Type: prefix,
				Annotations: map[string]string{"a": "1", "b": "2"},
				TLS:         []networkingv1.IngressTLS{{Hosts: []string{"example.com"}, SecretName: "s"}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app := newApp("pi")
			app.Spec.SparkUIOptions = tc.ui
			tls := ingressTLS(app, tc.opts)
			u, err := uinames.IngressURL(tc.format, app, len(tls) > 0)
			if err != nil {
				t.Fatal(err)
			}
			ing := desiredIngress(app, uinames.IngressName(app), app.UIServiceName(), uinames.ServicePort(app),
				uiIngressAnnotations(app, tc.opts), tc.opts.IngressClassName, u, tls)
			p := ing.Spec.Rules[0].HTTP.Paths[0]
			got := rule{Host: *ing.Spec.Rules[0].Host, Path: *p.Path, Type: *p.PathType, Annotations: ing.Annotations,
				Class: ptr.Deref(ing.Spec.IngressClassName, "")}
			for _, t := range ing.Spec.TLS {
				got.TLS = append(got.TLS, networkingv1.IngressTLS{Hosts: t.Hosts, SecretName: ptr.Deref(t.SecretName, "")})
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("ingress (-want +got):\n%s", d)
			}
			if *p.Backend.Service.Name != "pi-ui-svc" || *p.Backend.Service.Port.Number != 4040 {
				t.Errorf("backend = %+v", p.Backend.Service)
			}
		})
	}
}
