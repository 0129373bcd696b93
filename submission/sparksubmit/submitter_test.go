/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparksubmit

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/test/cluster"
)

// sparkHome installs (once) and returns the Spark distribution the tests run.
func sparkHome(t *testing.T) string {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(root, "hack", "install-spark.sh")).Output()
	if err != nil {
		t.Fatalf("hack/install-spark.sh: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// createExample creates examples/<file> in namespace ns, so that it has a UID, and returns it
// defaulted, as the controller would hand it to a submitter.
func createExample(t *testing.T, c client.Client, ns, file string) *v1beta2.SparkApplication {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "examples", file))
	if err != nil {
		t.Fatal(err)
	}
	app := &v1beta2.SparkApplication{}
	if err := yaml.UnmarshalStrict(data, app); err != nil {
		t.Fatalf("decoding %s: %v", file, err)
	}
	app.Namespace = ns
	if err := c.Create(context.Background(), app); err != nil {
		t.Fatalf("creating %s: %v", file, err)
	}
	v1beta2.SetSparkApplicationDefaults(app)
	return app
}

func TestSubmitSparkPi(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real spark-submit")
	}
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "sparksubmit")
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "spark-operator-spark"}}); err != nil {
		t.Fatal(err)
	}
	app := createExample(t, c, ns, "spark-pi.yaml")
	tmp := t.TempDir()
	s := &Submitter{SparkHome: sparkHome(t), Kubeconfig: cluster.Kubeconfig(t), Client: c, TempDir: tmp}
	attempt := submission.Attempt{SubmissionID: "11111111-aaaa-4bbb-8ccc-000000000001", DriverPodName: app.DriverPodName()}

	res, err := s.Submit(ctx, app, attempt)
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("per-submission directory not removed: %d entries left in %s", len(left), tmp)
	}
	pod := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: attempt.DriverPodName}, pod); err != nil {
		t.Fatalf("driver pod: %v", err)
	}
	if !strings.HasPrefix(res.SparkApplicationID, "spark-") || res.DriverPodName != pod.Name {
		t.Errorf("Submit result = %+v, want spark-<id> and pod %s", res, pod.Name)
	}
	wantLabels := map[string]string{
		v1beta2.LabelAppName:            app.Name,
		v1beta2.LabelLaunchedByOperator: "true",
		v1beta2.LabelSubmissionID:       attempt.SubmissionID,
		v1beta2.SparkRoleLabel:          v1beta2.SparkRoleDriver,
		v1beta2.SparkAppSelectorLabel:   res.SparkApplicationID,
		"app.kubernetes.io/part-of":     "spark-pi-demo",
	}
	gotLabels := map[string]string{}
	for k := range wantLabels {
		if v, ok := pod.Labels[k]; ok {
			gotLabels[k] = v
		}
	}
	if diff := cmp.Diff(wantLabels, gotLabels); diff != "" {
		t.Errorf("driver labels (-want +got):\n%s", diff)
	}
	wantOwners := []metav1.OwnerReference{{
		APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication", Name: app.Name, UID: app.UID, Controller: ptr(true), BlockOwnerDeletion: ptr(true),
	}}
	if diff := cmp.Diff(wantOwners, pod.OwnerReferences); diff != "" {
		t.Errorf("driver ownerReferences (-want +got):\n%s", diff)
	}
	if got := pod.Spec.ServiceAccountName; got != "spark-operator-spark" {
		t.Errorf("driver service account = %q", got)
	}
	if sc := pod.Spec.Containers[0].SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 185 {
		t.Errorf("driver container security context from the template lost: %+v", sc)
	}

	// Spark makes the driver own its ConfigMap and headless Service.
	owned := func(o metav1.Object) bool {
		for _, r := range o.GetOwnerReferences() {
			if r.Kind == "Pod" && r.UID == pod.UID {
				return true
			}
		}
		return false
	}
	var cms corev1.ConfigMapList
	var svcs corev1.ServiceList
	if err := c.List(ctx, &cms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, &svcs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var ownedCMs []client.Object
	var confCM bool
	for i := range cms.Items {
		if owned(&cms.Items[i]) {
			ownedCMs = append(ownedCMs, &cms.Items[i])
			_, ok := cms.Items[i].Data["spark.properties"]
			confCM = confCM || ok
		}
	}
	var svc *corev1.Service
	for i := range svcs.Items {
		if owned(&svcs.Items[i]) {
			svc = &svcs.Items[i]
		}
	}
	if !confCM {
		t.Errorf("no ConfigMap with spark.properties owned by the driver pod among %d owned", len(ownedCMs))
	}
	if svc == nil {
		t.Error("no Service owned by the driver pod")
	} else if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("driver Service is not headless: clusterIP %q", svc.Spec.ClusterIP)
	}
	dumpObjects(t, append([]client.Object{pod, svc}, ownedCMs...)...)

	// The same attempt again finds its driver instead of creating another.
	again, err := s.Submit(ctx, app, attempt)
	if err != nil || again != res {
		t.Errorf("second Submit = %+v, %v; want %+v, nil", again, err, res)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{v1beta2.SparkRoleLabel: v1beta2.SparkRoleDriver}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 {
		t.Errorf("%d driver pods after resubmitting the same attempt, want 1", len(pods.Items))
	}

	// Another attempt must not run while the old driver is there.
	other := submission.Attempt{SubmissionID: "11111111-aaaa-4bbb-8ccc-000000000002", DriverPodName: attempt.DriverPodName}
	if _, err := s.Submit(ctx, app, other); err == nil || !strings.Contains(err.Error(), attempt.SubmissionID) {
		t.Errorf("Submit of another attempt while the driver exists: err = %v, want one naming the existing submission", err)
	}

	// The owner reference makes the garbage collector remove the driver with the application.
	if err := c.Delete(ctx, app, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 60*time.Second, "driver pod garbage-collected", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

func TestSubmitRejected(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real spark-submit")
	}
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "sparksubmit-rejected")
	// No service account "spark-operator-spark" in this namespace: the API server's
	// ServiceAccount admission rejects the driver pod, a fast and deterministic failure.
	app := createExample(t, c, ns, "spark-pi.yaml")
	s := &Submitter{SparkHome: sparkHome(t), Kubeconfig: cluster.Kubeconfig(t), Client: c}
	attempt := submission.Attempt{SubmissionID: "22222222-aaaa-4bbb-8ccc-000000000001", DriverPodName: app.DriverPodName()}

	start := time.Now()
	_, err := s.Submit(ctx, app, attempt)
	var subErr *submission.Error
	if !errors.As(err, &subErr) {
		t.Fatalf("Submit error = %v (%T), want *submission.Error", err, err)
	}
	t.Logf("after %s: %s", time.Since(start).Round(time.Millisecond), subErr.Message)
	if !strings.Contains(subErr.Message, "spark-operator-spark") || strings.Contains(subErr.Message, "\tat ") || len(subErr.Message) > maxMessage+10 {
		t.Errorf("message is not a readable summary naming the missing service account:\n%s", subErr.Message)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 {
		t.Errorf("%d pods left after a rejected submission", len(pods.Items))
	}
}

// dumpObjects writes what spark-submit created to $SPARKSUBMIT_DUMP (when set), for those
// reproducing it natively.
func dumpObjects(t *testing.T, objs ...client.Object) {
	t.Helper()
	dest := os.Getenv("SPARKSUBMIT_DUMP")
	if dest == "" {
		return
	}
	var docs []string
	for _, o := range objs {
		if o == nil {
			continue
		}
		o.SetManagedFields(nil)
		gvk, _, err := cluster.Scheme.ObjectKinds(o)
		if err == nil && len(gvk) > 0 {
			o.GetObjectKind().SetGroupVersionKind(gvk[0])
		}
		data, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(data))
	}
	if err := os.WriteFile(dest, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}
