/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkconf"
	"github.com/sparkop/spark-operator/sparkpod"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/submission/native"
	"github.com/sparkop/spark-operator/submission/sparksubmit"
	"github.com/sparkop/spark-operator/webhook/podmutator"
)

// TestThreePathsSamePod runs the same applications (our examples, the Kubeflow reference
// examples when present, and edge cases) through the three writers of pod settings and
// requires the same pod: the native submitter's driver; the pod the webhook makes of a driver
// built without any of the settings; and, for what a pod template carries, the spark-submit
// submitter's driver and executor templates. Each runs without a batch scheduler's decision and
// with one that sets every pod setting a scheduler can (decided), which must survive the
// webhook and be combined with the user's affinity (the precedence rule).
func TestThreePathsSamePod(t *testing.T) {
	apps := map[string]*v1beta2.SparkApplication{}
	for _, dir := range []string{filepath.Join("..", "examples"), filepath.Join("..", "..", "shared", "reference", "examples")} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			app := &v1beta2.SparkApplication{}
			if err := yaml.Unmarshal(data, app); err != nil || app.Kind != "SparkApplication" {
				continue
			}
			apps[filepath.Base(dir)+"/"+filepath.Base(f)] = app
		}
	}
	if len(apps) == 0 {
		t.Fatal("no examples found")
	}
	apps["edge: long names, every optional field"] = everyField()

	for name, app := range apps {
		for _, sched := range []struct {
			name string
			pods sparkpod.RoleScheduling
		}{{"no decision", sparkpod.RoleScheduling{}}, {"decided", decided}} {
			t.Run(name+"/"+sched.name, func(t *testing.T) { threePaths(t, app, sched.pods) })
		}
	}
}

// decided is a batch scheduler's decision that sets every pod setting a scheduler can.
var decided = sparkpod.RoleScheduling{
	Driver: sparkpod.Scheduling{
		SchedulerName: "batch", PriorityClassName: "batch-high",
		Labels: map[string]string{"queue": "q"}, Annotations: map[string]string{"group": "g"},
		NodeSelector: map[string]string{"pool": "gang", "zone": "planned"},
		NodeNames:    []string{"node-7"},
		Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: "kubernetes.io/hostname", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"noisy": "true"}},
		}}}},
		Tolerations:     []corev1.Toleration{{Key: "gang", Operator: corev1.TolerationOpExists}},
		SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: ptr("run-1")},
	},
	Executor: sparkpod.Scheduling{
		SchedulerName: "batch", NodeSelector: map[string]string{"pool": "gang"},
		SchedulingGates: []corev1.PodSchedulingGate{{Name: "gang"}},
	},
}

func threePaths(t *testing.T, app *v1beta2.SparkApplication, sched sparkpod.RoleScheduling) {
	app = app.DeepCopy()
	app.Namespace, app.UID = "ns", "app-uid"
	v1beta2.SetSparkApplicationDefaults(app)
	nat := nativeDriver(t, app, sched)
	holds(t, nat, app, sched.Driver)

	// The webhook's path: a driver carrying none of the settings, mutated.
	bare := nativeDriver(t, stripped(app), sched)
	if err := podmutator.Mutate(bare, app); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(effective(t, nat, app), effective(t, bare, app), unordered...); diff != "" {
		t.Errorf("the webhook's pod differs from the native submitter's (-native +webhook):\n%s", diff)
	}
	again := nat.DeepCopy()
	if err := podmutator.Mutate(again, app); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(nat, again); diff != "" {
		t.Errorf("the webhook changes the native submitter's pod (-native +mutated):\n%s", diff)
	}

	// The spark-submit path: its templates carry the same settings.
	driverTmpl, executorTmpl, err := sparksubmit.PodTemplates(app, sched)
	if err != nil {
		t.Fatal(err)
	}
	contained(t, "spark-submit driver template", driverTmpl, nat)
	objs := build(t, app, sched)
	execTmpl := &corev1.Pod{}
	if err := yaml.Unmarshal([]byte(objs.PodTemplate.Data["podspec-configmap-key"]), execTmpl); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(executorTmpl, execTmpl); diff != "" {
		t.Errorf("executor templates differ (-spark-submit +native):\n%s", diff)
	}
	for _, pod := range []*corev1.Pod{nat, driverTmpl, executorTmpl} {
		for _, v := range pod.Spec.Volumes {
			if errs := validation.IsDNS1123Label(v.Name); len(errs) > 0 {
				t.Errorf("volume name %q: %v", v.Name, errs)
			}
		}
	}
	execPod := executorTmpl.DeepCopy()
	if err := podmutator.Mutate(execPod, app); err != nil {
		t.Fatal(err)
	}
	holds(t, execPod, app, sched.Executor)
}

