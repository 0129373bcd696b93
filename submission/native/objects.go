/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package native

// The objects a submission creates besides the driver pod: the executor pod template
// ConfigMap, the headless driver Service and the spark.properties ConfigMap.

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
)

// templateConfigMap is the ConfigMap named name that holds the executor pod template, nil if
// the executors need none; when there is one, the properties tell Spark where the driver
// finds it.
func templateConfigMap(app *v1beta2.SparkApplication, sched sparkpod.Scheduling, c conf, name string) (*corev1.ConfigMap, error) {
	tmpl, err := executorTemplate(app, sched)
	if err != nil || tmpl == "" {
		return nil, err
	}
	c[keyExecTemplateFile] = templateMountPath + "/" + templateFileName
	c[keyExecTemplateName] = v1beta2.SparkExecutorContainerName
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: app.Namespace},
		Immutable:  ptr.To(true),
		Data:       map[string]string{templateKey: tmpl},
	}, nil
}

// executorTemplate renders the executor pod template as YAML: what Spark properties cannot
// express about executors, their owner reference to the application included, and a batch
// scheduler's settings (sched) over it.
func executorTemplate(app *v1beta2.SparkApplication, sched sparkpod.Scheduling) (string, error) {
	pod, err := sparkpod.Template(app, sparkpod.RoleExecutor)
	if err != nil {
		return "", userError("%v", err)
	}
	sched.Apply(&pod.ObjectMeta, &pod.Spec)
	out, err := yaml.Marshal(pod)
	if err != nil {
		return "", fmt.Errorf("rendering executor pod template: %w", err)
	}
	return string(out), nil
}

// driverService is the headless Service that gives the driver the host name the executors
// reach it by; it selects the driver pod by all its Spark labels (podLabels).
func driverService(namespace, name, appID string, c conf, podLabels map[string]string, ports driverPorts) *corev1.Service {
	svcLabels := map[string]string{v1beta2.SparkAppSelectorLabel: appID}
	for k, v := range c.prefixed(prefixDriverSvcLabel) {
		svcLabels[k] = v
	}
	selector := make(map[string]string, len(podLabels))
	for k, v := range podLabels {
		selector[k] = v
	}
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   namespace,
			Labels:      svcLabels,
			Annotations: c.prefixed(prefixDriverSvcAnnot),
		},
		Spec: corev1.ServiceSpec{
			ClusterIP:      corev1.ClusterIPNone,
			IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicy(c.get(keyIPFamilyPolicy, string(corev1.IPFamilyPolicySingleStack)))),
			Selector:       selector,
			Ports: []corev1.ServicePort{
				{Name: "driver-rpc-port", Port: ports.rpc, TargetPort: intstr.FromInt32(ports.rpc)},
				{Name: "blockmanager", Port: ports.blockManager, TargetPort: intstr.FromInt32(ports.blockManager)},
				{Name: "spark-ui", Port: ports.ui, TargetPort: intstr.FromInt32(ports.ui)},
			},
		},
	}
	for _, f := range strings.Split(c.get(keyIPFamilies, string(corev1.IPv4Protocol)), ",") {
		svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, corev1.IPFamily(strings.TrimSpace(f)))
	}
	return svc
}

// propertiesConfigMap is the ConfigMap named name that holds spark.properties, which the
// driver reads its configuration from.
func propertiesConfigMap(namespace, name string, submitTime time.Time, props map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Immutable:  ptr.To(true),
		Data: map[string]string{
			propertiesKey: propertiesFile("Java properties built from Kubernetes config map with name: "+name, submitTime, props),
			// spark-submit 4.0 stores the namespace next to the properties file as well.
			keyNamespace: namespace,
		},
	}
}
