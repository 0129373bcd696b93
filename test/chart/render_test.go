/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package chart

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/sparkop/spark-operator/webhook"
)

func TestLint(t *testing.T) {
	for _, set := range [][]string{nil, {"certManager.enable=true"}, {"spark.jobNamespaces={}", "webhook.enable=false"}} {
		args := append([]string{"lint", "--strict", chartDir}, setFlags(set)...)
		if out, err := helm(t, args...); err != nil {
			t.Errorf("helm lint with %v: %v\n%s", set, err, out)
		}
	}
}

// TestRender checks what each kind of values makes. Names follow <release>-spark-operator.
func TestRender(t *testing.T) {
	const (
		ns         = "ops"
		controller = "rel-spark-operator-controller"
		hook       = "rel-spark-operator-webhook"
		sparkSA    = "rel-spark-operator-spark"
	)
	tests := []struct {
		name  string
		set   []string
		check func(t *testing.T, objs []unstructured.Unstructured)
	}{
		{
			name: "defaults: job namespace default, webhook with its own certificates",
			check: func(t *testing.T, objs []unstructured.Unstructured) {
				args := containerArgs(t, find(objs, "Deployment", ns, controller))
				for _, want := range []string{"--enable-webhook=false", "--namespaces=default", "--leader-elect", "--leader-election-namespace=ops", "--submission-mode=native"} {
					if !slices.Contains(args, want) {
						t.Errorf("controller args %v lack %s", args, want)
					}
				}
				args = containerArgs(t, find(objs, "Deployment", ns, hook))
				for _, want := range []string{"--enable-controller=false", "--enable-webhook", "--webhook-cert-provider=self", "--webhook-secret-name=" + hook + "-certs"} {
					if !slices.Contains(args, want) {
						t.Errorf("webhook args %v lack %s", args, want)
					}
				}
				for _, rb := range []string{controller, hook} {
					if find(objs, "RoleBinding", "default", rb) == nil {
						t.Errorf("no RoleBinding %s in the job namespace", rb)
					}
				}
				if find(objs, "ServiceAccount", "default", sparkSA) == nil || find(objs, "RoleBinding", "default", sparkSA) == nil {
					t.Error("no driver service account and RoleBinding in the job namespace")
				}
				if find(objs, "Secret", ns, hook+"-certs") == nil {
					t.Error("no certificate Secret for the webhook to fill")
				}
				if n := kinds(objs); n["Certificate"] != 0 || n["ClusterRoleBinding"] != 2 {
					t.Errorf("kinds %v: want no Certificate, and only the ClusterRoleBindings of the webhook configurations and the CRDs' check", n)
				}
			},
		},
		{
			name: "spark-submit mode: the controller runs the image with Spark, the webhook the one without",
			set:  []string{"controller.submissionMode=spark-submit", "webhook.livenessProbe.timeoutSeconds=9"},
			check: func(t *testing.T, objs []unstructured.Unstructured) {
				hookContainer := container(t, find(objs, "Deployment", ns, hook))
				image, _ := hookContainer["image"].(string)
				if !strings.HasPrefix(image, "ghcr.io/sparkop/spark-operator:") || strings.HasSuffix(image, "-spark-submit") {
					t.Errorf("webhook image %s, want the chart's default", image)
				}
				if got := container(t, find(objs, "Deployment", ns, controller))["image"]; got != image+"-spark-submit" {
					t.Errorf("controller image %v, want %s-spark-submit", got, image)
				}
				if got, _, _ := unstructured.NestedFieldNoCopy(hookContainer, "livenessProbe", "timeoutSeconds"); fmt.Sprint(got) != "9" {
					t.Errorf("webhook liveness probe timeout %v, want the value's 9", got)
				}
				if got, _, _ := unstructured.NestedFieldNoCopy(hookContainer, "readinessProbe", "failureThreshold"); fmt.Sprint(got) != "3" {
					t.Errorf("webhook readiness probe failure threshold %v, want the default 3", got)
				}
			},
		},
		{
			name: "spark-submit mode with image.tag: the controller runs that tag",
			set:  []string{"controller.submissionMode=spark-submit", "image.tag=mine"},
			check: func(t *testing.T, objs []unstructured.Unstructured) {
				if got := container(t, find(objs, "Deployment", ns, controller))["image"]; got != "ghcr.io/sparkop/spark-operator:mine" {
					t.Errorf("controller image %v, want the tag mine", got)
				}
			},
		},
		{
			// The Kubeflow chart's values for batch schedulers, accepted as they are.
			name: "Kubeflow batch scheduler values: enable, kubeSchedulerNames, default",
			set: []string{"controller.batchScheduler.enable=true", "controller.batchScheduler.kubeSchedulerNames={kube-scheduler,scheduler-plugins-scheduler}",
				"controller.batchScheduler.default=kube-scheduler"},
			check: func(t *testing.T, objs []unstructured.Unstructured) {
				want := []string{"--enable-batch-scheduler", "--kube-scheduler-names=kube-scheduler,scheduler-plugins-scheduler",
					"--default-batch-scheduler=kube-scheduler", "--coscheduling-schedule-timeout=1m"}
				for _, d := range []string{controller, hook} {
					args := containerArgs(t, find(objs, "Deployment", ns, d))
					for _, w := range want {
						if !slices.Contains(args, w) {
							t.Errorf("%s args %v lack %s", d, args, w)
						}
					}
				}
				rules, _, _ := unstructured.NestedSlice(find(objs, "ClusterRole", "", controller).Object, "rules")
				if !slices.ContainsFunc(rules, func(r any) bool {
					groups, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "apiGroups")
					resources, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resources")
					return slices.Equal(groups, []string{"scheduling.x-k8s.io"}) && slices.Equal(resources, []string{"podgroups"})
				}) {
					t.Errorf("the controller may not create PodGroups: %v", rules)
				}
			},
		},
		{
			name: "cert-manager with a CA of the chart's",
			set:  []string{"certManager.enable=true"},
			check: func(t *testing.T, objs []unstructured.Unstructured) {
				if n := kinds(objs); n["Issuer"] != 2 || n["Certificate"] != 2 {
					t.Errorf("kinds %v: want a self-signed and a CA Issuer, a CA and a serving Certificate", n)
				}
				cert := find(objs, "Certificate", ns, hook)
				dns, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
				if !slices.Contains(dns, hook+".ops.svc") {
					t.Errorf("serving certificate names %v, not the Service", dns)
				}
				if secret, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName"); secret != hook+"-certs" {
					t.Errorf("certificate Secret %q", secret)
				}
				for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
					if got := find(objs, kind, "", hook).GetAnnotations()["cert-manager.io/inject-ca-from"]; got != "ops/"+hook {
						t.Errorf("%s inject-ca-from = %q", kind, got)
					}
				}
				args := containerArgs(t, find(objs, "Deployment", ns, hook))
				if !slices.Contains(args, "--webhook-cert-provider=external") || slices.Contains(args, "--webhook-secret-name="+hook+"-certs") {
					t.Errorf("webhook args %v: want the external provider", args)
				}
				if find(objs, "Secret", ns, hook+"-certs") != nil {
					t.Error("a Secret of the chart's where cert-manager writes its own")
				}
				if find(objs, "Role", ns, hook) != nil || find(objs, "ClusterRole", "", hook+"-configurations") != nil {
					t.Error("rights to write the Secret and the configurations, which cert-manager owns")
				}
			},
		},
		{
			name: "cert-manager with the user's issuer",
			set:  []string{"certManager.enable=true", "certManager.issuerRef.name=corp-ca", "certManager.issuerRef.kind=ClusterIssuer"},
			check: func(t *testing.T, objs []unstructured.Unstructured) {
				if n := kinds(objs); n["Issuer"] != 0 || n["Certificate"] != 1 {
					t.Errorf("kinds %v: want only the serving Certificate", n)
				}
				ref, _, _ := unstructured.NestedStringMap(find(objs, "Certificate", ns, hook).Object, "spec", "issuerRef")
				if diff := cmp.Diff(map[string]string{"name": "corp-ca", "kind": "ClusterIssuer"}, ref); diff != "" {
					t.Errorf("issuerRef (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "every namespace",
			set:  []string{"spark.jobNamespaces={}"},
			check: func(t *testing.T, objs []unstructured.Unstructured) {
				for _, d := range []string{controller, hook} {
					for _, a := range containerArgs(t, find(objs, "Deployment", ns, d)) {
						if strings.HasPrefix(a, "--namespaces") {
							t.Errorf("%s: %s, want every namespace", d, a)
						}
					}
					if find(objs, "ClusterRoleBinding", "", d) == nil {
						t.Errorf("no ClusterRoleBinding %s", d)
					}
				}
				if n := kinds(objs); n["RoleBinding"] != 2 || n["ServiceAccount"] != 2 {
					t.Errorf("kinds %v: want only the release namespace's RoleBindings and no driver service account", n)
				}
			},
		},
		{
			name: "several job namespaces",
			set:  []string{"spark.jobNamespaces={team-a,team-b}"},
			check: func(t *testing.T, objs []unstructured.Unstructured) {
				for _, jobNS := range []string{"team-a", "team-b"} {
					for _, rb := range []string{controller, hook, sparkSA} {
						if find(objs, "RoleBinding", jobNS, rb) == nil {
							t.Errorf("no RoleBinding %s in %s", rb, jobNS)
						}
					}
				}
			},
		},
		{
			name: "no webhook",
			set:  []string{"webhook.enable=false"},
			check: func(t *testing.T, objs []unstructured.Unstructured) {
				for _, o := range objs {
					if strings.HasPrefix(o.GetName(), hook) {
						t.Errorf("%s %s rendered with the webhook off", o.GetKind(), o.GetName())
					}
				}
				if find(objs, "Deployment", ns, controller) == nil {
					t.Error("no controller")
				}
			},
		},
		{
			name: "SparkConnect controller on by default",
			check: func(t *testing.T, objs []unstructured.Unstructured) {
				if !slices.Contains(containerArgs(t, find(objs, "Deployment", ns, controller)), "--enable-spark-connect=true") {
					t.Error("controller args lack --enable-spark-connect=true")
				}
				for _, role := range []string{controller, hook} {
					if !ruleNamesResource(find(objs, "ClusterRole", "", role), "sparkconnects") {
						t.Errorf("ClusterRole %s gives no rights on sparkconnects", role)
					}
				}
			},
		},
		{
			name: "SparkConnect controller off",
			set:  []string{"controller.sparkConnect.enable=false"},
			check: func(t *testing.T, objs []unstructured.Unstructured) {
				if !slices.Contains(containerArgs(t, find(objs, "Deployment", ns, controller)), "--enable-spark-connect=false") {
					t.Error("controller args lack --enable-spark-connect=false")
				}
				if ruleNamesResource(find(objs, "ClusterRole", "", controller), "sparkconnects") {
					t.Error("the controller keeps rights on sparkconnects with its SparkConnect controller off")
				}
			},
		},
		{
			// The kubernetes scheduler runs on the gang scheduler's core: its flags and RBAC come
			// with it, gang itself stays off, and it may create Workloads and PodGroups.
			name: "the kubernetes batch scheduler alone",
			set:  []string{"controller.batchScheduler.kubernetes.enable=true"},
			check: func(t *testing.T, objs []unstructured.Unstructured) {
				for _, d := range []string{controller, hook} {
					args := containerArgs(t, find(objs, "Deployment", ns, d))
					if !slices.Contains(args, "--enable-kubernetes-scheduler") || !slices.Contains(args, "--gang-reservation-timeout=5m") {
						t.Errorf("%s args %v lack the kubernetes scheduler and the gang core's settings", d, args)
					}
					if slices.Contains(args, "--enable-gang-scheduler") {
						t.Errorf("%s args %v enable gang, which was not asked for", d, args)
					}
				}
				role := find(objs, "ClusterRole", "", controller+"-gang")
				for _, r := range []string{"pods", "queues", "workloads", "podgroups"} {
					if !ruleNamesResource(role, r) {
						t.Errorf("the gang ClusterRole has no rule on %s", r)
					}
				}
			},
		},
		{
			name: "UI ingress and a default batch scheduler",
			set:  []string{"controller.uiIngress.enable=true", "literal:controller.uiIngress.urlFormat={{$appName}}.spark.example.com", "controller.batchScheduler.default=volcano", "controller.replicas=2", "controller.leaderElection.enable=false"},
			check: func(t *testing.T, objs []unstructured.Unstructured) {
				args := containerArgs(t, find(objs, "Deployment", ns, controller))
				for _, want := range []string{"--ingress-url-format={{$appName}}.spark.example.com", "--default-batch-scheduler=volcano", "--leader-elect"} {
					if !slices.Contains(args, want) {
						t.Errorf("controller args %v lack %s", args, want)
					}
				}
			},
		},
		{
			name: "an external scheduler",
			set:  []string{"controller.batchScheduler.gang.enable=true", "controller.batchScheduler.external.url=https://sched.example:8443/", "controller.batchScheduler.external.timeout=2s"},
			check: func(t *testing.T, objs []unstructured.Unstructured) {
				for _, name := range []string{controller, hook} {
					args := containerArgs(t, find(objs, "Deployment", ns, name))
					for _, want := range []string{"--enable-gang-scheduler", "--external-scheduler-url=https://sched.example:8443/", "--external-scheduler-timeout=2s", "--external-scheduler-interval=5s"} {
						if !slices.Contains(args, want) {
							t.Errorf("%s args %v lack %s", name, args, want)
						}
					}
				}
			},
		},
		{
			name: "gang scheduler: placeholders by default, advisory by value",
			set:  []string{"controller.batchScheduler.gang.enable=true"},
			check: func(t *testing.T, objs []unstructured.Unstructured) {
				args := containerArgs(t, find(objs, "Deployment", ns, controller))
				if !slices.Contains(args, "--gang-enforcement=placeholders") {
					t.Errorf("controller args %v lack --gang-enforcement=placeholders", args)
				}
				// The operator paces by the enforcement's own default.
				if i := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, "--gang-start-backlog") }); i >= 0 {
					t.Errorf("controller args %v set %s, overriding the operator's default for placeholders", args, args[i])
				}
				role := find(objs, "ClusterRole", "", controller+"-gang")
				if role == nil {
					t.Fatal("no gang ClusterRole")
				}
				rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
				verbs := map[string][]string{} // resource → verbs
				for _, r := range rules {
					res, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resources")
					vs, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "verbs")
					for _, name := range res {
						verbs[name] = append(verbs[name], vs...)
					}
				}
				for resource, verb := range map[string]string{"reservations": "create", "reservations/status": "patch",
					"pods/status": "patch", "priorityclasses": "create"} {
					if !slices.Contains(verbs[resource], verb) {
						t.Errorf("the gang ClusterRole lets %s %v, not %s", resource, verbs[resource], verb)
					}
				}
			},
		},
		{
			name: "gang scheduler, advisory",
			set: []string{"controller.batchScheduler.gang.enable=true", "controller.batchScheduler.gang.enforcement=advisory",
				"controller.batchScheduler.gang.startBacklog=0"},
			check: func(t *testing.T, objs []unstructured.Unstructured) {
				args := containerArgs(t, find(objs, "Deployment", ns, controller))
				for _, want := range []string{"--gang-enforcement=advisory", "--gang-start-backlog=0"} {
					if !slices.Contains(args, want) {
						t.Errorf("controller args %v lack %s", args, want)
					}
				}
				if find(objs, "Deployment", ns, "rel-spark-operator-spark-scheduler") != nil {
					t.Error("spark-scheduler deployed though sparkScheduler.enable is false")
				}
			},
		},
		{
			name: "gang scheduler, plugin, with spark-scheduler",
			set: []string{"controller.batchScheduler.gang.enable=true", "controller.batchScheduler.gang.enforcement=plugin",
				"controller.batchScheduler.gang.reservationTimeout=3m", "sparkScheduler.enable=true"},
			check: func(t *testing.T, objs []unstructured.Unstructured) {
				const sched = "rel-spark-operator-spark-scheduler"
				if args := containerArgs(t, find(objs, "Deployment", ns, controller)); !slices.Contains(args, "--gang-enforcement=plugin") {
					t.Errorf("controller args %v lack --gang-enforcement=plugin", args)
				}
				d := find(objs, "Deployment", ns, sched)
				if d == nil {
					t.Fatal("no spark-scheduler Deployment")
				}
				if args := containerArgs(t, d); !slices.Contains(args, "--config=/etc/spark-scheduler/config.yaml") {
					t.Errorf("spark-scheduler args %v lack its configuration", args)
				}
				config, _, _ := unstructured.NestedString(find(objs, "ConfigMap", ns, sched).Object, "data", "config.yaml")
				for _, want := range []string{"schedulerName: spark-scheduler", "- name: SparkReservations", "reservationTimeout: 3m", "resourceName: " + sched} {
					if !strings.Contains(config, want) {
						t.Errorf("spark-scheduler's configuration lacks %q:\n%s", want, config)
					}
				}
				rules, _, _ := unstructured.NestedSlice(find(objs, "ClusterRole", "", sched).Object, "rules")
				may := func(resource, verb string) bool {
					return slices.ContainsFunc(rules, func(r any) bool {
						resources, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resources")
						verbs, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "verbs")
						return slices.Contains(resources, resource) && slices.Contains(verbs, verb)
					})
				}
				if !may("reservations", "watch") || !may("reservations/status", "patch") {
					t.Errorf("spark-scheduler may not watch Reservations and say they are held: %v", rules)
				}
				for _, role := range []string{"kube-scheduler", "volume-scheduler"} {
					if find(objs, "ClusterRoleBinding", "", sched+"-"+role) == nil {
						t.Errorf("spark-scheduler is not bound to system:%s", role)
					}
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := render(t, ns, tt.set...)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, objs)
		})
	}
}

