/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

import (
	"maps"

	"github.com/sparkop/spark-operator/sparkconf"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// The settings that decide where a pod may run: its scheduler, priority class, node selector,
// affinity and tolerations (written in the order settings lists them).

// addSchedulerName sets the role's schedulerName over the template's. On a pod (the webhook) it
// fills in only a pod left to the default scheduler: a scheduler name already there is a batch
// scheduler's decision or the spec's, passed to Spark as a property (precedence.go).
func addSchedulerName(t *target) error {
	name := sparkconf.SchedulerName(t.app, t.role, "")
	if name == "" {
		return nil
	}
	if t.forSpark || t.pod.Spec.SchedulerName == "" || t.pod.Spec.SchedulerName == corev1.DefaultSchedulerName {
		t.pod.Spec.SchedulerName = name
	}
	return nil
}

// addPriorityClassName sets the role's priority class over the template's; on a pod, only where
// the pod has none (a batch scheduler's class stays).
func addPriorityClassName(t *target) error {
	p := t.spec.PriorityClassName
	if p == nil || *p == "" || t.pod.Spec.PriorityClassName == *p {
		return nil
	}
	if t.forSpark || t.pod.Spec.PriorityClassName == "" {
		setPriorityClass(&t.pod.Spec, *p)
	}
	return nil
}

// addNodeSelector adds the entries of spec.nodeSelector and the role's nodeSelector (the role's
// wins for a key in both) that the pod lacks: Spark sets them from properties (inConf), after
// which an entry on the pod is the spec's or a batch scheduler's (precedence.go).
func addNodeSelector(t *target) error {
	want := setAll(maps.Clone(t.app.Spec.NodeSelector), t.spec.NodeSelector)
	for k, v := range want {
		if _, ok := t.pod.Spec.NodeSelector[k]; !ok {
			t.pod.Spec.NodeSelector = setAll(t.pod.Spec.NodeSelector, map[string]string{k: v})
		}
	}
	return nil
}

// addAffinity combines the role's affinity with the pod's, so that both hold: a batch
// scheduler's planned node and the user's rules alike (precedence.go).
func addAffinity(t *target) error {
	t.pod.Spec.Affinity = AndAffinity(t.pod.Spec.Affinity, t.spec.Affinity)
	return nil
}

func addTolerations(t *target) error {
outer:
	for _, tol := range t.spec.Tolerations {
		for _, have := range t.pod.Spec.Tolerations {
			if equality.Semantic.DeepEqual(have, tol) {
				continue outer
			}
		}
		t.pod.Spec.Tolerations = append(t.pod.Spec.Tolerations, *tol.DeepCopy())
	}
	return nil
}
