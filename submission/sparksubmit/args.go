/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package sparksubmit submits SparkApplications by running Apache Spark's own spark-submit, the
// reference behaviour that the native submitter is measured against.
package sparksubmit

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkconf"
	"github.com/sparkop/spark-operator/submission"
)

// Options carries what BuildArgs needs beyond the application itself.
type Options struct {
	// MasterURL is the API server URL (https://host:port); "k8s://" is prepended unless present.
	MasterURL string
	// DriverPodTemplateFile and ExecutorPodTemplateFile are the paths of the pod templates the
	// caller wrote (see PodTemplates); empty means none.
	DriverPodTemplateFile   string
	ExecutorPodTemplateFile string
}

// BuildArgs returns the spark-submit command line (without the program name) for one attempt
// of app, which must already be defaulted. The order is deterministic: map-valued fields are
// emitted in key order, so equal specs give equal command lines.
//
// Later --conf flags override earlier ones in spark-submit, so the user's sparkConf comes first,
// the properties derived from dedicated spec fields next, and the properties the operator must
// control (namespace, pod name, labels it selects on, templates) last.
func BuildArgs(app *v1beta2.SparkApplication, attempt submission.Attempt, opts Options) ([]string, error) {
	if err := validate(app, attempt, opts); err != nil {
		return nil, err
	}
	sub, err := sparkconf.Build(app, sparkconf.Options{
		SubmissionID:            attempt.SubmissionID,
		DriverPodName:           attempt.DriverPodName,
		DriverPodTemplateFile:   opts.DriverPodTemplateFile,
		ExecutorPodTemplateFile: opts.ExecutorPodTemplateFile,
		Decided:                 attempt.Scheduling.SparkDecisions(),
	})
	if err != nil {
		return nil, err
	}

	args := []string{
		"--master", masterURL(opts.MasterURL),
		"--deploy-mode", sub.DeployMode,
	}
	if sub.MainClass != "" {
		args = append(args, "--class", sub.MainClass)
	}
	args = append(args, "--name", sub.Name)
	if sub.ProxyUser != "" {
		args = append(args, "--proxy-user", sub.ProxyUser)
	}
	for _, d := range []struct {
		flag  string
		items []string
	}{
		{"--jars", sub.Jars},
		{"--files", sub.Files},
		{"--py-files", sub.PyFiles},
		{"--packages", sub.Packages},
		{"--exclude-packages", sub.ExcludePackages},
		{"--repositories", sub.Repositories},
		{"--archives", sub.Archives},
	} {
		if len(d.items) > 0 {
			args = append(args, d.flag, strings.Join(d.items, ","))
		}
	}
	for _, p := range sub.Conf {
		args = append(args, "--conf", p.Key+"="+p.Value)
	}
	args = append(args, sub.MainApplicationFile)
	return append(args, sub.Arguments...), nil
}

func validate(app *v1beta2.SparkApplication, attempt submission.Attempt, opts Options) error {
	if app == nil {
		return errors.New("no SparkApplication given")
	}
	var problems []string
	if app.Name == "" {
		problems = append(problems, "metadata.name is empty")
	}
	if app.Namespace == "" {
		problems = append(problems, "metadata.namespace is empty")
	}
	if app.Spec.MainApplicationFile == "" {
		problems = append(problems, "spec.mainApplicationFile is empty")
	}
	// The client modes would run the driver inside the operator process.
	if app.Spec.Mode != v1beta2.DeployModeCluster {
		problems = append(problems, fmt.Sprintf("spec.mode %q is not supported by spark-submit submission: only %q", app.Spec.Mode, v1beta2.DeployModeCluster))
	}
	if attempt.SubmissionID == "" {
		problems = append(problems, "the attempt has no submission ID")
	}
	if attempt.DriverPodName == "" {
		problems = append(problems, "the attempt has no driver pod name")
	}
	if opts.MasterURL == "" {
		problems = append(problems, "no Kubernetes API server URL (master URL) configured")
	}
	if len(problems) > 0 {
		return fmt.Errorf("cannot build spark-submit arguments: %s", strings.Join(problems, "; "))
	}
	return nil
}

func masterURL(u string) string {
	if strings.HasPrefix(u, "k8s://") {
		return u
	}
	return "k8s://" + u
}
