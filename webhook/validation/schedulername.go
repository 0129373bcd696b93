/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package validation

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// SchedulerNamer is implemented by batch schedulers that put their pods on a Kubernetes
// scheduler of their own: its name is one the webhook knows of.
type SchedulerNamer interface {
	SchedulerName() string
}

// knownSchedulers are the Kubernetes schedulers a pod of the operator may name without a
// warning: the default scheduler, those of the enabled batch schedulers (SchedulerNamer) and
// the names the operator was told of (--known-schedulers), sorted.
func (v *SparkApplicationValidator) knownSchedulers() []string {
	known := append([]string{corev1.DefaultSchedulerName}, v.KnownSchedulers...)
	if r := v.Schedulers.Registry; r != nil {
		for _, name := range r.Names() {
			if s, err := r.Get(name); err == nil {
				if n, ok := s.(SchedulerNamer); ok && n.SchedulerName() != "" {
					known = append(known, n.SchedulerName())
				}
			}
		}
	}
	slices.Sort(known)
	return slices.Compact(known)
}

// schedulerNameWarnings warns of spec.driver.schedulerName and spec.executor.schedulerName
// naming a scheduler the operator does not know of: if none of that name runs, the pod is never
// scheduled and waits with no reason given by any scheduler. It is a warning, not a refusal:
// the operator cannot see which schedulers run.
func (v *SparkApplicationValidator) schedulerNameWarnings(spec *v1beta2.SparkApplicationSpec) admission.Warnings {
	var known []string
	var out admission.Warnings
	for _, role := range []struct {
		path string
		name *string
	}{{"spec.driver.schedulerName", spec.Driver.SchedulerName}, {"spec.executor.schedulerName", spec.Executor.SchedulerName}} {
		if role.name == nil || *role.name == "" {
			continue
		}
		name := *role.name
		if known == nil {
			known = v.knownSchedulers()
		}
		if slices.Contains(known, name) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: the operator knows of no scheduler %q (it knows %s); if none of that name runs, "+
			"the pod is never scheduled (an operator that knows it runs lists it in --known-schedulers)",
			role.path, name, strings.Join(known, ", ")))
	}
	return out
}