// holds fails unless pod carries the decision's settings and the spec's scheduling rules both:
// the decision's scheduler name, priority class and node selector entries; the spec's
// required affinity terms and the decision's planned node in every required term; every
// toleration of each.
func holds(t *testing.T, pod *corev1.Pod, app *v1beta2.SparkApplication, d sparkpod.Scheduling) {
	t.Helper()
	role := sparkpod.RoleDriver
	spec := &app.Spec.Driver.SparkPodSpec
	if pod.Labels[v1beta2.SparkRoleLabel] == v1beta2.SparkRoleExecutor || slices.ContainsFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == v1beta2.SparkExecutorContainerName }) {
		role, spec = sparkpod.RoleExecutor, &app.Spec.Executor.SparkPodSpec
	}
	if d.SchedulerName != "" && pod.Spec.SchedulerName != d.SchedulerName {
		t.Errorf("%s: scheduler %q, want the batch scheduler's %q", role, pod.Spec.SchedulerName, d.SchedulerName)
	}
	if d.PriorityClassName != "" && pod.Spec.PriorityClassName != d.PriorityClassName {
		t.Errorf("%s: priority class %q, want the batch scheduler's %q", role, pod.Spec.PriorityClassName, d.PriorityClassName)
	}
	for k, v := range d.NodeSelector {
		if pod.Spec.NodeSelector[k] != v {
			t.Errorf("%s: node selector %s=%q, want the batch scheduler's %q", role, k, pod.Spec.NodeSelector[k], v)
		}
	}
	for _, tol := range append(slices.Clone(spec.Tolerations), d.Tolerations...) {
		if !slices.ContainsFunc(pod.Spec.Tolerations, func(have corev1.Toleration) bool { return cmp.Equal(have, tol) }) {
			t.Errorf("%s: toleration %v is missing", role, tol)
		}
	}
	if d.SchedulingGroup != nil && !cmp.Equal(pod.Spec.SchedulingGroup, d.SchedulingGroup) {
		t.Errorf("%s: scheduling group %v, want %v", role, pod.Spec.SchedulingGroup, d.SchedulingGroup)
	}
	var terms []corev1.NodeSelectorTerm
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	}
	var userTerms []corev1.NodeSelectorTerm
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		userTerms = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	}
	if (len(userTerms) > 0 || len(d.NodeNames) > 0) && len(terms) == 0 {
		t.Errorf("%s: no required node affinity; want the user's and the planned node's", role)
	}
	for _, term := range terms {
		for _, req := range userTerms[:min(1, len(userTerms))] {
			for _, e := range req.MatchExpressions {
				if !slices.ContainsFunc(term.MatchExpressions, func(have corev1.NodeSelectorRequirement) bool { return cmp.Equal(have, e) }) {
					t.Errorf("%s: required term %v lost the user's requirement %v", role, term, e)
				}
			}
		}
		for _, node := range d.NodeNames[:min(1, len(d.NodeNames))] {
			if !slices.ContainsFunc(term.MatchFields, func(have corev1.NodeSelectorRequirement) bool {
				return have.Key == metav1.ObjectNameField && slices.Equal(have.Values, []string{node})
			}) {
				t.Errorf("%s: required term %v lost the planned node %s", role, term, node)
			}
		}
	}
	if d.Affinity != nil && d.Affinity.PodAntiAffinity != nil {
		for _, want := range d.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			if pod.Spec.Affinity == nil || pod.Spec.Affinity.PodAntiAffinity == nil ||
				!slices.ContainsFunc(pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, func(have corev1.PodAffinityTerm) bool { return cmp.Equal(have, want) }) {
				t.Errorf("%s: the batch scheduler's pod anti-affinity %v is missing", role, want)
			}
		}
	}
}

// effective is pod with its Spark container's env reduced to what applies (the last
// definition of each name), after checking that the user's env comes last, in order.
func effective(t *testing.T, pod *corev1.Pod, app *v1beta2.SparkApplication) *corev1.Pod {
	t.Helper()
	pod = pod.DeepCopy()
	c := &pod.Spec.Containers[sparkpod.SparkContainerIndex(pod, sparkpod.RoleDriver)]
	user := app.Spec.Driver.Env
	if n := len(c.Env) - len(user); n < 0 || !cmp.Equal(c.Env[n:], user, cmpopts.EquateEmpty()) {
		t.Errorf("pod %s: the user's env is not last: %v", pod.Name, c.Env)
	}
	var env []corev1.EnvVar
	for i, e := range c.Env {
		if !slices.ContainsFunc(c.Env[i+1:], func(later corev1.EnvVar) bool { return later.Name == e.Name }) {
			env = append(env, e)
		}
	}
	c.Env = env
	return pod
}

