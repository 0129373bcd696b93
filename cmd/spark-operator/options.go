/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sparkop/spark-operator/submission"
)

// options are the operator's command-line settings.
type options struct {
	kubeconfig string
	// namespaces to watch; empty means all.
	namespaces []string
	// namespaceSelector restricts the watched namespaces to those whose labels match.
	namespaceSelector labels.Selector

	leaderElect          bool
	leaderElectionID     string
	leaderElectionNS     string
	metricsAddr          string
	healthProbeAddr      string
	controllerWorkers    int
	submissionWorkers    int
	submissionMode       submission.Mode
	sparkHome            string
	apiQPS               float64
	apiBurst             int
	defaultBatchSched    string
	driverPodGracePeriod time.Duration
	maxTrackedExecutors  int
	uiServiceEnabled     bool
	ingressURLFormat     string
	ingressClassName     string
}

// parseOptions reads the flags in args into options, registering them on fs (which also holds
// glog's flags when fs is flag.CommandLine).
func parseOptions(fs *flag.FlagSet, args []string) (*options, error) {
	o := &options{}
	var namespaces, namespaceSelector, mode string
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to a kubeconfig; in a pod the in-cluster configuration is used.")
	fs.StringVar(&namespaces, "namespaces", "", "Comma-separated namespaces to watch; empty watches all.")
	fs.StringVar(&namespaceSelector, "namespace-selector", "", "Only watch namespaces whose labels match this selector (e.g. spark=enabled).")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "Elect a leader among replicas; the chart turns it on when it runs more than one.")
	fs.StringVar(&o.leaderElectionID, "leader-election-id", "spark-operator-lock", "Name of the leader-election Lease.")
	fs.StringVar(&o.leaderElectionNS, "leader-election-namespace", "", "Namespace of the leader-election Lease; defaults to the operator's own.")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "Address of the Prometheus metrics endpoint; 0 disables it.")
	fs.StringVar(&o.healthProbeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz endpoints; 0 disables them.")
	fs.IntVar(&o.controllerWorkers, "controller-workers", 10, "Concurrent reconciles of SparkApplications (status work).")
	fs.IntVar(&o.submissionWorkers, "submission-workers", 0, "Concurrent submissions, in a pool of their own so status work never waits for them. "+
		"Default: 32 in native mode (each submission is a few API calls), 4 in spark-submit mode (each is a JVM).")
	fs.StringVar(&mode, "submission-mode", string(submission.ModeNative), `How applications are submitted: "native" or "spark-submit" (per app: annotation `+`sparkoperator.k8s.io/submitter).`)
	fs.StringVar(&o.sparkHome, "spark-home", "", "SPARK_HOME holding bin/spark-submit, for the spark-submit mode.")
	fs.Float64Var(&o.apiQPS, "kube-api-qps", 100, "Queries per second to the Kubernetes API.")
	fs.IntVar(&o.apiBurst, "kube-api-burst", 200, "Burst of queries to the Kubernetes API.")
	fs.StringVar(&o.defaultBatchSched, "default-batch-scheduler", "", "Batch scheduler for applications that name none; empty lets every application through.")
	fs.DurationVar(&o.driverPodGracePeriod, "driver-pod-grace-period", 10*time.Second, "How long a submitted application's driver pod may be missing before the application fails.")
	fs.IntVar(&o.maxTrackedExecutors, "max-tracked-executors", 1000, "Most executors listed in an application's status, so it never outgrows etcd's object size limit.")
	fs.BoolVar(&o.uiServiceEnabled, "enable-ui-service", true, "Create a Service for each application's Spark UI.")
	fs.StringVar(&o.ingressURLFormat, "ingress-url-format", "", "If set, create an Ingress for each Spark UI at this URL; {{$appName}} and {{$appNamespace}} are replaced.")
	fs.StringVar(&o.ingressClassName, "ingress-class-name", "", "IngressClass of the Spark UI Ingresses.")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}

	var errs []error
	for _, ns := range strings.Split(namespaces, ",") {
		if ns = strings.TrimSpace(ns); ns == "" {
			continue
		}
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--namespaces: %q is not a namespace name: %s", ns, strings.Join(msgs, "; ")))
			continue
		}
		o.namespaces = append(o.namespaces, ns)
	}
	sel, err := labels.Parse(namespaceSelector)
	if err != nil {
		errs = append(errs, fmt.Errorf("--namespace-selector: %w", err))
	}
	o.namespaceSelector = sel
	if o.submissionMode, err = submission.ParseMode(mode); err != nil {
		errs = append(errs, fmt.Errorf("--submission-mode: %w", err))
	}
	if o.controllerWorkers < 1 {
		errs = append(errs, fmt.Errorf("--controller-workers must be at least 1, got %d", o.controllerWorkers))
	}
	switch {
	case o.submissionWorkers < 0:
		errs = append(errs, fmt.Errorf("--submission-workers must be at least 1, got %d", o.submissionWorkers))
	case o.submissionWorkers == 0 && o.submissionMode == submission.ModeSparkSubmit:
		o.submissionWorkers = 4
	case o.submissionWorkers == 0:
		o.submissionWorkers = 32
	}
	if o.maxTrackedExecutors < 1 {
		errs = append(errs, fmt.Errorf("--max-tracked-executors must be at least 1, got %d", o.maxTrackedExecutors))
	}
	if o.driverPodGracePeriod <= 0 {
		errs = append(errs, fmt.Errorf("--driver-pod-grace-period must be positive, got %s", o.driverPodGracePeriod))
	}
	if o.apiQPS <= 0 || o.apiBurst < 1 {
		errs = append(errs, fmt.Errorf("--kube-api-qps and --kube-api-burst must be positive"))
	}
	return o, errors.Join(errs...)
}
