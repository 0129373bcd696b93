/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/sparkop/spark-operator/webhook"
)

// TestKubeflowCommandLines: the Kubeflow operator's commands and flag names run this operator
// with the options they mean there.
func TestKubeflowCommandLines(t *testing.T) {
	tests := []optionsCase{
		{
			name: "controller start with Kubeflow's controller flags",
			args: []string{"controller", "start", "--controller-threads=7", "--max-tracked-executor-per-app", "50",
				"--driver-pod-creation-grace-period=20s", "--leader-election=true", "--leader-election-lock-name=kf-lock",
				"--leader-election-lock-namespace=kf", "--cache-sync-timeout=45s", "--namespaces=default"},
			check: func(t *testing.T, o *options) {
				got := []any{o.controllerEnabled, o.webhookEnabled, o.controllerWorkers, o.maxTrackedExecutors, o.driverPodGracePeriod,
					o.leaderElect, o.leaderElectionID, o.leaderElectionNS, o.cacheSyncTimeout, o.namespaces}
				want := []any{true, false, 7, 50, 20 * time.Second, true, "kf-lock", "kf", 45 * time.Second, []string{"default"}}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("options (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "webhook start with Kubeflow's webhook flags",
			args: []string{"webhook", "start", "--webhook-svc-name=kf-webhook", "--webhook-svc-namespace=kf", "--enable-cert-manager",
				"--webhook-cert-dir=/etc/k8s-webhook-server/serving-certs", "--mutating-webhook-name=kf-hooks", "--validating-webhook-name=kf-hooks"},
			check: func(t *testing.T, o *options) {
				got := []any{o.controllerEnabled, o.webhookEnabled, o.webhook.ServiceName, o.webhook.ServiceNamespace, o.webhook.CertProvider, o.webhook.ConfigName}
				want := []any{false, true, "kf-webhook", "kf", webhook.CertProviderExternal, "kf-hooks"}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("options (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "a flag of ours overrides what the command presets",
			args: []string{"controller", "start", "--enable-webhook", "--webhook-url-host=localhost", "--webhook-secret-namespace=ops"},
			check: func(t *testing.T, o *options) {
				if !o.controllerEnabled || !o.webhookEnabled {
					t.Errorf("controller %t, webhook %t; want both", o.controllerEnabled, o.webhookEnabled)
				}
			},
		},
		{
			name: "the UI Ingress defaults",
			args: []string{`--ingress-tls=[{"hosts":["*.example.com"],"secretName":"ui-tls"}]`, `--ingress-annotations={"a":"b"}`},
			check: func(t *testing.T, o *options) {
				if diff := cmp.Diff([]networkingv1.IngressTLS{{Hosts: []string{"*.example.com"}, SecretName: "ui-tls"}}, o.ingressTLS); diff != "" {
					t.Errorf("TLS (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(map[string]string{"a": "b"}, o.ingressAnnotations); diff != "" {
					t.Errorf("annotations (-want +got):\n%s", diff)
				}
			},
		},
		{name: "Go's one-dash spelling", args: []string{"-enable-spark-connect=false", "-logtostderr", "-controller-workers", "3"},
			check: func(t *testing.T, o *options) {
				if o.sparkConnectEnabled || o.controllerWorkers != 3 {
					t.Errorf("spark connect %t, workers %d", o.sparkConnectEnabled, o.controllerWorkers)
				}
			}},
		{name: "mutating and validating names differ", args: []string{"--mutating-webhook-name=a", "--validating-webhook-name=b"}, wantErr: "--mutating-webhook-name and --validating-webhook-name differ"},
		{name: "JSON logs", args: []string{"--zap-encoder=json"}, check: func(t *testing.T, o *options) {
			if o.logEncoder != "json" {
				t.Errorf("log encoder %q, want json", o.logEncoder)
			}
		}},
		{name: "an unknown log encoder", args: []string{"--zap-encoder=xml"}, wantErr: `--zap-encoder must be "console" or "json"`},
		{name: "a default time to live behind its feature gate", args: []string{"controller", "start", "--feature-gates=PartialRestart=false,DefaultTimeToLive=true",
			"--default-time-to-live-seconds=600"}, check: func(t *testing.T, o *options) {
			if o.defaultTTL != 10*time.Minute || len(o.notes) != 0 {
				t.Errorf("default TTL %s, notes %q; want 10m0s and none", o.defaultTTL, o.notes)
			}
		}},
		{name: "a default time to live without its feature gate", args: []string{"--default-time-to-live-seconds=600"}, check: func(t *testing.T, o *options) {
			if o.defaultTTL != 0 || len(o.notes) != 1 || !strings.Contains(o.notes[0], "DefaultTimeToLive") {
				t.Errorf("default TTL %s, notes %q; want none, and a note naming the gate (Kubeflow ignores it too)", o.defaultTTL, o.notes)
			}
		}},
		{name: "a negative default time to live", args: []string{"--default-time-to-live-seconds=-1"}, wantErr: "--default-time-to-live-seconds must not be negative"},
		{name: "a feature gate this operator lacks", args: []string{"--feature-gates=RestSubmitter=true"}, wantErr: "--feature-gates: RestSubmitter is a Kubeflow operator feature"},
		{name: "an unknown feature gate", args: []string{"--feature-gates=Warp=false"}, wantErr: `--feature-gates: unknown feature gate "Warp"`},
		{name: "a feature gate without a value", args: []string{"--feature-gates=DefaultTimeToLive"}, wantErr: `"DefaultTimeToLive" is not NAME=true or NAME=false`},
		{name: "the label selector filter", args: []string{"webhook", "start", "--label-selector-filter=team=a,tier", "--webhook-svc-name=w", "--webhook-svc-namespace=ops"},
			check: func(t *testing.T, o *options) {
				if o.appSelector == nil || o.appSelector.String() != "team=a,tier" {
					t.Errorf("selector %v, want team=a,tier", o.appSelector)
				}
			}},
		{name: "a label selector filter that does not parse", args: []string{"--label-selector-filter=team in a"}, wantErr: "--label-selector-filter"},
		{name: "an unknown log level", args: []string{"--zap-log-level=loud"}, wantErr: `--zap-log-level: "loud" is not debug`},
		{name: "TLS that is not JSON", args: []string{"--ingress-tls=ui-tls"}, wantErr: "--ingress-tls is not a JSON list"},
		{name: "a Kubeflow flag the operator lacks", args: []string{"--webhook-cert-name=tls.crt"}, wantErr: "unknown flag: --webhook-cert-name"},
	}
	runOptionsCases(t, tests, func(args []string) (*options, error) {
		var got *options
		cmd := newCommand(func(o *options) error { got = o; return nil })
		cmd.SetArgs(args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		return got, err
	})
}

// TestZapLogLevel: Kubeflow's --zap-log-level sets glog's verbosity, unless -v is given.
func TestZapLogLevel(t *testing.T) {
	v := flag.CommandLine.Lookup("v")
	defer func(old string) { _ = v.Value.Set(old) }(v.Value.String())
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--zap-log-level=info"}, "0"},
		{[]string{"--zap-log-level=debug"}, "1"},
		{[]string{"--zap-log-level=3"}, "3"},
		{[]string{"--zap-log-level=debug", "-v=4"}, "4"},
	} {
		_ = v.Value.Set("0")
		fs := withGlogFlags(pflag.NewFlagSet("test", pflag.ContinueOnError))
		fs.SetOutput(io.Discard)
		if _, err := parseOptions(fs, tt.args); err != nil {
			t.Fatal(err)
		}
		if got := v.Value.String(); got != tt.want {
			t.Errorf("%v: -v = %s, want %s", tt.args, got, tt.want)
		}
	}
}

// TestWorkqueueRateLimiter: Kubeflow's rate limiter flags pace the controller's requeues; an
// application failing again and again waits at most the maximum delay.
func TestWorkqueueRateLimiter(t *testing.T) {
	parse := func(args ...string) (*options, error) {
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		return parseOptions(fs, args)
	}
	o, err := parse()
	if err != nil || o.rateLimiter != nil {
		t.Fatalf("without the flags: limiter %v, %v; want controller-runtime's (nil)", o.rateLimiter, err)
	}
	o, err = parse("--workqueue-ratelimiter-bucket-qps=1000", "--workqueue-ratelimiter-bucket-size=1000", "--workqueue-ratelimiter-max-delay=1s")
	if err != nil {
		t.Fatal(err)
	}
	item := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "pi"}}
	var last time.Duration
	for range 20 {
		last = o.rateLimiter.When(item)
	}
	if last != time.Second {
		t.Errorf("delay after 20 failures = %s, want the maximum, 1s", last)
	}
	if _, err := parse("--workqueue-ratelimiter-bucket-qps=0"); err == nil || !strings.Contains(err.Error(), "must be positive") {
		t.Errorf("a bucket of 0 a second: %v", err)
	}
}
