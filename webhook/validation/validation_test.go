/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package validation

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

func ptr[T any](v T) *T { return &v }

func validApp() *v1beta2.SparkApplication {
	return &v1beta2.SparkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns"},
		Spec:       v1beta2.SparkApplicationSpec{SparkVersion: "3.5.3", MainApplicationFile: "local:///a.jar"},
	}
}

func errStrings(app *v1beta2.SparkApplication) []string {
	var out []string
	for _, e := range ValidateSparkApplication(app) {
		out = append(out, e.Error())
	}
	return out
}

func TestValidateSparkApplication(t *testing.T) {
	tests := []struct {
		name   string
		change func(a *v1beta2.SparkApplication)
		want   []string
	}{{
		name:   "valid",
		change: func(*v1beta2.SparkApplication) {},
	}, {
		name: "namespace equal to the application's is allowed",
		change: func(a *v1beta2.SparkApplication) {
			a.Spec.SparkConf = map[string]string{"spark.kubernetes.namespace": "ns"}
		},
	}, {
		name:   "name not a DNS-1035 label",
		change: func(a *v1beta2.SparkApplication) { a.Name = "1pi" },
		want:   []string{`metadata.name: Invalid value: "1pi": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`},
	}, {
		name:   "name too long",
		change: func(a *v1beta2.SparkApplication) { a.Name = strings.Repeat("a", 64) },
		want:   []string{`metadata.name: Invalid value: "` + strings.Repeat("a", 64) + `": must be no more than 63 characters`},
	}, {
		name: "template needs Spark 3",
		change: func(a *v1beta2.SparkApplication) {
			a.Spec.SparkVersion = "2.4.8"
			a.Spec.Executor.Template = &corev1.PodTemplateSpec{}
		},
		want: []string{`spec.executor.template: Forbidden: pod templates need Spark 3.0 or later, but spec.sparkVersion is "2.4.8"`},
	}, {
		name: "template with unparsable version",
		change: func(a *v1beta2.SparkApplication) {
			a.Spec.SparkVersion = "latest"
			a.Spec.Driver.Template = &corev1.PodTemplateSpec{}
		},
		want: []string{`spec.sparkVersion: Invalid value: "latest": not a Spark version such as 3.5.3; spec.driver.template needs Spark 3.0 or later`},
	}, {
		name: "node selector at both levels",
		change: func(a *v1beta2.SparkApplication) {
			a.Spec.NodeSelector = map[string]string{"a": "b"}
			a.Spec.Driver.NodeSelector = map[string]string{"a": "b"}
		},
		want: []string{"spec.driver.nodeSelector: Forbidden: spec.nodeSelector is set too: set a node selector either for the application or for the driver and executor, not both"},
	}, {
		name: "operator-owned spark conf",
		change: func(a *v1beta2.SparkApplication) {
			a.Spec.SparkConf = map[string]string{
				"spark.master":                                            "local",
				"spark.kubernetes.namespace":                              "other",
				"spark.kubernetes.driver.container.image":                 "x",
				"spark.kubernetes.authenticate.driver.serviceAccountName": "sa",
				"spark.executor.cores":                                    "2",
			}
		},
		want: []string{
			"spec.sparkConf[spark.kubernetes.authenticate.driver.serviceAccountName]: Forbidden: authentication and service accounts are set by the operator: use spec.driver.serviceAccount and spec.executor.serviceAccount",
			"spec.sparkConf[spark.kubernetes.driver.container.image]: Forbidden: set by the operator: use spec.driver.image",
			`spec.sparkConf[spark.kubernetes.namespace]: Forbidden: must be the application's namespace "ns" or unset`,
			"spec.sparkConf[spark.master]: Forbidden: set by the operator: the operator submits to its own cluster",
		},
	}, {
		name: "memory sizes that are not sizes or too large",
		change: func(a *v1beta2.SparkApplication) {
			a.Spec.Driver.Memory = ptr("9999999999999p")
			a.Spec.Executor.MemoryOverhead = ptr("lots")
			a.Spec.Executor.Memory = ptr("9999999999999g") // about 9.5 EiB
		},
		want: []string{
			`spec.driver.memory: Invalid value: "9999999999999p": "9999999999999p" is larger than any memory size Kubernetes can express`,
			`spec.executor.memory: Invalid value: "9999999999999g": "9999999999999g" is larger than any memory size Kubernetes can express`,
			`spec.executor.memoryOverhead: Invalid value: "lots": "lots" is not a Spark memory size such as 512m or 2g`,
		},
	}, {
		name:   "a large memory size that fits is accepted",
		change: func(a *v1beta2.SparkApplication) { a.Spec.Driver.Memory = ptr("8190p") },
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app := validApp()
			tc.change(app)
			if d := cmp.Diff(tc.want, errStrings(app)); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
		})
	}
}

