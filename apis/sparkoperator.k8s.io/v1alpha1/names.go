/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package v1alpha1

import "github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"

// Labels of what the operator creates for a SparkConnect. They are the Kubeflow operator's keys
// and values, so tools that select Spark Connect pods by them keep working.
const (
	// LabelConnectName carries the name of the SparkConnect a pod, Service or ConfigMap
	// belongs to; the server passes it on to its executors.
	LabelConnectName = v1beta2.GroupName + "/connect-name"
	// LabelCreatedByOperator ("true") marks the Service and ConfigMap of a SparkConnect.
	LabelCreatedByOperator = v1beta2.GroupName + "/created-by-spark-operator"
	// LabelSparkVersion is spec.sparkVersion, on the server pod.
	LabelSparkVersion = "spark-version"
	// SparkRoleConnectServer is the spark-role label value of a server pod (executors have
	// v1beta2.SparkRoleExecutor).
	SparkRoleConnectServer = "connect-server"
)

// ServerPodName is the name of the server pod: "<name>-server".
func (c *SparkConnect) ServerPodName() string { return c.Name + "-server" }

// ServerServiceName is the name of the server's Service: spec.server.service.metadata.name when
// set, else "<name>-server".
func (c *SparkConnect) ServerServiceName() string {
	if s := c.Spec.Server.Service; s != nil && s.Name != "" {
		return s.Name
	}
	return c.Name + "-server"
}

// ExecutorTemplateConfigMapName is the ConfigMap holding the executor pod template the server
// reads: "<name>-conf".
func (c *SparkConnect) ExecutorTemplateConfigMapName() string { return c.Name + "-conf" }

// ServerSelector is the set of labels that identifies the server pod; its Service selects them.
func (c *SparkConnect) ServerSelector() map[string]string {
	return map[string]string{
		v1beta2.LabelLaunchedByOperator: "true",
		LabelConnectName:                c.Name,
		v1beta2.SparkRoleLabel:          SparkRoleConnectServer,
	}
}

// ExecutorSelector is the set of labels that identifies the executors of the server.
func (c *SparkConnect) ExecutorSelector() map[string]string {
	return map[string]string{
		v1beta2.LabelLaunchedByOperator: "true",
		LabelConnectName:                c.Name,
		v1beta2.SparkRoleLabel:          v1beta2.SparkRoleExecutor,
	}
}
