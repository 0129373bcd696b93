/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// The builders here need the runtime's own names (its annotations, its reservation's encoding),
// so they live beside it; gangtest, which this package's tests import, must not import it.

// given is p as released by the gang scheduler to node.
func given(p corev1.Pod, node string) corev1.Pod {
	p.Annotations = map[string]string{AnnotationNode: node}
	return p
}

// app is a gang application of 1-CPU driver and n 2-CPU executors in state, with submission sub.
func app(name, sub string, state v1beta2.ApplicationStateType, n int32, res *Reservation) v1beta2.SparkApplication {
	a := v1beta2.SparkApplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: v1beta2.SparkApplicationSpec{
			Type: v1beta2.SparkApplicationTypeScala, MainApplicationFile: "local:///x.jar",
			BatchScheduler: ptr.To(Name),
			Driver:         v1beta2.DriverSpec{SparkPodSpec: v1beta2.SparkPodSpec{Cores: ptr.To[int32](1)}},
			Executor:       v1beta2.ExecutorSpec{Instances: ptr.To(n), SparkPodSpec: v1beta2.SparkPodSpec{Cores: ptr.To[int32](2)}},
		},
		Status: v1beta2.SparkApplicationStatus{SubmissionID: sub, AppState: v1beta2.ApplicationState{State: state}},
	}
	if res != nil {
		a.Annotations = map[string]string{AnnotationAdmission: res.encode()}
	}
	return a
}

// gangApps reads apps as the runtime does.
func gangApps(apps []v1beta2.SparkApplication) []object {
	var out []object
	for i := range apps {
		out = append(out, applicationObject(&apps[i]))
	}
	return out
}
