/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package podmutator applies to driver and executor pods the SparkApplication settings that
// Spark properties cannot express, as written by sparkpod. The operator's submitters already
// put them into the driver pod and the executor pod template; the mutator adds only what a pod
// lacks, so a pod that already carries a customisation is left as it is (nothing is ever
// added twice), and moves the user's env after Spark's.
package podmutator

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
)

// RejectError is a pod the mutator refuses: the customisation asked for cannot be applied.
type RejectError = sparkpod.RejectError

// Mutate applies app's customisations for pod's role (its spark-role label) to pod in place.
// A *RejectError means the pod must be refused.
func Mutate(pod *corev1.Pod, app *v1beta2.SparkApplication) error {
	return mutateAs(pod, app, pod.Labels[v1beta2.SparkRoleLabel])
}

// mutateAs applies app's customisations for role to pod; pods of other roles are not Spark's.
func mutateAs(pod *corev1.Pod, app *v1beta2.SparkApplication, role string) error {
	if role != v1beta2.SparkRoleDriver && role != v1beta2.SparkRoleExecutor {
		return nil
	}
	return sparkpod.Customise(pod, app, sparkpod.Role(role))
}