func TestValidateScheduledSparkApplication(t *testing.T) {
	ssa := &v1beta2.ScheduledSparkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ns"},
		Spec:       v1beta2.ScheduledSparkApplicationSpec{Schedule: "@every 1h", Template: validApp().Spec},
	}
	if errs := ValidateScheduledSparkApplication(ssa); len(errs) > 0 {
		t.Fatalf("valid object refused: %v", errs)
	}
	ssa.Spec.Schedule = "every day"
	ssa.Spec.Template.SparkConf = map[string]string{"spark.master": "x"}
	errs := ValidateScheduledSparkApplication(ssa)
	if len(errs) != 2 || errs[0].Field != "spec.schedule" || errs[1].Field != "spec.template.sparkConf[spark.master]" {
		t.Fatalf("got %v, want errors for spec.schedule and spec.template.sparkConf[spark.master]", errs)
	}
}

func TestAppResources(t *testing.T) {
	app := validApp()
	s := &app.Spec
	s.Driver.Cores = ptr(int32(1))
	s.Driver.Memory = ptr("1g") // 1024 + 384 overhead
	s.Executor.Cores = ptr(int32(2))
	s.Executor.Memory = ptr("4g") // 4096 + 409
	s.Executor.Instances = ptr(int32(3))
	s.Executor.CoreLimit = ptr("3")
	got, err := AppResources(app)
	if err != nil {
		t.Fatal(err)
	}
	mem := resource.MustParse("14923Mi") // 1408 + 3*4505
	want := corev1.ResourceList{
		corev1.ResourceCPU:            resource.MustParse("7"),
		corev1.ResourceRequestsCPU:    resource.MustParse("7"),
		corev1.ResourceLimitsCPU:      resource.MustParse("9"), // no limit on the driver, as Spark sets none
		corev1.ResourceMemory:         mem,
		corev1.ResourceRequestsMemory: mem,
		corev1.ResourceLimitsMemory:   mem,
		corev1.ResourcePods:           resource.MustParse("4"),
	}
	if d := cmp.Diff(want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); d != "" {
		t.Errorf("resources (-want +got):\n%s", d)
	}
}

// TestAppResourcesExtremes: the largest counts and sizes add up exactly, without looping once
// per executor or wrapping around, and sizes Kubernetes cannot express are refused by name.
func TestAppResourcesExtremes(t *testing.T) {
	app := validApp()
	s := &app.Spec
	s.Driver.Cores = ptr(int32(math.MaxInt32))
	s.Driver.Memory = ptr("8190p")
	s.Driver.MemoryOverhead = ptr("1p")
	s.Executor.Cores = ptr(int32(math.MaxInt32))
	s.Executor.Memory = ptr("1m")
	s.Executor.MemoryOverhead = ptr("1m")
	s.Executor.Instances = ptr(int32(math.MaxInt32))
	got, err := AppResources(app)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(math.MaxInt32)
	wantCPU := resource.MustParse(strconv.FormatInt(n*(n+1), 10))
	if q := got[corev1.ResourceRequestsCPU]; q.Cmp(wantCPU) != 0 {
		t.Errorf("requests.cpu = %s, want %s", q.String(), wantCPU.String())
	}
	// 8191 PiB for the driver, 2 MiB for each executor: more bytes than an int64 holds, so
	// compared as written (parsing it would clamp it).
	wantMem := strconv.FormatInt(8191<<30+2*n, 10) + "Mi"
	if q := got[corev1.ResourceRequestsMemory]; q.String() != wantMem {
		t.Errorf("requests.memory = %s, want %s", q.String(), wantMem)
	}

	for _, tc := range []struct{ memory, factor, want string }{
		{"9999999999999999p", "", `spark.driver.memory: "9999999999999999p" is larger than any memory size`},
		{"99999999999999999999g", "", `spark.driver.memory: "99999999999999999999g" is not a Spark memory size`},
		{"8191p", "", "spark.driver.memory plus its overhead is larger than any memory size"},
		{"1t", "-1", "spark.kubernetes.memoryOverheadFactor=\"-1\": want a non-negative decimal"},
	} {
		app := validApp()
		app.Spec.Driver.Memory = ptr(tc.memory)
		if tc.factor != "" {
			app.Spec.MemoryOverheadFactor = ptr(tc.factor)
		}
		if _, err := AppResources(app); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("memory %q, factor %q: error %v, want one containing %q", tc.memory, tc.factor, err, tc.want)
		}
	}
}

func TestCheckQuota(t *testing.T) {
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse("4")}},
		Status:     corev1.ResourceQuotaStatus{Used: corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse("1")}},
	}
	tests := []struct {
		cpu  string
		want string
	}{
		{"3", ""},
		{"3500m", "the driver and executors need 3500m requests.cpu, but ResourceQuota q has only 3 of 4 left"},
	}
	for _, tc := range tests {
		err := CheckQuota(corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse(tc.cpu), corev1.ResourceMemory: resource.MustParse("1Ti")}, quota)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("cpu %s: got %q, want %q", tc.cpu, got, tc.want)
		}
	}
}