// TestRenderRefusesBadValues: a misspelt value fails the install with a message naming it.
func TestRenderRefusesBadValues(t *testing.T) {
	tests := []struct {
		set  []string
		want string
	}{
		{[]string{"webhook.failurePolicy=Maybe"}, "/webhook/failurePolicy"},
		{[]string{"controller.submissionMode=jvm"}, "/controller/submissionMode"},
		{[]string{"controller.livenessProbe.timeout=5"}, "/controller/livenessProbe"},
		{[]string{"webhook.timeoutSeconds=60"}, "/webhook/timeoutSeconds"},
		{[]string{"spark.jobNamespaces={Team_A}"}, "/spark/jobNamespaces/0"},
		{[]string{"controller.driverPodGracePeriod=soon"}, "/controller/driverPodGracePeriod"},
		{[]string{"controller.uiIngress.enable=true"}, "controller.uiIngress.urlFormat is required"},
		{[]string{"controller.batchScheduler.external.url=my-scheduler:8090"}, "/controller/batchScheduler/external/url"},
		{[]string{"controller.batchScheduler.external.url=http://my-scheduler:8090/"}, "needs controller.batchScheduler.gang.enable"},
		{[]string{"controller.batchScheduler.kubeSchedulerNames={Kube_Scheduler}"}, "/controller/batchScheduler/kubeSchedulerNames/0"},
		{[]string{"controller.batchScheduler.gang.enforcement=strict"}, "/controller/batchScheduler/gang/enforcement"},
	}
	for _, tt := range tests {
		_, err := render(t, "ops", tt.set...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("values %v: %v, want an error naming %s", tt.set, err, tt.want)
		}
	}
}

