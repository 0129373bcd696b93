/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package chart

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const kubeflowValues = "file:" + chartDir + "/ci/kubeflow-values.yaml"

// TestRenderKubeflowValues: a values file written for the Kubeflow chart v2.x renders what it
// asks for: its renamed keys and level names become the operator's flags, and the keys this
// chart gained from it (volumes, envFrom, sidecars, topology spread, pprof, UI Ingress TLS and
// annotations, RBAC and Deployment annotations) reach the objects.
func TestRenderKubeflowValues(t *testing.T) {
	objs, err := render(t, "ops", kubeflowValues)
	if err != nil {
		t.Fatal(err)
	}
	var ctl, hook appsv1.Deployment
	fromUnstructured(t, find(objs, "Deployment", "ops", "rel-spark-operator-controller"), &ctl)
	fromUnstructured(t, find(objs, "Deployment", "ops", "rel-spark-operator-webhook"), &hook)

	for _, c := range []struct {
		d    *appsv1.Deployment
		want []string
	}{
		{&ctl, []string{"--zap-log-level=info", "--controller-workers=8", "--driver-pod-grace-period=15s", "--max-tracked-executors=500",
			"--kube-api-qps=200", "--kube-api-burst=400", "--pprof-bind-address=:6060", "--ingress-url-format={{$appName}}.ui.example.com",
			`--ingress-tls=[{"hosts":["*.ui.example.com"],"secretName":"spark-ui-tls"}]`, `--ingress-annotations={"example.com/owner":"data-platform"}`,
			"--workqueue-ratelimiter-bucket-qps=50", "--workqueue-ratelimiter-bucket-size=500", "--workqueue-ratelimiter-max-delay=6h",
			"--feature-gates=PartialRestart=false"}},
		{&hook, []string{"--zap-log-level=debug", "--kube-api-qps=100", "--kube-api-burst=200"}},
	} {
		args := c.d.Spec.Template.Spec.Containers[0].Args
		for _, w := range c.want {
			if !slices.Contains(args, w) {
				t.Errorf("%s args %v lack %s", c.d.Name, args, w)
			}
		}
	}

	if *ctl.Spec.RevisionHistoryLimit != 5 || ctl.Annotations["example.com/owner"] != "data-platform" {
		t.Errorf("controller Deployment: revisionHistoryLimit %d, annotations %v", *ctl.Spec.RevisionHistoryLimit, ctl.Annotations)
	}
	pod := ctl.Spec.Template
	if pod.Labels["example.com/team"] != "data-platform" || pod.Annotations["example.com/rollout"] != "1" {
		t.Errorf("controller pod labels %v, annotations %v", pod.Labels, pod.Annotations)
	}
	if n := len(pod.Spec.TopologySpreadConstraints); n != 1 || *pod.Spec.SecurityContext.FSGroup != 185 {
		t.Errorf("controller pod: %d topology spread constraints, security context %+v", n, pod.Spec.SecurityContext)
	}
	names := func(cs []corev1.Container) []string {
		var n []string
		for _, c := range cs {
			n = append(n, c.Name)
		}
		return n
	}
	if diff := cmp.Diff([]string{"spark-operator-controller", "sidecar"}, names(pod.Spec.Containers)); diff != "" {
		t.Errorf("controller containers (-want +got):\n%s", diff)
	}
	op := pod.Spec.Containers[0]
	if len(op.EnvFrom) != 1 || op.EnvFrom[0].ConfigMapRef.Name != "spark-operator-env" {
		t.Errorf("controller envFrom %+v", op.EnvFrom)
	}
	if !slices.ContainsFunc(op.Ports, func(p corev1.ContainerPort) bool { return p.Name == "pprof" && p.ContainerPort == 6060 }) {
		t.Errorf("controller ports %+v lack pprof", op.Ports)
	}
	// Kubeflow's own tmp volume and mount replace the chart's: one of each.
	wantTmp := []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptrQuantity("1Gi")}}}}
	if diff := cmp.Diff(wantTmp, pod.Spec.Volumes); diff != "" {
		t.Errorf("controller volumes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}}, op.VolumeMounts); diff != "" {
		t.Errorf("controller mounts (-want +got):\n%s", diff)
	}
	// The webhook keeps its certificate volume beside Kubeflow's.
	var vols []string
	for _, v := range hook.Spec.Template.Spec.Volumes {
		vols = append(vols, v.Name)
	}
	if diff := cmp.Diff([]string{"serving-certs", "certs"}, vols); diff != "" {
		t.Errorf("webhook volumes (-want +got):\n%s", diff)
	}

	if a := find(objs, "ClusterRole", "", "rel-spark-operator-controller").GetAnnotations(); a["example.com/team"] != "data-platform" {
		t.Errorf("controller ClusterRole annotations %v", a)
	}
	sa := find(objs, "ServiceAccount", "ops", "rel-spark-operator-controller")
	if sa.GetAnnotations()["example.com/team"] != "data-platform" || sa.Object["automountServiceAccountToken"] != true {
		t.Errorf("controller ServiceAccount %v", sa.Object)
	}
}

func ptrQuantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// TestRenderOperatorPDB: podDisruptionBudget (a Kubeflow key) makes a budget for the Deployment.
func TestRenderOperatorPDB(t *testing.T) {
	objs, err := render(t, "ops", "controller.replicas=2", "controller.podDisruptionBudget.enable=true", "controller.podDisruptionBudget.minAvailable=1")
	if err != nil {
		t.Fatal(err)
	}
	pdb := find(objs, "PodDisruptionBudget", "ops", "rel-spark-operator-controller")
	if pdb == nil {
		t.Fatal("no PodDisruptionBudget for the controller")
	}
	sel, _, _ := unstructured.NestedStringMap(pdb.Object, "spec", "selector", "matchLabels")
	if sel["app.kubernetes.io/component"] != "controller" {
		t.Errorf("budget selects %v", sel)
	}
}

// TestRenderKubeflowOperatorFlags: Kubeflow's logEncoder, featureGates and
// defaultTimeToLiveSeconds, and labelSelectorFilter, become the operator's flags of the same
// names.
func TestRenderKubeflowOperatorFlags(t *testing.T) {
	objs, err := render(t, "ops", "controller.logEncoder=json", "webhook.logEncoder=json",
		"controller.featureGates[0].name=DefaultTimeToLive", "controller.featureGates[0].enabled=true",
		"controller.defaultTimeToLiveSeconds=600", "controller.labelSelectorFilter=team")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{
		"rel-spark-operator-controller": {"--zap-encoder=json", "--feature-gates=DefaultTimeToLive=true", "--default-time-to-live-seconds=600",
			"--label-selector-filter=team"},
		"rel-spark-operator-webhook": {"--zap-encoder=json"},
	} {
		var d appsv1.Deployment
		fromUnstructured(t, find(objs, "Deployment", "ops", name), &d)
		args := d.Spec.Template.Spec.Containers[0].Args
		for _, w := range want {
			if !slices.Contains(args, w) {
				t.Errorf("%s args %v lack %s", name, args, w)
			}
		}
	}
}

// TestRenderRefusesWhatNeitherChartHas: a key neither this chart nor Kubeflow's has fails the
// install naming it, and so do Kubeflow values this chart cannot honour, saying what to do.
func TestRenderRefusesWhatNeitherChartHas(t *testing.T) {
	for _, tt := range []struct {
		set  []string
		want string
	}{
		{[]string{"controller.workerz=3"}, "additional properties 'workerz' not allowed"},
		{[]string{"sparkk.jobNamespaces={a}"}, "additional properties 'sparkk' not allowed"},
		{[]string{"webhook.podDisruptionBudget.maxUnavailable=1"}, "additional properties 'maxUnavailable' not allowed"},
		{[]string{"controller.logLevel=loud"}, "/controller/logLevel"},
		{[]string{"controller.logEncoder=text"}, "/controller/logEncoder"},
		{[]string{"hook.upgradeCrd=true"}, "helm show crds charts/spark-operator | kubectl apply --server-side --force-conflicts -f -"},
		{[]string{"controller.featureGates[0].name=PartialRestart", "controller.featureGates[0].enabled=true"}, "controller.featureGates: PartialRestart"},
		{[]string{"spark.jobNamespaceSelector=spark=on"}, "spark.jobNamespaceSelector"},
		{[]string{"controller.podDisruptionBudget.enable=true"}, "controller.podDisruptionBudget.enable needs controller.replicas > 1"},
	} {
		_, err := render(t, "ops", tt.set...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("values %v: %v, want an error naming %s", tt.set, err, tt.want)
		}
	}
}
