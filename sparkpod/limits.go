/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
)

// The settings that set the Spark container's limits beyond what Spark sets: a GPU (extended)
// resource and the memory limit.

// ValidateExtendedResourceName checks that name can be a GPU (extended) resource: a qualified
// name with a domain prefix outside kubernetes.io, such as nvidia.com/gpu.
func ValidateExtendedResourceName(name string) error {
	if errs := utilvalidation.IsQualifiedName(name); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid resource name: %s", name, strings.Join(errs, "; "))
	}
	domain, _, ok := strings.Cut(name, "/")
	if !ok {
		return fmt.Errorf("%q is not an extended resource name: it needs a domain prefix, as in nvidia.com/gpu", name)
	}
	if domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io") || strings.HasPrefix(name, "requests.") {
		return fmt.Errorf("%q is not an extended resource name: the %s domain is reserved", name, domain)
	}
	return nil
}

// addGPU sets the limit of the role's GPU resource on the Spark container.
func addGPU(t *target) error {
	g := t.spec.GPU
	if g == nil {
		return nil
	}
	if err := ValidateExtendedResourceName(g.Name); err != nil {
		return reject("spec.%s.gpu.name: %v", t.role, err)
	}
	if g.Quantity <= 0 {
		return nil
	}
	c := t.container()
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	c.Resources.Limits[corev1.ResourceName(g.Name)] = *resource.NewQuantity(g.Quantity, resource.DecimalSI)
	return nil
}

// addMemoryLimit replaces the Spark container's memory limit with the role's memoryLimit.
func addMemoryLimit(t *target) error {
	if t.spec.MemoryLimit == nil || *t.spec.MemoryLimit == "" {
		return nil
	}
	q, err := resource.ParseQuantity(*t.spec.MemoryLimit)
	if err != nil {
		return reject("spec.%s.memoryLimit %q: %v", t.role, *t.spec.MemoryLimit, err)
	}
	c := t.container()
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	c.Resources.Limits[corev1.ResourceMemory] = q
	return nil
}
