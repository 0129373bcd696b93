/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package podmutator

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

func request(t *testing.T, op admissionv1.Operation, pod *corev1.Pod) admission.Request {
	t.Helper()
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: op, Namespace: pod.Namespace, Object: runtime.RawExtension{Raw: raw}}}
}

func TestHandle(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := errors.Join(v1beta2.AddToScheme(scheme), corev1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	app := baseApp()
	app.Spec.Driver.Env = []corev1.EnvVar{{Name: "A", Value: "1"}}
	app.Spec.Driver.GPU = &v1beta2.GPUSpec{Name: "bad name", Quantity: 1}
	d := &Defaulter{Reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(app).Build()}
	h := admission.WithDefaulter(scheme, d)

	labelled := basePod(v1beta2.SparkRoleDriver)
	unknown := basePod(v1beta2.SparkRoleDriver)
	unknown.Labels[v1beta2.LabelAppName] = "gone"
	unlabelled := basePod(v1beta2.SparkRoleDriver)
	delete(unlabelled.Labels, v1beta2.LabelLaunchedByOperator)

	tests := []struct {
		name    string
		req     admission.Request
		fixGPU  bool
		allowed bool
		patches string // the JSON patch
	}{
		{"update ignored", request(t, admissionv1.Update, labelled), false, true, "null"},
		{"unlabelled pod", request(t, admissionv1.Create, unlabelled), false, true, "null"},
		{"unknown application", request(t, admissionv1.Create, unknown), false, true, "null"},
		{"invalid GPU name refused", request(t, admissionv1.Create, labelled), false, false, "null"},
		{"patched", request(t, admissionv1.Create, labelled), true, true,
			`[{"op":"add","path":"/spec/containers/1/env","value":[{"name":"A","value":"1"}]},` +
				`{"op":"add","path":"/spec/containers/1/terminationMessagePolicy","value":"FallbackToLogsOnError"}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fixGPU {
				app.Spec.Driver.GPU = nil
				d.Reader = fake.NewClientBuilder().WithScheme(scheme).WithObjects(app).Build()
			}
			resp := h.Handle(context.Background(), tc.req)
			if resp.Allowed != tc.allowed {
				t.Fatalf("allowed = %v (%v), want %v", resp.Allowed, resp.Result, tc.allowed)
			}
			// The patch's operations in path order: the generator lists them in no set order.
			sort.Slice(resp.Patches, func(i, j int) bool { return resp.Patches[i].Path < resp.Patches[j].Path })
			got, err := json.Marshal(resp.Patches)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.patches, string(got)); d != "" {
				t.Errorf("patches (-want +got):\n%s", d)
			}
		})
	}
}

// recordingPlacer places every pod it is offered by annotating it, and records what it saw.
type recordingPlacer struct {
	env    []corev1.EnvVar // the Spark container's env when offered: customised already?
	owners []string
}

func (p *recordingPlacer) PlacePod(pod *corev1.Pod, owner client.Object) bool {
	p.env = pod.Spec.Containers[1].Env
	p.owners = append(p.owners, owner.GetName())
	metav1.SetMetaDataAnnotation(&pod.ObjectMeta, "placed", "yes")
	return true
}

// TestPlacer checks that a pod is offered to the batch schedulers after its customisations,
// with the application it belongs to, and that their change is answered; a refused pod is not.
func TestPlacer(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := errors.Join(v1beta2.AddToScheme(scheme), corev1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	app := baseApp()
	app.Spec.Executor.Env = []corev1.EnvVar{{Name: "A", Value: "1"}}
	refused := baseApp()
	refused.Name = "refused"
	refused.Spec.Executor.GPU = &v1beta2.GPUSpec{Name: "bad name", Quantity: 1}
	placer := &recordingPlacer{}
	h := admission.WithDefaulter(scheme, &Defaulter{Reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(app, refused).Build(), Placer: placer})

	resp := h.Handle(context.Background(), request(t, admissionv1.Create, basePod(v1beta2.SparkRoleExecutor)))
	if !resp.Allowed {
		t.Fatalf("executor refused: %v", resp.Result)
	}
	if diff := cmp.Diff(app.Spec.Executor.Env, placer.env); diff != "" {
		t.Errorf("env when placed (-want +got), the customisations come first:\n%s", diff)
	}
	if patches, _ := json.Marshal(resp.Patches); !strings.Contains(string(patches), `"placed":"yes"`) {
		t.Errorf("patches %s lack the placer's annotation", patches)
	}

	pod := basePod(v1beta2.SparkRoleExecutor)
	pod.Labels[v1beta2.LabelAppName] = refused.Name
	if resp := h.Handle(context.Background(), request(t, admissionv1.Create, pod)); resp.Allowed {
		t.Errorf("executor of an invalid GPU allowed")
	}
	if diff := cmp.Diff([]string{"app"}, placer.owners); diff != "" {
		t.Errorf("owners offered (-want +got):\n%s", diff)
	}
}