// TestRenderedConfigurationsMatchTheWebhook: the configurations the chart installs are those the
// webhook would register itself with the arguments the chart gives it, so that the webhook
// keeping its own (certificates by the webhook) never fights the chart over them.
func TestRenderedConfigurationsMatchTheWebhook(t *testing.T) {
	for _, set := range [][]string{
		nil,
		{"spark.jobNamespaces={}"},
		{"spark.jobNamespaces={a,b}", "webhook.failurePolicy=Ignore", "webhook.timeoutSeconds=5", "webhook.port=8443"},
	} {
		objs, err := render(t, "ops", set...)
		if err != nil {
			t.Fatal(err)
		}
		opts := webhookOptionsFromArgs(t, containerArgs(t, find(objs, "Deployment", "ops", "rel-spark-operator-webhook")))
		wantM, wantV := webhook.Configurations(opts, nil)
		var gotM admissionregistrationv1.MutatingWebhookConfiguration
		var gotV admissionregistrationv1.ValidatingWebhookConfiguration
		fromUnstructured(t, find(objs, "MutatingWebhookConfiguration", "", opts.ConfigName), &gotM)
		fromUnstructured(t, find(objs, "ValidatingWebhookConfiguration", "", opts.ConfigName), &gotV)
		if diff := cmp.Diff(wantM.Webhooks, gotM.Webhooks); diff != "" {
			t.Errorf("values %v: mutating webhooks (-webhook +chart):\n%s", set, diff)
		}
		if diff := cmp.Diff(wantV.Webhooks, gotV.Webhooks); diff != "" {
			t.Errorf("values %v: validating webhooks (-webhook +chart):\n%s", set, diff)
		}
		for k, v := range wantM.Labels {
			if gotM.Labels[k] != v || gotV.Labels[k] != v {
				t.Errorf("values %v: the chart's configurations lack the label %s=%s the webhook sets", set, k, v)
			}
		}
	}
}

