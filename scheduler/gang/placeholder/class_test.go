/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package placeholder

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestPlaceholderClass: placeholders get a class of their workload's priority value that never
// preempts, created once; without a usable one they keep their workload's class.
func TestPlaceholderClass(t *testing.T) {
	class := func(name string, value int32, globalDefault bool, policy corev1.PreemptionPolicy) *schedulingv1.PriorityClass {
		return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, GlobalDefault: globalDefault, PreemptionPolicy: ptr.To(policy)}
	}
	tests := []struct {
		name      string
		existing  []client.Object
		class     string
		want      string
		wantValue int32 // of the class created, if one is
	}{
		{name: "no class, no global default: 0", want: "sparkop-placeholder-0", wantValue: 0},
		{name: "no class: the global default's value", existing: []client.Object{class("default", 7, true, corev1.PreemptLowerPriority)},
			want: "sparkop-placeholder-7", wantValue: 7},
		{name: "the workload's class's value", existing: []client.Object{class("high", 100, false, corev1.PreemptLowerPriority)},
			class: "high", want: "sparkop-placeholder-100", wantValue: 100},
		{name: "a negative value", existing: []client.Object{class("low", -5, false, corev1.PreemptLowerPriority)},
			class: "low", want: "sparkop-placeholder-minus-5", wantValue: -5},
		{name: "the placeholders' class exists", existing: []client.Object{class("high", 100, false, corev1.PreemptLowerPriority),
			class("sparkop-placeholder-100", 100, false, corev1.PreemptNever)}, class: "high", want: "sparkop-placeholder-100", wantValue: 100},
		{name: "a class of that name that preempts: the workload's class", existing: []client.Object{class("high", 100, false, corev1.PreemptLowerPriority),
			class("sparkop-placeholder-100", 100, false, corev1.PreemptLowerPriority)}, class: "high", want: "high"},
		{name: "the workload's class does not exist: kept, for the API server to refuse", class: "gone", want: "gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			if err := clientgoscheme.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tt.existing...).Build()
			var classes Classes
			ctx := context.Background()
			if got := classes.Of(ctx, c, c, tt.class); got != tt.want {
				t.Fatalf("class = %q, want %q", got, tt.want)
			}
			if got := classes.Of(ctx, c, c, tt.class); got != tt.want {
				t.Errorf("asked again: class = %q, want %q", got, tt.want)
			}
			if tt.want == tt.class {
				return
			}
			var pc schedulingv1.PriorityClass
			if err := c.Get(ctx, client.ObjectKey{Name: tt.want}, &pc); err != nil {
				t.Fatal(err)
			}
			if pc.Value != tt.wantValue || pc.PreemptionPolicy == nil || *pc.PreemptionPolicy != corev1.PreemptNever || pc.GlobalDefault {
				t.Errorf("class %s: value %d, preemption %v, global default %v; want %d, Never, false", pc.Name, pc.Value, ptr.Deref(pc.PreemptionPolicy, ""), pc.GlobalDefault, tt.wantValue)
			}
		})
	}
}
