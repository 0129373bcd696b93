/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package drivername decides who may use a driver pod name in a namespace. A pod name is
// unique in its namespace, and the operator never adopts a pod of another application, so two
// applications naming the same driver pod (spec.driver.podName, or the default <app>-driver)
// cannot both run. The rule, shared by the validating webhook (which refuses the clash) and
// the controller (which settles the races the webhook cannot see):
//
//   - an existing pod belongs to the application its app-name label names: the pod's
//     application keeps it, any other fails;
//   - between applications with no such pod yet, the one created first holds the name.
package drivername

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// PodTaken explains why pod, the existing pod named as app's driver, is not app's to use, or
// returns "" when it is app's (or no pod). Whether it is the driver of app's current
// submission is for the controller to say.
func PodTaken(pod *corev1.Pod, app *v1beta2.SparkApplication) string {
	if pod == nil || pod.Labels[v1beta2.LabelAppName] == app.Name {
		return ""
	}
	if owner := pod.Labels[v1beta2.LabelAppName]; owner != "" {
		return fmt.Sprintf("driver pod name %s is taken: pod %s/%s is the driver of SparkApplication %s; set spec.driver.podName to a name no other application uses",
			pod.Name, pod.Namespace, pod.Name, owner)
	}
	return fmt.Sprintf("driver pod name %s is taken: pod %s/%s exists and is not a driver of this application; set spec.driver.podName to a free name",
		pod.Name, pod.Namespace, pod.Name)
}

// Precedes reports whether a holds a driver pod name before b: it was created first. Creation
// times have whole seconds; within one, the application whose own name gives the pod name
// (<app>-driver) holds it, else the one whose name sorts first.
func Precedes(a, b *v1beta2.SparkApplication) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	name := a.DriverPodName()
	if own := a.Name+"-driver" == name; own != (b.Name+"-driver" == name) {
		return own
	}
	return a.Name < b.Name
}

// Claimant returns the first of apps, other than app itself, that names app's driver pod for
// its own and for which holds(other) is true; nil when there is none.
func Claimant(apps []v1beta2.SparkApplication, app *v1beta2.SparkApplication, holds func(other *v1beta2.SparkApplication) bool) *v1beta2.SparkApplication {
	name := app.DriverPodName()
	for i := range apps {
		other := &apps[i]
		if other.Name == app.Name || other.Namespace != app.Namespace || other.DriverPodName() != name {
			continue
		}
		if holds == nil || holds(other) {
			return other
		}
	}
	return nil
}

// Claimed is the message for app, whose driver pod name other holds.
func Claimed(other, app *v1beta2.SparkApplication) string {
	return fmt.Sprintf("driver pod name %s is already the driver pod name of SparkApplication %s; set spec.driver.podName to a name no other application uses",
		app.DriverPodName(), other.Name)
}
