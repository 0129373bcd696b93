/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package validation checks SparkApplications and ScheduledSparkApplications when they are
// created or updated, so that mistakes the CRD schema cannot express are refused at once with
// a message naming the field, instead of failing later at submission.
package validation

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/internal/cronschedule"
	"github.com/sparkop/spark-operator/sparkpod"
)

// Spark properties the operator sets itself. A user value would put the driver somewhere the
// operator does not look, or bypass what the spec fields say.
const (
	keyMaster    = "spark.master"
	keyNamespace = "spark.kubernetes.namespace"
	// Every spark.kubernetes.authenticate.* key: API server credentials and the driver's and
	// executors' service accounts (spec.driver.serviceAccount, spec.executor.serviceAccount).
	prefixAuthenticate = "spark.kubernetes.authenticate."
)

// ownedKeys name, for each operator-owned key, the spec field to use instead.
var ownedKeys = map[string]string{
	keyMaster:                                   "the operator submits to its own cluster",
	"spark.kubernetes.container.image":          "use spec.image",
	"spark.kubernetes.driver.container.image":   "use spec.driver.image",
	"spark.kubernetes.executor.container.image": "use spec.executor.image",
}

// ValidateSparkApplication returns what is wrong with app.
func ValidateSparkApplication(app *v1beta2.SparkApplication) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateName(field.NewPath("metadata", "name"), app.Name)...)
	errs = append(errs, ValidateSpec(field.NewPath("spec"), &app.Spec, app.Namespace)...)
	return errs
}

// ValidateScheduledSparkApplication returns what is wrong with ssa.
func ValidateScheduledSparkApplication(ssa *v1beta2.ScheduledSparkApplication) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateName(field.NewPath("metadata", "name"), ssa.Name)...)
	if _, err := cronschedule.ParseSchedule(ssa.Spec.Schedule, ssa.Spec.TimeZone); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec", "schedule"), ssa.Spec.Schedule, err.Error()))
	}
	errs = append(errs, ValidateSpec(field.NewPath("spec", "template"), &ssa.Spec.Template, ssa.Namespace)...)
	return errs
}

// ValidateSpec checks an application spec; namespace is where the application runs.
func ValidateSpec(p *field.Path, s *v1beta2.SparkApplicationSpec, namespace string) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateTemplates(p, s)...)
	errs = append(errs, validateNodeSelectors(p, s)...)
	errs = append(errs, validateSparkConf(p.Child("sparkConf"), s.SparkConf, namespace)...)
	errs = append(errs, validateMemory(p, s)...)
	errs = append(errs, validateDriverIngressOptions(p, s, namespace)...)
	return errs
}

// validateMemory refuses memory sizes that are not sizes, or are too large for Kubernetes'
// arithmetic, when the application is created rather than when it is submitted.
func validateMemory(p *field.Path, s *v1beta2.SparkApplicationSpec) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		path *field.Path
		v    *string
	}{
		{p.Child("driver", "memory"), s.Driver.Memory},
		{p.Child("driver", "memoryOverhead"), s.Driver.MemoryOverhead},
		{p.Child("executor", "memory"), s.Executor.Memory},
		{p.Child("executor", "memoryOverhead"), s.Executor.MemoryOverhead},
	} {
		if f.v == nil || *f.v == "" {
			continue
		}
		if _, err := sparkpod.ParseMiB(*f.v); err != nil {
			errs = append(errs, field.Invalid(f.path, *f.v, err.Error()))
		}
	}
	return errs
}

// validateName requires a DNS-1035 label: the name is the value of the app-name label, and
// the Services, ConfigMaps and runs derived from it are DNS-1035 labels themselves (the
// operator shortens the longer ones with a hash, which only works from a valid label).
func validateName(p *field.Path, name string) field.ErrorList {
	if name == "" {
		return nil // generateName: the API server checks the generated name
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1035Label(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	if len(name) > v1beta2.MaxSparkApplicationNameLength && len(errs) == 0 {
		errs = append(errs, field.TooLong(p, name, v1beta2.MaxSparkApplicationNameLength))
	}
	return errs
}

// validateTemplates requires Spark 3.0 or later for pod templates.
func validateTemplates(p *field.Path, s *v1beta2.SparkApplicationSpec) field.ErrorList {
	var errs field.ErrorList
	for _, t := range []struct {
		path *field.Path
		set  bool
	}{
		{p.Child("driver", "template"), s.Driver.Template != nil},
		{p.Child("executor", "template"), s.Executor.Template != nil},
	} {
		if !t.set {
			continue
		}
		major, err := sparkMajor(s.SparkVersion)
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("sparkVersion"), s.SparkVersion, fmt.Sprintf("%v; %s needs Spark 3.0 or later", err, t.path)))
		} else if major < 3 {
			errs = append(errs, field.Forbidden(t.path, fmt.Sprintf("pod templates need Spark 3.0 or later, but spec.sparkVersion is %q", s.SparkVersion)))
		}
	}
	return errs
}

func sparkMajor(version string) (int, error) {
	head, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(version), "v"), ".")
	n, err := strconv.Atoi(head)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a Spark version such as 3.5.3")
	}
	return n, nil
}

// validateNodeSelectors forbids a node selector at both the application and the pod level.
func validateNodeSelectors(p *field.Path, s *v1beta2.SparkApplicationSpec) field.ErrorList {
	if len(s.NodeSelector) == 0 {
		return nil
	}
	var errs field.ErrorList
	if len(s.Driver.NodeSelector) > 0 {
		errs = append(errs, field.Forbidden(p.Child("driver", "nodeSelector"), "spec.nodeSelector is set too: set a node selector either for the application or for the driver and executor, not both"))
	}
	if len(s.Executor.NodeSelector) > 0 {
		errs = append(errs, field.Forbidden(p.Child("executor", "nodeSelector"), "spec.nodeSelector is set too: set a node selector either for the application or for the driver and executor, not both"))
	}
	return errs
}

// validateSparkConf refuses the properties the operator owns.
func validateSparkConf(p *field.Path, conf map[string]string, namespace string) field.ErrorList {
	keys := make([]string, 0, len(conf))
	for k := range conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs field.ErrorList
	for _, k := range keys {
		switch why, owned := ownedKeys[k]; {
		case owned:
			errs = append(errs, field.Forbidden(p.Key(k), "set by the operator: "+why))
		case k == keyNamespace && conf[k] != namespace:
			errs = append(errs, field.Forbidden(p.Key(k), fmt.Sprintf("must be the application's namespace %q or unset", namespace)))
		case strings.HasPrefix(k, prefixAuthenticate):
			errs = append(errs, field.Forbidden(p.Key(k), "authentication and service accounts are set by the operator: use spec.driver.serviceAccount and spec.executor.serviceAccount"))
		}
	}
	return errs
}
