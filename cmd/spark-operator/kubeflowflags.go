/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/webhook"
)

// What this file owns: the Kubeflow operator's flag names (its `controller start` and `webhook
// start` commands), accepted beside ours so that a command line written for it runs this
// operator unchanged (docs/migrating.md).

// kubeflowRenames maps a Kubeflow flag to ours where only the name differs: pflag normalizes
// the one into the other, so the Kubeflow names stay out of --help.
var kubeflowRenames = map[string]string{
	"controller-threads":               "controller-workers",
	"max-tracked-executor-per-app":     "max-tracked-executors",
	"driver-pod-creation-grace-period": "driver-pod-grace-period",
	"leader-election":                  "leader-elect",
	"leader-election-lock-name":        "leader-election-id",
	"leader-election-lock-namespace":   "leader-election-namespace",
	"webhook-svc-name":                 "webhook-service-name",
	"webhook-svc-namespace":            "webhook-service-namespace",
}

func normalizeKubeflowName(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if ours, ok := kubeflowRenames[name]; ok {
		return pflag.NormalizedName(ours)
	}
	return pflag.NormalizedName(name)
}

// kubeflowValues are the Kubeflow flags whose values mean something other than one flag of
// ours: read by kubeflowFlags, turned into options by apply.
type kubeflowValues struct {
	zapLogLevel, zapEncoder            string
	featureGates                       string
	defaultTTLSeconds                  int64
	labelSelectorFilter                string
	enableCertManager                  bool
	mutatingWebhook, validatingWebhook string
	ingressTLS, ingressAnnotations     string
	bucketQPS, bucketSize              int
	maxDelay                           time.Duration
}

// kubeflowFlags registers the Kubeflow flags on fs: the renamed ones through fs's normalization,
// the others hidden, and those this operator shares with Kubeflow under its names
// (--cache-sync-timeout, --ingress-tls, --ingress-annotations, --workqueue-ratelimiter-*) in
// the open.
func kubeflowFlags(fs *pflag.FlagSet, o *options) *kubeflowValues {
	fs.SetNormalizeFunc(normalizeKubeflowName)
	kf := &kubeflowValues{}
	fs.DurationVar(&o.cacheSyncTimeout, "cache-sync-timeout", 0, "How long the controllers wait for their caches to fill at start-up; 0: controller-runtime's default (2m).")
	fs.StringVar(&kf.ingressTLS, "ingress-tls", "", `Default TLS of the Spark UI Ingresses, as JSON (e.g. '[{"hosts":["*.example.com"],"secretName":"ui-tls"}]'); `+
		`an application's sparkUIOptions.ingressTLS wins.`)
	fs.IntVar(&kf.bucketQPS, "workqueue-ratelimiter-bucket-qps", 10, "Requeues a second of SparkApplications after errors, across all of them (the token bucket's rate).")
	fs.IntVar(&kf.bucketSize, "workqueue-ratelimiter-bucket-size", 100, "Burst of requeues after errors (the token bucket's size).")
	fs.DurationVar(&kf.maxDelay, "workqueue-ratelimiter-max-delay", 1000*time.Second, "Longest wait before an application that keeps failing to reconcile is tried again (its delay doubles from 5ms).")
	fs.StringVar(&kf.ingressAnnotations, "ingress-annotations", "", `Default annotations of the Spark UI Ingresses, as a JSON object; `+
		`an application's sparkUIOptions.ingressAnnotations are added over them.`)
	hidden := func(name string) {
		if err := fs.MarkHidden(name); err != nil {
			panic(err)
		}
	}
	fs.StringVar(&kf.zapLogLevel, "zap-log-level", "", "Kubeflow's log level: debug (-v=1), info, warn or error (-v=0), or a number N (-v=N).")
	hidden("zap-log-level")
	fs.StringVar(&kf.zapEncoder, "zap-encoder", "console", `How the operator logs: "console" (glog's text lines) or "json" (one JSON object a line).`)
	fs.Int64Var(&kf.defaultTTLSeconds, "default-time-to-live-seconds", 0, "Delete a finished application that sets no spec.timeToLiveSeconds this many seconds after it ended; "+
		"0: never. As in the Kubeflow operator, only with --feature-gates=DefaultTimeToLive=true (otherwise ignored, saying so).")
	fs.StringVar(&kf.featureGates, "feature-gates", "", "The Kubeflow operator's feature gates, NAME=true|false,...: DefaultTimeToLive (--default-time-to-live-seconds) can be enabled; "+
		"PartialRestart, LoadSparkDefaults and RestSubmitter only disabled.")
	fs.StringVar(&kf.labelSelectorFilter, "label-selector-filter", "", "Manage only the SparkApplications, ScheduledSparkApplications and SparkConnects whose labels match this selector "+
		"(key=value or key, comma-separated, as the Kubeflow operator's); the others are left to another operator.")
	fs.BoolVar(&kf.enableCertManager, "enable-cert-manager", false, "Kubeflow's --webhook-cert-provider=external.")
	hidden("enable-cert-manager")
	fs.StringVar(&kf.mutatingWebhook, "mutating-webhook-name", "", "Kubeflow's --webhook-config-name, for the mutating configuration.")
	hidden("mutating-webhook-name")
	fs.StringVar(&kf.validatingWebhook, "validating-webhook-name", "", "Kubeflow's --webhook-config-name, for the validating configuration.")
	hidden("validating-webhook-name")
	return kf
}

