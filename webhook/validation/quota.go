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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
)

// AppResources is the total of what an application's driver and initial executors request and
// are limited to, in ResourceQuota terms (cpu, memory, requests.*, limits.*, pods), from the one
// demand calculation every batch scheduler uses too.
func AppResources(app *v1beta2.SparkApplication) (corev1.ResourceList, error) {
	d, err := sparkpod.DemandOf(app)
	if err != nil {
		return nil, err
	}
	total := corev1.ResourceList{}
	add := func(name corev1.ResourceName, q resource.Quantity, n int32) {
		sum := total[name]
		sum.Add(sparkpod.Times(q, int64(n)))
		total[name] = sum
	}
	for _, p := range d.Roles() {
		for name, q := range p.Requests {
			if name == corev1.ResourceCPU || name == corev1.ResourceMemory {
				add(name, q, p.Count)
			}
			add(corev1.ResourceName(corev1.DefaultResourceRequestsPrefix+string(name)), q, p.Count)
		}
		for name, q := range p.Limits {
			add(corev1.ResourceName("limits."+string(name)), q, p.Count)
		}
	}
	total[corev1.ResourcePods] = d.Total()[corev1.ResourcePods]
	return total, nil
}

// CheckQuota returns an error naming the first resource for which need exceeds what quota
// has left (spec.hard minus status.used). Resources the quota does not limit are not checked.
func CheckQuota(need corev1.ResourceList, quota *corev1.ResourceQuota) error {
	for _, name := range sortedResourceNames(quota.Spec.Hard) {
		hard := quota.Spec.Hard[name]
		want, ok := need[name]
		if !ok {
			continue
		}
		left := hard.DeepCopy()
		if used, ok := quota.Status.Used[name]; ok {
			left.Sub(used)
		}
		if want.Cmp(left) > 0 {
			return fmt.Errorf("the driver and executors need %s %s, but ResourceQuota %s has only %s of %s left",
				want.String(), name, quota.Name, left.String(), hard.String())
		}
	}
	return nil
}

func sortedResourceNames(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
