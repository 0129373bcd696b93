/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package workloadapi

import (
	"errors"
	"fmt"
	"slices"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
)

// Unserved is why the kubernetes batch scheduler cannot run on a cluster that does not serve
// the Workload API: what to turn on, and where.
const Unserved = "the kubernetes batch scheduler needs the Workload API (scheduling.k8s.io/v1beta1 Workload and PodGroup), " +
	"which this cluster does not serve: Kubernetes 1.37 serves it with the GenericWorkload feature gate on " +
	"(--feature-gates=GenericWorkload=true on kube-apiserver, kube-controller-manager and kube-scheduler) " +
	"and --runtime-config=scheduling.k8s.io/v1beta1=true on kube-apiserver"

// ErrUnserved is the error Check returns for a cluster that does not serve the Workload API.
var ErrUnserved = errors.New(Unserved)

// Check asks the API server whether it serves Workloads and PodGroups in
// scheduling.k8s.io/v1beta1. It returns ErrUnserved when it does not, and the
// discovery error when it could not tell.
func Check(d discovery.DiscoveryInterface) error {
	gv := schedulingv1beta1.SchemeGroupVersion.String()
	list, err := d.ServerResourcesForGroupVersion(gv)
	if apierrors.IsNotFound(err) {
		return ErrUnserved
	}
	if err != nil {
		return fmt.Errorf("discovery of %s: %w", gv, err)
	}
	var missing []string
	for _, want := range []string{"workloads", "podgroups"} {
		if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == want }) {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w (%s serves no %v)", ErrUnserved, gv, missing)
	}
	return nil
}
