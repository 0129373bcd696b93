/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Pod settings Spark 4.0 writes itself from its properties, beyond sizing (resources.go). The
// spark-submit submitter leaves them to Spark; the native submitter, which builds the driver
// pod without Spark, writes them from here, so that both give the same pod.
const (
	// KeySchedulerName names the scheduler of every Spark pod; the role's own key wins over it.
	KeySchedulerName = "spark.kubernetes.scheduler.name"
	// KeyHadoopConfigMap names an existing ConfigMap holding the Hadoop configuration.
	KeyHadoopConfigMap = "spark.kubernetes.hadoop.configMapName"
	// KeyExecutorHadoopConfigMap is the property the driver gives its executors naming the
	// Hadoop ConfigMap they mount (HadoopConfDriverFeatureStep sets it, its executor
	// counterpart reads it).
	KeyExecutorHadoopConfigMap = "spark.kubernetes.executor.hadoopConfigMapName"

	// Where Spark mounts the Hadoop ConfigMap (Constants.HADOOP_CONF_VOLUME and
	// HADOOP_CONF_DIR_PATH), apart from the Kubeflow webhook's /etc/hadoop/conf.
	SparkHadoopConfVolume = "hadoop-properties"
	SparkHadoopConfPath   = "/opt/hadoop/conf"
)

// RoleSchedulerNameKey is the property naming the scheduler of role's pods:
// spark.kubernetes.driver.scheduler.name or spark.kubernetes.executor.scheduler.name.
func RoleSchedulerNameKey(role Role) string {
	return "spark.kubernetes." + string(role) + ".scheduler.name"
}

// SchedulerName is the scheduler Spark gives a pod of role, and whether the properties name
// one: the role's key, else spark.kubernetes.scheduler.name (KubernetesDriverConf and
// KubernetesExecutorConf.schedulerName). Spark sets it over whatever the pod template says
// (BasicDriverFeatureStep, BasicExecutorFeatureStep), an empty value included.
func SchedulerName(role Role, conf map[string]string) (string, bool) {
	if v, ok := conf[RoleSchedulerNameKey(role)]; ok {
		return v, true
	}
	v, ok := conf[KeySchedulerName]
	return v, ok
}

// NodeSelector is the node selector Spark sets on a pod of role from its properties, over the
// pod template's: spark.kubernetes.node.selector.*, then the role's
// spark.kubernetes.<role>.node.selector.* (KubernetesConf.nodeSelector and
// driverNodeSelector/executorNodeSelector). nil when the properties name none.
func NodeSelector(role Role, conf map[string]string) map[string]string {
	var out map[string]string
	for _, prefix := range []string{"spark.kubernetes.node.selector.", "spark.kubernetes." + string(role) + ".node.selector."} {
		for k, v := range conf {
			if name, ok := strings.CutPrefix(k, prefix); ok && name != "" {
				out = setAll(out, map[string]string{name: v})
			}
		}
	}
	return out
}

// HadoopConfigMap is the Hadoop configuration ConfigMap Spark mounts into a pod of role, if
// any: the driver's from spark.kubernetes.hadoop.configMapName (HadoopConfDriverFeatureStep),
// an executor's from the property the driver passes on (HadoopConfExecutorFeatureStep). A
// submitter building the driver itself must pass that property on too (KeyExecutorHadoopConfigMap).
func HadoopConfigMap(role Role, conf map[string]string) string {
	if role == RoleExecutor {
		return conf[KeyExecutorHadoopConfigMap]
	}
	return conf[KeyHadoopConfigMap]
}

// SparkHadoopConf is how Spark mounts the Hadoop ConfigMap name into its container: volume
// hadoop-properties, mounted at /opt/hadoop/conf, and HADOOP_CONF_DIR pointing there.
func SparkHadoopConf(name string) (corev1.Volume, corev1.VolumeMount, corev1.EnvVar) {
	return configMapVolume(SparkHadoopConfVolume, name),
		corev1.VolumeMount{Name: SparkHadoopConfVolume, MountPath: SparkHadoopConfPath},
		corev1.EnvVar{Name: EnvHadoopConfDir, Value: SparkHadoopConfPath}
}
