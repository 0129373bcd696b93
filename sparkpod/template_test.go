/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// TestTemplateDropsCustomisedLabel: a pod labelled customised skips the pod-mutating webhook,
// so a user's template may not carry the label onto the pods Spark builds from it.
func TestTemplateDropsCustomisedLabel(t *testing.T) {
	for _, role := range []Role{RoleDriver, RoleExecutor} {
		t.Run(string(role), func(t *testing.T) {
			tmpl := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1beta2.LabelCustomised: "true", "team": "a"}}}
			app := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns"}}
			app.Spec.Driver.Template, app.Spec.Executor.Template = tmpl, tmpl
			pod, err := Template(app, role)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(map[string]string{"team": "a"}, pod.Labels); d != "" {
				t.Errorf("template labels (-want +got):\n%s", d)
			}
		})
	}
}
