/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/submission/native"
	"github.com/sparkop/spark-operator/test/executors"
	"github.com/sparkop/spark-operator/webhook/podmutator"
)

// TestDemandEqualsPods builds random applications (seeded, so a failure repeats) and checks
// that their demand is what their pods request: the driver pod the native submitter builds,
// and an executor built from its executor template and spark.properties the way Spark's
// executor allocator builds it, both as the webhook leaves them and the API server defaults
// them.
func TestDemandEqualsPods(t *testing.T) {
	const runs = 1000
	rng := rand.New(rand.NewPCG(testSeed, 0))
	for i := range runs {
		app := randomApp(rng, i)
		undefaulted, err := sparkpod.DemandOf(app)
		if err != nil {
			t.Fatalf("run %d: DemandOf: %v\nspec: %s", i, err, dump(app))
		}
		// The submitters see the application as the API server stores it: defaulted. The
		// demand is the same either way (the quota webhook judges it before defaulting).
		v1beta2.SetSparkApplicationDefaults(app)
		demand, err := sparkpod.DemandOf(app)
		if err != nil {
			t.Fatalf("run %d: DemandOf: %v\nspec: %s", i, err, dump(app))
		}
		attempt := submission.Attempt{SubmissionID: "s", DriverPodName: app.DriverPodName()}
		objs, err := native.Build(app, attempt, native.Options{Master: "k8s://https://k8s:443", SparkUser: "spark"}, native.NewIDs(time.Unix(0, 0)))
		if err != nil {
			t.Fatalf("run %d: native.Build: %v\nspec: %s", i, err, dump(app))
		}
		driver := objs.Pod
		driver.UID = "driver-uid"
		if err := podmutator.Mutate(driver, app); err != nil {
			t.Fatalf("run %d: mutating driver: %v", i, err)
		}
		var tmpl *corev1.Pod
		if objs.PodTemplate != nil {
			tmpl = &corev1.Pod{}
			if err := yaml.Unmarshal([]byte(objs.PodTemplate.Data["podspec-configmap-key"]), tmpl); err != nil {
				t.Fatal(err)
			}
		}
		exec, err := executors.Build(driver, 1, executors.Options{Template: tmpl, Conf: objs.Properties})
		if err != nil {
			t.Fatalf("run %d: building executor: %v\nspec: %s", i, err, dump(app))
		}
		if err := podmutator.Mutate(exec, app); err != nil {
			t.Fatalf("run %d: mutating executor: %v", i, err)
		}
		for _, c := range []struct {
			pod  *corev1.Pod
			want sparkpod.PodDemand
		}{{driver, demand.Driver}, {exec, demand.Executor}} {
			requests, limits := podResources(c.pod)
			if diff := cmp.Diff(requests, c.want.Requests, quantities); diff != "" {
				t.Errorf("run %d: %s requests: demand differs from the pod (-pod +demand):\n%s\nspec: %s", i, c.want.Role, diff, dump(app))
			}
			if diff := cmp.Diff(limits, c.want.Limits, quantities); diff != "" {
				t.Errorf("run %d: %s limits: demand differs from the pod (-pod +demand):\n%s\nspec: %s", i, c.want.Role, diff, dump(app))
			}
		}
		if diff := cmp.Diff(demand, undefaulted, quantities); diff != "" {
			t.Fatalf("run %d: the demand of the spec before defaulting differs (-defaulted +undefaulted):\n%s\nspec: %s", i, diff, dump(app))
		}
		if want := initialExecutors(app); demand.Executor.Count != want || demand.Driver.Count != 1 {
			t.Errorf("run %d: counts driver %d, executors %d; want 1, %d\nspec: %s", i, demand.Driver.Count, demand.Executor.Count, want, dump(app))
		}
		if t.Failed() {
			return
		}
	}
}

// testSeed fixes the applications; change it to try others.
const testSeed uint64 = 20261123

var quantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// podResources is what the scheduler counts for pod once the API server has defaulted
// requests from limits.
func podResources(pod *corev1.Pod) (corev1.ResourceList, corev1.ResourceList) {
	pod = pod.DeepCopy()
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			r := &list[i].Resources
			for name, q := range r.Limits {
				if _, ok := r.Requests[name]; !ok {
					if r.Requests == nil {
						r.Requests = corev1.ResourceList{}
					}
					r.Requests[name] = q
				}
			}
		}
	}
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}),
		resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
}

// initialExecutors is Spark's rule, written out independently of sparkpod.
func initialExecutors(app *v1beta2.SparkApplication) int32 {
	conf := func(key string) (int32, bool) {
		v, ok := app.Spec.SparkConf[key]
		n, _ := strconv.Atoi(v)
		return int32(n), ok
	}
	instances, set := int32(0), false
	if app.Spec.Executor.Instances != nil {
		instances, set = *app.Spec.Executor.Instances, true
	} else if n, ok := conf("spark.executor.instances"); ok {
		instances, set = n, true
	}
	if da := app.Spec.DynamicAllocation; da != nil && da.Enabled {
		n := instances
		for _, v := range []*int32{da.InitialExecutors, da.MinExecutors} {
			if v != nil {
				n = max(n, *v)
			}
		}
		return n
	}
	if !set {
		return 2
	}
	return instances
}

