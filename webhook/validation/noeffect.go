/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package validation

import (
	"encoding/json"
	"fmt"
	"strings"
)

// IgnoredField is a field of the API that the operator accepts, so that manifests written for
// the Kubeflow operator apply unchanged, but does nothing with.
type IgnoredField struct {
	// Path is the field's path in the SparkApplication spec, as test/crdpaths writes it
	// (".spec.failureRetries"); the entry covers everything below it.
	Path   string
	Reason string
}

// NoEffect is the short list of such fields. docs/fields.md gives the same reasons, and the
// field-coverage test (test/fields) requires every other field to have a test showing its
// effect; the validating webhook warns when one of these is set.
var NoEffect = []IgnoredField{
	{
		Path: ".spec.failureRetries",
		Reason: "an earlier form of the Kubeflow API, which the Kubeflow operator v2 ignores too; " +
			"spec.restartPolicy.onFailureRetries and onSubmissionFailureRetries set the retries",
	},
	{
		Path: ".spec.retryInterval",
		Reason: "an earlier form of the Kubeflow API, which the Kubeflow operator v2 ignores too; " +
			"spec.restartPolicy.onFailureRetryInterval and onSubmissionFailureRetryInterval set the delays",
	},
	{
		Path: ".spec.batchSchedulerOptions.resources",
		Reason: "read by the Kubeflow operator's Volcano and YuniKorn integrations as the minimum " +
			"resources of the pod group; this operator's gang scheduler, Volcano and YuniKorn integrations " +
			"compute what an application needs from its driver and executors instead",
	},
}

// ConnectNoEffect is the same list for SparkConnects: parts of the Kubernetes Service that
// spec.server.service embeds whole and that the operator does not take from it (it takes the
// name, labels, annotations and spec).
var ConnectNoEffect = []IgnoredField{
	{
		Path:   ".spec.server.service.apiVersion",
		Reason: "the field holds a Service; the operator always writes a v1 Service",
	},
	{
		Path:   ".spec.server.service.kind",
		Reason: "the field holds a Service; the operator always writes a v1 Service",
	},
	{
		Path: ".spec.server.service.metadata.finalizers",
		Reason: "the operator takes the Service's name, labels and annotations only; the Service is " +
			"removed with its SparkConnect through its owner reference",
	},
	{
		Path:   ".spec.server.service.status",
		Reason: "a Service's status is written by the cluster, not given",
	},
}

// NoEffectWarnings returns an admission warning for each field of NoEffect that spec sets.
// prefix is where spec sits in the object (".spec" for a SparkApplication, ".spec.template"
// for a ScheduledSparkApplication); spec is any value that marshals to a SparkApplicationSpec.
func NoEffectWarnings(prefix string, spec any) []string {
	return noEffectWarnings(NoEffect, prefix, spec)
}

// ConnectNoEffectWarnings returns an admission warning for each field of ConnectNoEffect that
// the SparkConnect spec sets.
func ConnectNoEffectWarnings(spec any) []string {
	return noEffectWarnings(ConnectNoEffect, ".spec", spec)
}

func noEffectWarnings(list []IgnoredField, prefix string, spec any) []string {
	data, err := json.Marshal(spec)
	if err != nil {
		return nil
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil
	}
	var warnings []string
	for _, f := range list {
		if isSet(obj, strings.Split(strings.TrimPrefix(f.Path, ".spec."), ".")) {
			warnings = append(warnings, fmt.Sprintf("%s%s has no effect in this operator: %s",
				prefix, strings.TrimPrefix(f.Path, ".spec"), f.Reason))
		}
	}
	return warnings
}

func isSet(obj map[string]any, path []string) bool {
	v, ok := obj[path[0]]
	if !ok || v == nil {
		return false
	}
	if len(path) == 1 {
		// An empty object sets nothing: an embedded Service's status is {"loadBalancer": {}}
		// when no one gave it.
		return !emptyObject(v)
	}
	m, ok := v.(map[string]any)
	return ok && isSet(m, path[1:])
}

// emptyObject reports whether v is a JSON object with nothing but empty objects in it.
func emptyObject(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, x := range m {
		if !emptyObject(x) {
			return false
		}
	}
	return true
}
