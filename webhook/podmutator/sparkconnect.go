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
		return mutateAs(pod, ConnectApplication(conn), v1beta2.SparkRoleDriver)
	case v1beta2.SparkRoleExecutor:
		return mutateAs(pod, ConnectApplication(conn), v1beta2.SparkRoleExecutor)
	}
	return nil
}

// ConnectApplication is conn seen as a SparkApplication: the server as its driver, the pod
// templates' settings as the driver's and executors' fields, the sizes and executor count as
// Spark reads them for a server (spark.executor.instances unset means 2, or none to start with
// under dynamic allocation). It has no UID, so no owner reference is added on its account (the
// operator makes the SparkConnect the server's owner).
func ConnectApplication(conn *v1alpha1.SparkConnect) *v1beta2.SparkApplication {
	app := &v1beta2.SparkApplication{}
	app.Name, app.Namespace = conn.Name, conn.Namespace
	app.Spec.Image = conn.Spec.Image
	app.Spec.SparkConf, app.Spec.HadoopConf = conn.Spec.SparkConf, conn.Spec.HadoopConf
	app.Spec.DynamicAllocation = conn.Spec.DynamicAllocation
	srv, ex := &conn.Spec.Server, &conn.Spec.Executor
	app.Spec.Driver.Cores, app.Spec.Driver.Memory = srv.Cores, srv.Memory
	app.Spec.Executor.Cores, app.Spec.Executor.Memory = ex.Cores, ex.Memory
	app.Spec.Executor.Instances = ex.Instances
	if ex.Instances == nil {
		instances := int32(2)
		if da := conn.Spec.DynamicAllocation; da != nil && da.Enabled {
			instances = 0
		}
		app.Spec.Executor.Instances = &instances
	}
	var volumes []corev1.Volume
	fromTemplate(&app.Spec.Driver.SparkPodSpec, &volumes, conn.Spec.Server.Template, v1beta2.SparkRoleDriver)
	fromTemplate(&app.Spec.Executor.SparkPodSpec, &volumes, conn.Spec.Executor.Template, v1beta2.SparkRoleExecutor)
	app.Spec.Volumes = volumes
	return app
}

// fromTemplate fills spec with the settings of t that the mutations apply, and adds t's volumes.
func fromTemplate(spec *v1beta2.SparkPodSpec, volumes *[]corev1.Volume, t *corev1.PodTemplateSpec, role string) {
	if t == nil {
		return
	}
	t = t.DeepCopy()
	ps := &t.Spec
	*volumes = append(*volumes, ps.Volumes...)
	spec.Affinity, spec.Tolerations, spec.NodeSelector = ps.Affinity, ps.Tolerations, ps.NodeSelector
	spec.PodSecurityContext, spec.DNSConfig, spec.HostAliases = ps.SecurityContext, ps.DNSConfig, ps.HostAliases
	spec.TerminationGracePeriodSeconds, spec.ShareProcessNamespace = ps.TerminationGracePeriodSeconds, ps.ShareProcessNamespace
	spec.InitContainers = ps.InitContainers
	if ps.HostNetwork {
		spec.HostNetwork = &ps.HostNetwork
	}
	if ps.SchedulerName != "" {
		spec.SchedulerName = &ps.SchedulerName
	}
	if ps.PriorityClassName != "" {
		spec.PriorityClassName = &ps.PriorityClassName
	}
	main := sparkpod.SparkContainerIndex(&corev1.Pod{Spec: *ps}, role)
	for i, c := range ps.Containers {
		if i != main {
			spec.Sidecars = append(spec.Sidecars, c)
			continue
		}
		spec.Env, spec.EnvFrom, spec.VolumeMounts = c.Env, c.EnvFrom, c.VolumeMounts
		spec.SecurityContext, spec.Lifecycle = c.SecurityContext, c.Lifecycle
	}
}