func dump(app *v1beta2.SparkApplication) string {
	out, _ := yaml.Marshal(app.Spec)
	return string(out)
}

func pick[T any](rng *rand.Rand, options ...T) T { return options[rng.IntN(len(options))] }

func maybe[T any](rng *rand.Rand, v T) *T {
	if rng.IntN(2) == 0 {
		return nil
	}
	return &v
}

func randomSize(rng *rand.Rand) string {
	return pick(rng,
		strconv.Itoa(256+rng.IntN(4096))+"m", strconv.Itoa(1+rng.IntN(16))+"g", strconv.Itoa(1+rng.IntN(8))+"G",
		strconv.Itoa(300+rng.IntN(2000)), strconv.Itoa(1<<20+rng.IntN(1<<22))+"k", strconv.Itoa(1+rng.IntN(4))+"gb")
}

// randomApp sets, at random, every spec field and Spark property that sizes a pod.
func randomApp(rng *rand.Rand, i int) *v1beta2.SparkApplication {
	app := &v1beta2.SparkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%d", i), Namespace: "ns", UID: "app-uid"},
		Spec: v1beta2.SparkApplicationSpec{
			Type:                pick(rng, v1beta2.SparkApplicationTypeScala, v1beta2.SparkApplicationTypeJava, v1beta2.SparkApplicationTypePython, v1beta2.SparkApplicationTypeR),
			Image:               ptr("spark:4.0.4"),
			MainClass:           ptr("Main"),
			MainApplicationFile: "local:///app",
			SparkConf:           map[string]string{},
		},
	}
	s := &app.Spec
	if rng.IntN(3) == 0 {
		s.MemoryOverheadFactor = ptr(pick(rng, "0.1", "0.25", "0.4", "1"))
	}
	for _, role := range []string{"driver", "executor"} {
		p := &s.Driver.SparkPodSpec
		if role == "executor" {
			p = &s.Executor.SparkPodSpec
		}
		p.Cores = maybe(rng, int32(1+rng.IntN(8)))
		p.CoreRequest = maybe(rng, pick(rng, "500m", "1", "1.5", "2"))
		p.CoreLimit = maybe(rng, pick(rng, "1", "2", "4000m"))
		p.Memory = maybe(rng, randomSize(rng))
		p.MemoryOverhead = maybe(rng, pick(rng, "100m", "512m", "1g", "384"))
		p.MemoryLimit = maybe(rng, pick(rng, "8Gi", "20Gi"))
		if rng.IntN(3) == 0 {
			p.GPU = &v1beta2.GPUSpec{Name: pick(rng, "nvidia.com/gpu", "amd.com/gpu"), Quantity: int64(rng.IntN(3))}
		}
		spark, k8s := "spark."+role+".", "spark.kubernetes."+role+"."
		for key, values := range map[string][]string{
			spark + "cores":                         {"1", "2", "3"},
			spark + "memory":                        {randomSize(rng)},
			spark + "memoryOverhead":                {"200m", "1g"},
			spark + "memoryOverheadFactor":          {"0.2", "0.5"},
			spark + "minMemoryOverhead":             {"100m", "1g", "500"},
			k8s + "request.cores":                   {"250m", "2"},
			k8s + "limit.cores":                     {"3", "1500m"},
			"spark.kubernetes.memoryOverheadFactor": {"0.15", "0.3"},
			"spark.executor.pyspark.memory":         {"512m", "1g"},
			"spark.memory.offHeap.enabled":          {"true", "false"},
			"spark.memory.offHeap.size":             {"1g", "268435456", "300m"},
			"spark.executor.instances":              {"0", "3", "7"},
		} {
			if rng.IntN(5) == 0 {
				s.SparkConf[key] = pick(rng, values...)
			}
		}
		if s.SparkConf["spark.memory.offHeap.enabled"] == "true" && s.SparkConf["spark.memory.offHeap.size"] == "" {
			s.SparkConf["spark.memory.offHeap.size"] = "1g"
		}
		if rng.IntN(4) == 0 {
			name := pick(rng, "gpu", "fpga")
			s.SparkConf[spark+"resource."+name+".amount"] = strconv.Itoa(1 + rng.IntN(2))
			s.SparkConf[spark+"resource."+name+".vendor"] = pick(rng, "nvidia.com", "example.com")
		}
		if rng.IntN(3) == 0 {
			ctr := corev1.Container{Name: pick(rng, "spark-kubernetes-"+role, "main"), Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1Gi"), corev1.ResourceCPU: resource.MustParse("7")},
				Limits:   corev1.ResourceList{"example.com/dongle": resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Ti")},
			}}
			p.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{ctr}}}
		}
		if rng.IntN(3) == 0 {
			p.Sidecars = []corev1.Container{{Name: "side", Image: "busybox", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			}}}
		}
		if rng.IntN(3) == 0 {
			p.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("30"), corev1.ResourceMemory: resource.MustParse("100Mi")},
			}}}
		}
	}
	s.Executor.Instances = maybe(rng, int32(rng.IntN(10)))
	if rng.IntN(3) == 0 {
		s.DynamicAllocation = &v1beta2.DynamicAllocation{
			Enabled: true, InitialExecutors: maybe(rng, int32(rng.IntN(6))), MinExecutors: maybe(rng, int32(rng.IntN(6))),
		}
	}
	if rng.IntN(2) == 0 {
		v1beta2.SetSparkApplicationDefaults(app)
	}
	return app
}

