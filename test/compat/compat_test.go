// Package compat checks that existing Kubeflow Spark operator users' YAML works with ours
// unchanged: the reference CRDs and examples (kept beside the repository in ../shared) against
// our generated CRDs, our Go types and a real API server.
package compat

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

var kinds = []string{"sparkapplications", "scheduledsparkapplications"}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// sharedDir is the reference material kept beside the repository (SPARKOP_SHARED overrides).
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SPARKOP_SHARED")
	if dir == "" {
		dir = filepath.Join(repoRoot(t), "..", "shared")
	}
	if _, err := os.Stat(filepath.Join(dir, "reference")); err != nil {
		t.Fatalf("reference material not found at %s (set SPARKOP_SHARED): %v", dir, err)
	}
	return dir
}

func TestCRDsAcceptEveryReferenceField(t *testing.T) {
	shared := sharedDir(t)
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			file := "sparkoperator.k8s.io_" + kind + ".yaml"
			out, err := exec.Command(filepath.Join(shared, "bin", "crd-compat"),
				filepath.Join(shared, "reference", "crds", file),
				filepath.Join(repoRoot(t), "charts", "spark-operator", "crds", file)).CombinedOutput()
			if err != nil {
				t.Fatalf("crd-compat: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), " 0 problems") {
				t.Fatalf("crd-compat did not report 0 problems:\n%s", out)
			}
		})
	}
}

type manifest struct {
	file string
	obj  *unstructured.Unstructured
}

func loadManifests(t *testing.T, dir string) []manifest {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no manifests in %s", dir)
	}
	var out []manifest
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		data = fillPlaceholders(data)
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var obj map[string]any
			if err := dec.Decode(&obj); err != nil {
				if err.Error() == "EOF" {
					break
				}
				t.Fatalf("%s: %v", f, err)
			}
			if obj == nil {
				continue
			}
			out = append(out, manifest{file: filepath.Base(f), obj: &unstructured.Unstructured{Object: obj}})
		}
	}
	return out
}

// placeholder matches the {IMAGE_REGISTRY}-style blanks some reference examples leave for the
// user to fill in before applying them.
var placeholder = regexp.MustCompile(`\{[A-Z][A-Z_]*\}`)

// fillPlaceholders does what the user is asked to do: put a value in each blank.
func fillPlaceholders(data []byte) []byte {
	return placeholder.ReplaceAllFunc(data, func(b []byte) []byte {
		return bytes.ToLower(bytes.Trim(bytes.ReplaceAll(b, []byte("_"), []byte("-")), "{}"))
	})
}

func exampleDirs(t *testing.T) map[string]string {
	return map[string]string{
		"reference": filepath.Join(sharedDir(t), "reference", "examples"),
		"ours":      filepath.Join(repoRoot(t), "examples"),
	}
}

// TestExamplesAcceptedByAPIServer creates every example with a server-side dry run and strict
// field validation, so an unknown or mistyped field is an error rather than silently pruned.
func TestExamplesAcceptedByAPIServer(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config(t))
	ns := cluster.Namespace(t, cluster.Client(t), "compat")
	for set, dir := range exampleDirs(t) {
		for _, m := range loadManifests(t, dir) {
			t.Run(set+"/"+m.file, func(t *testing.T) {
				gvk := m.obj.GroupVersionKind()
				if gvk.Group != v1beta2.GroupVersion.Group {
					t.Skipf("%s is not one of our kinds", gvk)
				}
				gvr := schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version,
					Resource: strings.ToLower(gvk.Kind) + "s"}
				obj := m.obj.DeepCopy()
				obj.SetNamespace(ns)
				_, err := dyn.Resource(gvr).Namespace(ns).Create(context.Background(), obj,
					metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict})
				if err != nil {
					t.Fatalf("API server rejected %s: %v", m.file, err)
				}
			})
		}
	}
}

// TestExamplesRoundTripThroughGoTypes decodes every example strictly into our Go types and
// encodes it again: nothing a user wrote may be unknown to the types or lost on the way.
func TestExamplesRoundTripThroughGoTypes(t *testing.T) {
	for set, dir := range exampleDirs(t) {
		for _, m := range loadManifests(t, dir) {
			t.Run(set+"/"+m.file, func(t *testing.T) {
				var typed any
				switch kind := m.obj.GetKind(); kind {
				case "SparkApplication":
					typed = &v1beta2.SparkApplication{}
				case "ScheduledSparkApplication":
					typed = &v1beta2.ScheduledSparkApplication{}
				default:
					t.Skipf("%s is not one of our kinds", kind)
				}
				obj := m.obj.DeepCopy()
				for _, path := range ignoredByKubernetes[set+"/"+m.file] {
					unstructured.RemoveNestedField(obj.Object, path...)
				}
				in, err := json.Marshal(obj.Object)
				if err != nil {
					t.Fatal(err)
				}
				if err := yaml.UnmarshalStrict(in, typed); err != nil {
					t.Fatalf("strict decode: %v", err)
				}
				out, err := json.Marshal(typed)
				if err != nil {
					t.Fatal(err)
				}
				var before, after map[string]any
				if err := json.Unmarshal(in, &before); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(out, &after); err != nil {
					t.Fatal(err)
				}
				normalize(before)
				normalize(after)
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("round trip changed the manifest (-before +after):\n%s", diff)
				}
			})
		}
	}
}

// ignoredByKubernetes lists fields of reference examples that Kubernetes itself does not know
// and drops, so our typed decoding drops them too (as the Kubeflow operator's did). The pod
// templates put container-level security settings at pod level.
var ignoredByKubernetes = map[string][][]string{
	"reference/spark-pi-pod-template.yaml": {
		{"spec", "driver", "template", "spec", "securityContext", "capabilities"},
		{"spec", "driver", "template", "spec", "securityContext", "allowPrivilegeEscalation"},
		{"spec", "executor", "template", "spec", "securityContext", "capabilities"},
		{"spec", "executor", "template", "spec", "securityContext", "allowPrivilegeEscalation"},
	},
}

// normalize drops what a typed round trip legitimately adds or rewrites: empty
// creationTimestamps, the empty `resources: {}` that Kubernetes' container type always writes,
// an empty status, and quantities written as numbers.
func normalize(obj map[string]any) {
	for key, v := range obj {
		switch v := v.(type) {
		case map[string]any:
			if (key == "resources" || key == "status") && isEmpty(v) {
				delete(obj, key)
				continue
			}
			if key == "requests" || key == "limits" {
				// A quantity written as a number comes back in its canonical string form.
				for name, q := range v {
					if f, ok := q.(float64); ok {
						v[name] = strconv.FormatFloat(f, 'f', -1, 64)
					}
				}
			}
			normalize(v)
		case []any:
			for _, item := range v {
				if m, ok := item.(map[string]any); ok {
					normalize(m)
				}
			}
		case nil:
			if key == "creationTimestamp" {
				delete(obj, key)
			}
		}
	}
}

func isEmpty(m map[string]any) bool {
	for _, v := range m {
		switch v := v.(type) {
		case map[string]any:
			if !isEmpty(v) {
				return false
			}
		case string:
			if v != "" {
				return false
			}
		case nil:
		default:
			return false
		}
	}
	return true
}