// unordered compares lists as sets, except env, whose order decides which value applies and
// is compared in order.
var unordered = []cmp.Option{
	cmpopts.SortSlices(func(a, b corev1.Volume) bool { return a.Name < b.Name }),
	cmpopts.SortSlices(func(a, b corev1.VolumeMount) bool { return a.Name+a.MountPath < b.Name+b.MountPath }),
	cmpopts.SortSlices(func(a, b corev1.ContainerPort) bool { return a.Name < b.Name }),
	cmpopts.SortSlices(func(a, b corev1.Toleration) bool { return a.Key < b.Key }),
	cmpopts.SortSlices(func(a, b corev1.Container) bool { return a.Name < b.Name }),
	cmpopts.EquateEmpty(),
}

func build(t *testing.T, app *v1beta2.SparkApplication, sched sparkpod.RoleScheduling) *native.Objects {
	t.Helper()
	objs, err := native.Build(app, submission.Attempt{SubmissionID: "s", DriverPodName: app.DriverPodName(), Scheduling: sched},
		native.Options{Master: "k8s://https://k8s:443", SparkUser: "spark"}, testIDs)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

var testIDs = native.IDs{AppID: "spark-1", ResourcePrefixID: "a1", ServiceID: "b2", ConfigMapID: "c3", LocalDirID: "d4", SubmitTime: time.Unix(0, 0)}

func nativeDriver(t *testing.T, app *v1beta2.SparkApplication, sched sparkpod.RoleScheduling) *corev1.Pod {
	return build(t, app, sched).Pod
}

// stripped is app without any setting that only a pod (template) can carry.
func stripped(app *v1beta2.SparkApplication) *v1beta2.SparkApplication {
	app = app.DeepCopy()
	app.Spec.SparkConfigMap = nil
	for _, r := range []sparkconf.Role{sparkconf.Driver, sparkconf.Executor} {
		inConf, _ := sparkconf.ConfVolumes(app, r)
		p := r.PodSpec(app)
		p.VolumeMounts = slices.DeleteFunc(p.VolumeMounts, func(m corev1.VolumeMount) bool { return !inConf[m.Name] })
		p.Env, p.EnvFrom, p.ConfigMaps, p.Sidecars, p.InitContainers, p.Ports = nil, nil, nil, nil, nil, nil
		p.Tolerations, p.Affinity, p.PodSecurityContext, p.SecurityContext, p.Lifecycle = nil, nil, nil, nil, nil
		p.HostNetwork, p.DNSConfig, p.HostAliases, p.PriorityClassName, p.SchedulerName = nil, nil, nil, nil, nil
		p.TerminationGracePeriodSeconds, p.ShareProcessNamespace, p.GPU, p.MemoryLimit = nil, nil, nil, nil
	}
	return app
}

// contained fails unless everything tmpl sets is on pod: Spark adds to a template, never
// removes from it.
func contained(t *testing.T, what string, tmpl, pod *corev1.Pod) {
	t.Helper()
	for _, v := range tmpl.Spec.Volumes {
		if !slices.ContainsFunc(pod.Spec.Volumes, func(have corev1.Volume) bool { return cmp.Equal(have, v) }) {
			t.Errorf("%s: volume %s is not on the pod", what, v.Name)
		}
	}
	for _, list := range [][2][]corev1.Container{{tmpl.Spec.Containers, pod.Spec.Containers}, {tmpl.Spec.InitContainers, pod.Spec.InitContainers}} {
		for _, c := range list[0] {
			i := slices.IndexFunc(list[1], func(have corev1.Container) bool { return have.Name == c.Name })
			if i < 0 {
				t.Errorf("%s: container %s is not on the pod", what, c.Name)
				continue
			}
			have := list[1][i]
			for _, m := range c.VolumeMounts {
				if !slices.ContainsFunc(have.VolumeMounts, func(h corev1.VolumeMount) bool { return cmp.Equal(h, m) }) {
					t.Errorf("%s: mount %s of container %s is not on the pod", what, m.MountPath, c.Name)
				}
			}
			for _, e := range c.Env {
				if !slices.ContainsFunc(have.Env, func(h corev1.EnvVar) bool { return cmp.Equal(h, e) }) {
					t.Errorf("%s: env %s of container %s is not on the pod", what, e.Name, c.Name)
				}
			}
			if !cmp.Equal(c.SecurityContext, have.SecurityContext) || !cmp.Equal(c.Lifecycle, have.Lifecycle) {
				t.Errorf("%s: container %s's security context or lifecycle differs", what, c.Name)
			}
		}
	}
	podLevel := func(p *corev1.Pod) corev1.PodSpec {
		return corev1.PodSpec{Affinity: p.Spec.Affinity, Tolerations: p.Spec.Tolerations, SecurityContext: p.Spec.SecurityContext,
			HostNetwork: p.Spec.HostNetwork, DNSPolicy: p.Spec.DNSPolicy, DNSConfig: p.Spec.DNSConfig, HostAliases: p.Spec.HostAliases,
			PriorityClassName: p.Spec.PriorityClassName, SchedulerName: p.Spec.SchedulerName,
			TerminationGracePeriodSeconds: p.Spec.TerminationGracePeriodSeconds, ShareProcessNamespace: p.Spec.ShareProcessNamespace}
	}
	if diff := cmp.Diff(podLevel(tmpl), podLevel(pod), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s: pod-level settings differ (-template +pod):\n%s", what, diff)
	}
	if diff := cmp.Diff(tmpl.OwnerReferences, pod.OwnerReferences); diff != "" {
		t.Errorf("%s: owner references differ (-template +pod):\n%s", what, diff)
	}
}

// everyField sets every optional setting of both roles, with names as long as Kubernetes
// allows.
func everyField() *v1beta2.SparkApplication {
	long := strings.Repeat("c", 60)
	app := &v1beta2.SparkApplication{
		TypeMeta:   metav1.TypeMeta{Kind: "SparkApplication"},
		ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("a", 63)},
		Spec: v1beta2.SparkApplicationSpec{
			Type: v1beta2.SparkApplicationTypePython, Image: ptr("spark:4"), MainApplicationFile: "local:///app.py",
			SparkConfigMap: ptr(long), HadoopConfigMap: ptr(long + "h"),
			NodeSelector: map[string]string{"zone": "a"},
			Volumes: []corev1.Volume{
				{Name: "shared", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: long}}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
			Monitoring: &v1beta2.MonitoringSpec{ExposeDriverMetrics: true, ExposeExecutorMetrics: true, MetricsProperties: ptr("x=y"),
				Prometheus: &v1beta2.PrometheusSpec{JmxExporterJar: "/jmx.jar"}},
		},
	}
	for _, p := range []*v1beta2.SparkPodSpec{&app.Spec.Driver.SparkPodSpec, &app.Spec.Executor.SparkPodSpec} {
		p.Env = []corev1.EnvVar{{Name: "SPARK_CONF_DIR", Value: "/mine"}, {Name: "REF", Value: "$(SPARK_USER)"}}
		p.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: long}}}}
		p.EnvVars = map[string]string{"OLD": "1"}
		p.EnvSecretKeyRefs = map[string]v1beta2.NameKey{"PW": {Name: long, Key: "k"}}
		// Spark names a Secret's volume <name>-volume, unshortened: longer names fail in Spark.
		p.Secrets = []v1beta2.SecretInfo{{Name: long[:56], Path: "/gcp", Type: v1beta2.SecretTypeGCPServiceAccount}}
		p.ConfigMaps = []v1beta2.NamePath{{Name: long, Path: "/etc/long"}}
		p.VolumeMounts = []corev1.VolumeMount{{Name: "shared", MountPath: "/shared"}, {Name: "cfg", MountPath: "/cfg"}, {Name: "scratch", MountPath: "/scratch"}}
		p.Sidecars = []corev1.Container{{Name: "side", Image: "busybox", VolumeMounts: []corev1.VolumeMount{{Name: "shared", MountPath: "/logs"}}}}
		p.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
		p.Tolerations = []corev1.Toleration{{Key: "t", Operator: corev1.TolerationOpExists}}
		p.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}}}},
		}}}
		p.PodSecurityContext = &corev1.PodSecurityContext{FSGroup: ptr(int64(185))}
		p.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr(int64(185))}
		p.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"stop"}}}}
		p.HostNetwork = ptr(true)
		p.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}}
		p.HostAliases = []corev1.HostAlias{{IP: "1.2.3.4", Hostnames: []string{"h"}}}
		p.PriorityClassName, p.SchedulerName = ptr("high"), ptr("mine")
		p.TerminationGracePeriodSeconds, p.ShareProcessNamespace = ptr(int64(5)), ptr(true)
		p.Ports = []v1beta2.Port{{Name: "extra", ContainerPort: 9000, Protocol: corev1.ProtocolTCP}}
		p.GPU = &v1beta2.GPUSpec{Name: "nvidia.com/gpu", Quantity: 1}
		p.MemoryLimit = ptr("8Gi")
		p.NodeSelector = map[string]string{"disk": "ssd"}
		p.Labels, p.Annotations = map[string]string{"l": "1"}, map[string]string{"a": "1"}
	}
	app.Spec.Driver.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "main", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}},
	}}}}
	return app
}
