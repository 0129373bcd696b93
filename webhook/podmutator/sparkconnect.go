/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package podmutator

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
)

// defaultConnectPod mutates a server or executor pod of a SparkConnect (found by its
// connect-name label) with the customisations of its template, as a SparkApplication's
// driver and executors get theirs.
func (d *Defaulter) defaultConnectPod(ctx context.Context, pod *corev1.Pod, ns string) error {
	name := pod.Labels[v1alpha1.LabelConnectName]
	if name == "" {
		return nil
	}
	conn := &v1alpha1.SparkConnect{}
	if err := d.Reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, conn); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil
		}
		return apierrors.NewInternalError(fmt.Errorf("reading SparkConnect %s/%s: %w", ns, name, err))
	}
	if err := MutateConnectPod(pod, conn); err != nil {
		return mutationError(err)
	}
	d.place(pod, conn)
	return nil
}

// MutateConnectPod applies to a SparkConnect's server pod (spark-role connect-server) the
// settings of spec.server.template, and to its executors those of spec.executor.template:
// what a pod lacks of them is added, as for an application's driver and executors. The server
// pod the operator builds and executors Spark builds already have them; other pods get them.
func MutateConnectPod(pod *corev1.Pod, conn *v1alpha1.SparkConnect) error {
	switch pod.Labels[v1beta2.SparkRoleLabel] {
	case v1alpha1.SparkRoleConnectServer:
		return mutateAs(pod, sparkpod.ConnectApplication(conn), v1beta2.SparkRoleDriver)
	case v1beta2.SparkRoleExecutor:
		return mutateAs(pod, sparkpod.ConnectApplication(conn), v1beta2.SparkRoleExecutor)
	}
	return nil
}