func ptr[T any](v T) *T { return &v }

// TestDemandFindsTheLegacyExecutorContainer: an executor template whose Spark container has the
// name old Spark versions gave it ("executor") gets Spark's sizes on that container, not on the
// first one, as the pods do (SparkContainerIndex).
func TestDemandFindsTheLegacyExecutorContainer(t *testing.T) {
	app := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: "ns"}}
	app.Spec.Executor.Instances = ptr(int32(1))
	app.Spec.Executor.Memory = ptr("1g")
	app.Spec.Executor.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "proxy", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("100Mi")}}},
		{Name: sparkpod.LegacyExecutorContainerName},
	}}}
	d, err := sparkpod.DemandOf(app)
	if err != nil {
		t.Fatal(err)
	}
	// 1g + the minimum overhead of 384Mi on the executor container, and the proxy's 100Mi limit
	// kept as its own (its request defaults from it).
	want := resource.MustParse("1508Mi")
	if got := d.Executor.Requests[corev1.ResourceMemory]; got.Cmp(want) != 0 {
		t.Errorf("executor memory request = %s, want %s", got.String(), want.String())
	}
	if got, want := d.Executor.Limits[corev1.ResourceMemory], resource.MustParse("1508Mi"); got.Cmp(want) != 0 {
		t.Errorf("executor memory limit = %s, want %s", got.String(), want.String())
	}
}

// BenchmarkDemandOf is the cost of one demand: the submission path, the quota webhook and (once
// per spec generation) the gang scheduler pay it. docs/benchmarks.md has the figures.
func BenchmarkDemandOf(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "examples", "spark-pi.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	app := &v1beta2.SparkApplication{}
	if err := yaml.Unmarshal(data, app); err != nil {
		b.Fatal(err)
	}
	app.Namespace = "ns"
	v1beta2.SetSparkApplicationDefaults(app)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sparkpod.DemandOf(app); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAddMembers: n members add n times their requests and n pod slots, a pods entry in the
// requests is not counted twice, and none add nothing.
func TestAddMembers(t *testing.T) {
	q := resource.MustParse
	for _, tc := range []struct {
		name     string
		into     corev1.ResourceList
		requests corev1.ResourceList
		n        int64
		want     corev1.ResourceList
	}{
		{"three into empty", corev1.ResourceList{}, corev1.ResourceList{corev1.ResourceCPU: q("500m"), corev1.ResourceMemory: q("1Gi")}, 3,
			corev1.ResourceList{corev1.ResourceCPU: q("1500m"), corev1.ResourceMemory: q("3Gi"), corev1.ResourcePods: q("3")}},
		{"onto what is there", corev1.ResourceList{corev1.ResourceCPU: q("1"), corev1.ResourcePods: q("2")}, corev1.ResourceList{corev1.ResourceCPU: q("2")}, 1,
			corev1.ResourceList{corev1.ResourceCPU: q("3"), corev1.ResourcePods: q("3")}},
		{"a pods entry in the requests", corev1.ResourceList{}, corev1.ResourceList{corev1.ResourceCPU: q("1"), corev1.ResourcePods: q("1")}, 2,
			corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourcePods: q("2")}},
		{"no requests", corev1.ResourceList{}, nil, 1, corev1.ResourceList{corev1.ResourcePods: q("1")}},
		{"none", corev1.ResourceList{corev1.ResourceCPU: q("1")}, corev1.ResourceList{corev1.ResourceCPU: q("2")}, 0,
			corev1.ResourceList{corev1.ResourceCPU: q("1")}},
		// Multiplied, not added once per member: 2³¹-1 members finish at once.
		{"the largest executor count", corev1.ResourceList{}, corev1.ResourceList{corev1.ResourceCPU: q("3"), corev1.ResourceMemory: q("2Mi")}, math.MaxInt32,
			corev1.ResourceList{corev1.ResourceCPU: q("6442450941"), corev1.ResourceMemory: q("4294967294Mi"), corev1.ResourcePods: q("2147483647")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sparkpod.AddMembers(tc.into, tc.requests, tc.n)
			if len(tc.into) != len(tc.want) {
				t.Fatalf("got %v, want %v", tc.into, tc.want)
			}
			for name, want := range tc.want {
				if got := tc.into[name]; got.Cmp(want) != 0 {
					t.Errorf("%s: %s, want %s", name, got.String(), want.String())
				}
			}
		})
	}
}
