/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package podcompare

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// submission is what one side created: a driver pod in namespace ns, named by Spark's
// resource prefix, with its properties ConfigMap and Service.
func submission(ns, appUID, podUID, appID, prefix, submissionID string) side {
	owner := []metav1.OwnerReference{{Kind: "Pod", Name: "pi-driver", UID: types.UID(podUID)}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pi-driver", UID: types.UID(podUID), ResourceVersion: "7",
			Labels:          map[string]string{v1beta2.SparkAppSelectorLabel: appID, v1beta2.LabelSubmissionID: submissionID},
			OwnerReferences: []metav1.OwnerReference{{Kind: "SparkApplication", Name: "pi", UID: types.UID(appUID)}}},
		Spec: corev1.PodSpec{NodeName: "real-node", Containers: []corev1.Container{{
			Name: "spark-kubernetes-driver",
			Env:  []corev1.EnvVar{{Name: "SPARK_APPLICATION_ID", Value: appID}},
		}}},
		Status: corev1.PodStatus{Phase: corev1.PodSucceeded, PodIP: "10.0.0.1"},
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: prefix + "-driver-conf-map", UID: "cm-" + types.UID(podUID), OwnerReferences: owner},
		Data: map[string]string{propertiesKey: "spark.app.id=" + appID + "\nspark.kubernetes.namespace=" + ns +
			"\nspark.kubernetes.driver.pod.name=pi-driver\nspark.driver.host=" + prefix + "-driver-svc." + ns + ".svc\n"},
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: prefix + "-driver-svc", OwnerReferences: owner}}
	return side{pod, Generated{AppUID: types.UID(appUID), SubmissionID: submissionID}, []*corev1.ConfigMap{cm}, []*corev1.Service{svc}}
}

// side is what one submission created, as Read returns it, and its generated IDs.
type side struct {
	pod  *corev1.Pod
	ids  Generated
	cms  []*corev1.ConfigMap
	svcs []*corev1.Service
}

func snapshot(t *testing.T, s side) *Snapshot {
	t.Helper()
	snap, err := New(s.pod, s.ids, s.cms, s.svcs)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// Two submissions that differ only in what differs by design compare equal; a real
// difference is reported by a readable path, and allowed only as Allowed says.
func TestCompare(t *testing.T) {
	ss := snapshot(t, submission("ns-a", "app-uid-a", "pod-uid-a", "spark-aaaa", "pi-1111", "sub-a"))
	tests := []struct {
		name    string
		change  func(*corev1.Pod, []*corev1.ConfigMap)
		want    []string // Difference.String()s
		allowed []bool
	}{
		{name: "only generated names, IDs and server fields differ", change: func(*corev1.Pod, []*corev1.ConfigMap) {}},
		{name: "an env value differs", change: func(p *corev1.Pod, _ []*corev1.ConfigMap) {
			p.Spec.Containers[0].Env[0].Value = "other"
		}, want: []string{`Pod.Spec.Containers[0].Env[0].Value: spark-submit "SPARK-APP-ID", native "other"`}, allowed: []bool{false}},
		{name: "a pod template file natively: only spark-submit may name one", change: func(_ *corev1.Pod, cms []*corev1.ConfigMap) {
			cms[0].Data[propertiesKey] += "spark.kubernetes.driver.podTemplateFile=/tmp/x.yaml\n"
		}, want: []string{`Properties["spark.kubernetes.driver.podTemplateFile"]: spark-submit (absent), native "/tmp/x.yaml"`}, allowed: []bool{false}},
		{name: "the customised label natively, allowed", change: func(p *corev1.Pod, _ []*corev1.ConfigMap) {
			p.Labels[v1beta2.LabelCustomised] = "true"
		}, want: []string{`Pod.ObjectMeta.Labels["sparkoperator.k8s.io/customised"]: spark-submit (absent), native "true"`}, allowed: []bool{true}},
		{name: "the name of the namespace where another belongs", change: func(p *corev1.Pod, _ []*corev1.ConfigMap) {
			p.Spec.ServiceAccountName = "ns-b"
		}, want: []string{`Pod.Spec.ServiceAccountName: spark-submit "", native "NAMESPACE"`}, allowed: []bool{false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nat := submission("ns-b", "app-uid-b", "pod-uid-b", "spark-bbbb", "pi-2222", "sub-b")
			nat.pod.Status.PodIP, nat.pod.ResourceVersion = "10.0.0.2", "9"
			tt.change(nat.pod, nat.cms)
			var got []string
			var allowed []bool
			for _, d := range Compare(ss, snapshot(t, nat)) {
				got = append(got, d.String())
				_, ok := d.AllowedBy()
				allowed = append(allowed, ok)
			}
			if !slices.Equal(got, tt.want) || !slices.Equal(allowed, tt.allowed) {
				t.Errorf("differences %q (allowed %v), want %q (allowed %v)", got, allowed, tt.want, tt.allowed)
			}
		})
	}
}