// apply sets the flags of ours the Kubeflow flags given on fs stand for, and the options of
// the flags shared with Kubeflow; it runs before parseOptions reads our flags. A flag of ours
// given too wins over the Kubeflow one.
func (kf *kubeflowValues) apply(fs *pflag.FlagSet, o *options) []error {
	var errs []error
	if fs.Changed("zap-log-level") && !fs.Changed("v") {
		v, err := zapVerbosity(kf.zapLogLevel)
		if err == nil && fs.Lookup("v") != nil {
			err = fs.Set("v", strconv.Itoa(v))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("--zap-log-level: %w", err))
		}
	}
	switch kf.zapEncoder {
	case "console", "json":
		o.logEncoder = kf.zapEncoder
	default:
		errs = append(errs, fmt.Errorf(`--zap-encoder must be "console" or "json", got %q`, kf.zapEncoder))
	}
	if f := fs.Lookup("v"); f != nil {
		o.logVerbosity, _ = strconv.Atoi(f.Value.String())
	}
	errs = append(errs, kf.applyTTL(o)...)
	if sel, err := labels.Parse(kf.labelSelectorFilter); err != nil {
		errs = append(errs, fmt.Errorf("--label-selector-filter: %w", err))
	} else if !sel.Empty() {
		o.appSelector = sel
	}
	if kf.enableCertManager && !fs.Changed("webhook-cert-provider") {
		errs = append(errs, fs.Set("webhook-cert-provider", string(webhook.CertProviderExternal)))
	}
	names := map[string]bool{}
	for _, n := range []string{kf.mutatingWebhook, kf.validatingWebhook} {
		if n != "" {
			names[n] = true
		}
	}
	switch {
	case len(names) > 1:
		errs = append(errs, errors.New("--mutating-webhook-name and --validating-webhook-name differ: the operator names both configurations alike (--webhook-config-name)"))
	case len(names) == 1 && !fs.Changed("webhook-config-name"):
		for n := range names {
			errs = append(errs, fs.Set("webhook-config-name", n))
		}
	}
	if kf.ingressTLS != "" {
		if err := json.Unmarshal([]byte(kf.ingressTLS), &o.ingressTLS); err != nil {
			errs = append(errs, fmt.Errorf("--ingress-tls is not a JSON list of Ingress TLS entries: %w", err))
		}
	}
	if kf.ingressAnnotations != "" {
		if err := json.Unmarshal([]byte(kf.ingressAnnotations), &o.ingressAnnotations); err != nil {
			errs = append(errs, fmt.Errorf("--ingress-annotations is not a JSON object of strings: %w", err))
		}
	}
	if fs.Changed("workqueue-ratelimiter-bucket-qps") || fs.Changed("workqueue-ratelimiter-bucket-size") || fs.Changed("workqueue-ratelimiter-max-delay") {
		if kf.bucketQPS < 1 || kf.bucketSize < 1 || kf.maxDelay <= 0 {
			errs = append(errs, errors.New("--workqueue-ratelimiter-bucket-qps, -bucket-size and -max-delay must be positive"))
		} else {
			// controller-runtime's default limiter, with these settings.
			o.rateLimiter = workqueue.NewTypedMaxOfRateLimiter(
				workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, kf.maxDelay),
				&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(kf.bucketQPS), kf.bucketSize)})
		}
	}
	if o.cacheSyncTimeout < 0 {
		errs = append(errs, fmt.Errorf("--cache-sync-timeout must not be negative, got %s", o.cacheSyncTimeout))
	}
	return errs
}

