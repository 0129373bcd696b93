/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package crdcheck

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/test/testenv"
)

var kinds = []Kind{SparkApplication, ScheduledSparkApplication, SparkConnect}

func loadCRD(t *testing.T, path string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(b, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

func crdFile(dir string, k Kind) string {
	group, _ := strings.CutPrefix(k.CRD, strings.Split(k.CRD, ".")[0]+".")
	return filepath.Join(dir, group+"_"+strings.Split(k.CRD, ".")[0]+".yaml")
}

// TestOurCRDsHoldTheStatus: the generated CRDs have every status field of the API types.
func TestOurCRDsHoldTheStatus(t *testing.T) {
	for _, k := range kinds {
		missing, err := Missing(loadCRD(t, crdFile("../../charts/spark-operator/crds", k)), k)
		if err != nil || len(missing) > 0 {
			t.Errorf("%s: missing %v, %v", k.CRD, missing, err)
		}
	}
}

// kubeflowCRDs is the folder of the Kubeflow operator's CRDs beside the repository.
func kubeflowCRDs(t *testing.T) string {
	dir := os.Getenv("SPARKOP_SHARED")
	if dir == "" {
		dir = "../../../shared"
	}
	dir = filepath.Join(dir, "reference", "crds")
	if _, err := os.Stat(dir); err != nil {
		testenv.Missing(t, "the Kubeflow reference CRDs are not at %s (SPARKOP_SHARED overrides ../shared)", dir)
	}
	return dir
}

// TestKubeflowCRDsLackTheStatus: the Kubeflow operator's CRDs lack what the operator writes.
func TestKubeflowCRDsLackTheStatus(t *testing.T) {
	dir := kubeflowCRDs(t)
	want := map[string][]string{
		SparkApplication.CRD:          {"lastSubmittedSpecHash", "batchScheduler", "conditions", "summary"},
		ScheduledSparkApplication.CRD: nil,
		SparkConnect.CRD:              {"server.submissionID", "server.batchScheduler"},
	}
	for _, k := range kinds {
		missing, err := Missing(loadCRD(t, crdFile(dir, k)), k)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want[k.CRD], missing); diff != "" {
			t.Errorf("%s: missing (-want +got):\n%s", k.CRD, diff)
		}
	}
}

func TestCheck(t *testing.T) {
	dir := kubeflowCRDs(t)
	ours := loadCRD(t, crdFile("../../charts/spark-operator/crds", SparkApplication))
	theirs := loadCRD(t, crdFile(dir, SparkApplication))
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	forbidden := interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}, SparkApplication.CRD, nil)
	}}
	tests := []struct {
		name          string
		client        client.Reader
		wantForbidden bool
		wantErr       []string
	}{
		{name: "ours", client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(ours).Build()},
		{name: "Kubeflow's", client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(theirs).Build(),
			wantErr: []string{"the CRD sparkapplications.sparkoperator.k8s.io lacks the status fields lastSubmittedSpecHash, batchScheduler, conditions", ReplaceCommand}},
		{name: "none", client: fake.NewClientBuilder().WithScheme(scheme).Build(),
			wantErr: []string{"the CRD sparkapplications.sparkoperator.k8s.io is not installed", ReplaceCommand}},
		{name: "not allowed to read", client: fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(forbidden).Build(), wantForbidden: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forbidden, err := Check(context.Background(), tt.client, SparkApplication)
			if forbidden != tt.wantForbidden {
				t.Errorf("forbidden = %t", forbidden)
			}
			if len(tt.wantErr) == 0 && err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to contain %q", err, w)
				}
			}
		})
	}
}

// TestReplaceCommandDocumented: the chart's notes and the docs give the command the operator
// names.
func TestReplaceCommandDocumented(t *testing.T) {
	for _, f := range []string{"charts/spark-operator/templates/NOTES.txt", "charts/spark-operator/templates/_helpers.tpl", "docs/helm.md", "docs/migrating.md"} {
		b, err := os.ReadFile(filepath.Join("../..", f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), ReplaceCommand) {
			t.Errorf("%s does not give %q", f, ReplaceCommand)
		}
	}
}
