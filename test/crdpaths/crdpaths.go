// Package crdpaths lists the field paths of a CustomResourceDefinition's OpenAPI schema with
// their types, and reads and writes such lists. The compatibility test compares our CRDs with
// the Kubeflow operator's through these lists, and the field-coverage test walks our own.
//
// A path starts at the object's root: ".spec.driver.podName"; "[]" stands for the items of
// an array and "{}" for the values of a map. The type is the schema's type, "int-or-string"
// for x-kubernetes-int-or-string, and "any" for a schema that keeps unknown fields and has no
// type.
package crdpaths

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Field is one path of a schema and its type ("" when the schema gives none).
type Field struct {
	Kind string
	Path string
	Type string
}

// Load reads the CRD in file and returns the fields of the schema of version.
func Load(file, version string) ([]Field, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var crd struct {
		Kind string `json:"kind"`
		Spec struct {
			Names    struct{ Kind string } `json:"names"`
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if crd.Kind != "CustomResourceDefinition" {
		return nil, fmt.Errorf("%s: not a CustomResourceDefinition", file)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == version {
			return Paths(crd.Spec.Names.Kind, v.Schema.OpenAPIV3Schema), nil
		}
	}
	return nil, fmt.Errorf("%s: version %s not served", file, version)
}

// Paths lists every path of schema, sorted.
func Paths(kind string, schema map[string]any) []Field {
	var out []Field
	var walk func(s map[string]any, path string)
	walk = func(s map[string]any, path string) {
		typ, _ := s["type"].(string)
		if b, _ := s["x-kubernetes-int-or-string"].(bool); b {
			typ = "int-or-string"
		}
		if b, _ := s["x-kubernetes-preserve-unknown-fields"].(bool); b && typ == "" {
			typ = "any"
		}
		p := path
		if p == "" {
			p = "."
		}
		out = append(out, Field{Kind: kind, Path: p, Type: typ})
		if props, ok := s["properties"].(map[string]any); ok {
			for name, sub := range props {
				if m, ok := sub.(map[string]any); ok {
					walk(m, path+"."+name)
				}
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			walk(items, path+"[]")
		}
		if addl, ok := s["additionalProperties"].(map[string]any); ok {
			walk(addl, path+"{}")
		}
	}
	walk(schema, "")
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Write writes fields one a line, "Kind path type", after a comment header.
func Write(w io.Writer, header string, fields []Field) error {
	bw := bufio.NewWriter(w)
	for _, line := range strings.Split(strings.TrimSpace(header), "\n") {
		fmt.Fprintf(bw, "# %s\n", line)
	}
	for _, f := range fields {
		typ := f.Type
		if typ == "" {
			typ = "-"
		}
		fmt.Fprintf(bw, "%s %s %s\n", f.Kind, f.Path, typ)
	}
	return bw.Flush()
}

// Read reads a list that Write wrote.
func Read(r io.Reader) ([]Field, error) {
	var out []Field
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Fields(line)
		if len(parts) != 3 {
			return nil, fmt.Errorf("line %d: want \"Kind path type\", got %q", n, line)
		}
		f := Field{Kind: parts[0], Path: parts[1], Type: parts[2]}
		if f.Type == "-" {
			f.Type = ""
		}
		out = append(out, f)
	}
	return out, sc.Err()
}

// Missing compares candidate with reference as the API server would see a manifest written
// for reference: every reference path must exist in candidate with the same type, unless
// either side keeps unknown fields there ("any"). Extra candidate paths are fine.
func Missing(reference, candidate []Field) []string {
	have := map[string]string{}
	for _, f := range candidate {
		have[f.Kind+" "+f.Path] = f.Type
	}
	var problems []string
	for _, f := range reference {
		t, ok := have[f.Kind+" "+f.Path]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: missing %s (%s)", f.Kind, f.Path, f.Type))
		case f.Type != "" && t != "" && f.Type != t && f.Type != "any" && t != "any":
			problems = append(problems, fmt.Sprintf("%s: type of %s: want %s, got %s", f.Kind, f.Path, f.Type, t))
		}
	}
	return problems
}