func fromUnstructured(t *testing.T, u *unstructured.Unstructured, obj any) {
	t.Helper()
	if u == nil {
		t.Fatal("not rendered")
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, obj, true); err != nil {
		t.Fatal(err)
	}
}

// webhookOptionsFromArgs reads the webhook flags the configurations depend on, as the
// operator's own flag parsing does (cmd/spark-operator/options.go).
func webhookOptionsFromArgs(t *testing.T, args []string) webhook.Options {
	t.Helper()
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o webhook.Options
	var policy, namespaces string
	var timeout int
	fs.IntVar(&o.Port, "webhook-port", webhook.DefaultPort, "")
	fs.StringVar(&o.ServiceName, "webhook-service-name", "", "")
	fs.StringVar(&o.ServiceNamespace, "webhook-service-namespace", "", "")
	fs.StringVar(&o.ConfigName, "webhook-config-name", "", "")
	fs.StringVar(&policy, "webhook-failure-policy", "", "")
	fs.IntVar(&timeout, "webhook-timeout-seconds", 0, "")
	fs.StringVar(&namespaces, "namespaces", "", "")
	var known []string
	for _, a := range args {
		name := strings.SplitN(strings.TrimLeft(a, "-"), "=", 2)[0]
		if fs.Lookup(name) != nil {
			known = append(known, a)
		}
	}
	if err := fs.Parse(known); err != nil {
		t.Fatal(err)
	}
	o.FailurePolicy = admissionregistrationv1.FailurePolicyType(policy)
	o.TimeoutSeconds = int32(timeout)
	if namespaces != "" {
		o.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: strings.Split(namespaces, ","),
		}}}
	}
	return o
}

// ruleNamesResource tells whether a rule of role covers resource.
func ruleNamesResource(role *unstructured.Unstructured, resource string) bool {
	if role == nil {
		return false
	}
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	for _, r := range rules {
		resources, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resources")
		if slices.Contains(resources, resource) {
			return true
		}
	}
	return false
}