// kubeflowGates are the Kubeflow operator's feature gates, and whether this operator can
// enable each: a gate of a feature it lacks may only be disabled (its default).
var kubeflowGates = map[string]bool{"DefaultTimeToLive": true, "PartialRestart": false, "LoadSparkDefaults": false, "RestSubmitter": false}

// applyTTL reads --feature-gates and --default-time-to-live-seconds into o.defaultTTL. As in
// the Kubeflow operator, the default time to live takes effect only with the DefaultTimeToLive
// gate; without it, it is ignored and the operator says so when it starts.
func (kf *kubeflowValues) applyTTL(o *options) []error {
	var errs []error
	enabled := map[string]bool{}
	for _, kv := range strings.Split(kf.featureGates, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		name, value, _ := strings.Cut(kv, "=")
		on, err := strconv.ParseBool(value)
		canEnable, known := kubeflowGates[name]
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("--feature-gates: %q is not NAME=true or NAME=false", kv))
		case !known:
			errs = append(errs, fmt.Errorf("--feature-gates: unknown feature gate %q", name))
		case on && !canEnable:
			errs = append(errs, fmt.Errorf("--feature-gates: %s is a Kubeflow operator feature this operator does not have; leave it disabled (docs/migrating.md)", name))
		default:
			enabled[name] = on
		}
	}
	switch {
	case kf.defaultTTLSeconds < 0:
		errs = append(errs, fmt.Errorf("--default-time-to-live-seconds must not be negative, got %d", kf.defaultTTLSeconds))
	case kf.defaultTTLSeconds > 0 && !enabled["DefaultTimeToLive"]:
		o.notes = append(o.notes, "--default-time-to-live-seconds is ignored: the DefaultTimeToLive feature gate is disabled (--feature-gates=DefaultTimeToLive=true)")
	default:
		o.defaultTTL = v1beta2.Seconds(kf.defaultTTLSeconds)
	}
	return errs
}

// zapVerbosity is glog's -v for a zap level as the Kubeflow operator takes it: a name, or a
// number N for logr's V(N).
func zapVerbosity(level string) (int, error) {
	switch strings.ToLower(level) {
	case "debug":
		return 1, nil
	case "info", "warn", "error", "dpanic", "panic", "fatal":
		return 0, nil
	}
	n, err := strconv.Atoi(level)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not debug, info, warn, error or a number of at least 0", level)
	}
	return n, nil
}

// goFlagSpelling lets a flag of more than one letter be given with one dash (-logtostderr,
// -enable-webhook), as Go's flag package, which the operator parsed with before, accepts:
// pflag takes one dash for single-letter flags only.
func goFlagSpelling(fs *pflag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if a == "--" {
			return append(out, args[len(out):]...)
		}
		if name, ok := strings.CutPrefix(a, "-"); ok && !strings.HasPrefix(name, "-") {
			if n, _, _ := strings.Cut(name, "="); len(n) > 1 && fs.Lookup(n) != nil {
				a = "-" + a
			}
		}
		out = append(out, a)
	}
	return out
}
