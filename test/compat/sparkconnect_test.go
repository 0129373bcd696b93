package compat

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/crdpaths"
)

// The Kubeflow operator's SparkConnect (v1alpha1) CRD and example sit apart from the v1beta2
// ones in the reference material.
const (
	sparkConnectCRD          = "sparkoperator.k8s.io_sparkconnects.yaml"
	sparkConnectDir          = "sparkconnect"
	kubeflowConnectFieldFile = "testdata/kubeflow-v1alpha1-fields.txt"
)

// TestSparkConnectCRDAcceptsEveryKubeflowField requires our SparkConnect CRD to have every
// field path of the Kubeflow operator's, with the same type; with the reference beside the
// repository, the list must be current and crd-compat must agree.
func TestSparkConnectCRDAcceptsEveryKubeflowField(t *testing.T) {
	f, err := os.Open(kubeflowConnectFieldFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kubeflow, err := crdpaths.Read(f)
	if err != nil {
		t.Fatalf("%s: %v", kubeflowConnectFieldFile, err)
	}
	if len(kubeflow) < 100 {
		t.Fatalf("%s lists %d paths; it is not the whole schema", kubeflowConnectFieldFile, len(kubeflow))
	}
	ours, err := crdpaths.Load(filepath.Join(repoRoot(t), "charts", "spark-operator", "crds", sparkConnectCRD), v1alpha1.Version)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range crdpaths.Missing(kubeflow, ours) {
		t.Error(p)
	}

	shared := sharedDir(t)
	if shared == "" {
		return
	}
	reference, err := crdpaths.Load(filepath.Join(shared, "reference", "crds", sparkConnectCRD), v1alpha1.Version)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(reference, kubeflow); d != "" {
		t.Errorf("%s is not current with %s (run hack/kubeflow-fields.sh) (-reference +list):\n%s", kubeflowConnectFieldFile, shared, d)
	}
	out, err := exec.Command(filepath.Join(shared, "bin", "crd-compat"),
		filepath.Join(shared, "reference", "crds", sparkConnectCRD),
		filepath.Join(repoRoot(t), "charts", "spark-operator", "crds", sparkConnectCRD),
		"--version", v1alpha1.Version).CombinedOutput()
	if err != nil {
		t.Fatalf("crd-compat: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), " 0 problems") {
		t.Fatalf("crd-compat did not report 0 problems:\n%s", out)
	}
}

// referenceConnectManifests are the Kubeflow operator's SparkConnect examples when the reference
// is beside the repository (ours go through TestExamplesAcceptedByAPIServer and
// TestExamplesRoundTripThroughGoTypes with the other examples).
func referenceConnectManifests(t *testing.T) map[string]manifest {
	t.Helper()
	out := map[string]manifest{}
	if shared := sharedDir(t); shared != "" {
		for _, m := range loadManifests(t, filepath.Join(shared, "reference", sparkConnectDir)) {
			out["reference/"+m.file] = m
		}
	}
	return out
}

// TestSparkConnectExamplesAcceptedByAPIServer creates each reference example with strict field
// validation.
func TestSparkConnectExamplesAcceptedByAPIServer(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config(t))
	ns := cluster.Namespace(t, cluster.Client(t), "compat-connect")
	gvr := v1alpha1.GroupVersion.WithResource("sparkconnects")
	for name, m := range referenceConnectManifests(t) {
		t.Run(name, func(t *testing.T) {
			obj := m.obj.DeepCopy()
			obj.SetNamespace(ns)
			_, err := dyn.Resource(gvr).Namespace(ns).Create(context.Background(), obj,
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict})
			if err != nil {
				t.Fatalf("API server rejected %s: %v", name, err)
			}
		})
	}
}

// ignoredInConnectTemplates: the reference example puts container-level security settings in
// its pod templates' pod-level securityContext, which Kubernetes' pod type does not know.
var ignoredInConnectTemplates = [][]string{
	{"spec", "server", "template", "spec", "securityContext", "capabilities"},
	{"spec", "server", "template", "spec", "securityContext", "allowPrivilegeEscalation"},
	{"spec", "executor", "template", "spec", "securityContext", "capabilities"},
	{"spec", "executor", "template", "spec", "securityContext", "allowPrivilegeEscalation"},
}

func TestSparkConnectExamplesRoundTripThroughGoTypes(t *testing.T) {
	for name, m := range referenceConnectManifests(t) {
		t.Run(name, func(t *testing.T) {
			obj := m.obj.DeepCopy()
			for _, path := range ignoredInConnectTemplates {
				unstructured.RemoveNestedField(obj.Object, path...)
			}
			checkRoundTrip(t, obj, &v1alpha1.SparkConnect{})
		})
	}
}
