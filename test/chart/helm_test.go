/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package chart tests the Helm chart: what it renders for each kind of values, and, installed
// into the local control plane, that the operator runs with exactly the arguments and RBAC the
// chart gives it, its webhook reached through the chart's Service, with certificates of its
// own or from cert-manager.
package chart

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/test/cluster"
)

// helm runs the pinned helm with args.
var helm = cluster.Helm

const chartDir = "charts/spark-operator"

// setFlags turns key=value settings into helm flags: --set, or --set-literal for those
// prefixed "literal:" (values with braces or commas, which --set would parse), or -f for a
// values file (relative to the repository) prefixed "file:".
func setFlags(set []string) []string {
	var args []string
	for _, s := range set {
		if v, ok := strings.CutPrefix(s, "literal:"); ok {
			args = append(args, "--set-literal", v)
		} else if v, ok := strings.CutPrefix(s, "file:"); ok {
			args = append(args, "-f", v)
		} else {
			args = append(args, "--set", s)
		}
	}
	return args
}

// render returns the objects `helm template` makes with the given settings (see setFlags).
func render(t *testing.T, namespace string, set ...string) ([]unstructured.Unstructured, error) {
	t.Helper()
	args := append([]string{"template", "rel", chartDir, "--namespace", namespace}, setFlags(set)...)
	out, err := helm(t, args...)
	if err != nil {
		return nil, err
	}
	return decode(out)
}

func decode(manifests string) ([]unstructured.Unstructured, error) {
	var objs []unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifests)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return nil, fmt.Errorf("%w in\n%s", err, doc)
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, unstructured.Unstructured{Object: m})
	}
}

// find returns the rendered object of that kind and name (namespace "" matches any).
func find(objs []unstructured.Unstructured, kind, namespace, name string) *unstructured.Unstructured {
	for i := range objs {
		o := &objs[i]
		if o.GetKind() == kind && o.GetName() == name && (namespace == "" || o.GetNamespace() == namespace) {
			return o
		}
	}
	return nil
}

// kinds counts the rendered objects by kind.
func kinds(objs []unstructured.Unstructured) map[string]int {
	n := map[string]int{}
	for _, o := range objs {
		n[o.GetKind()]++
	}
	return n
}

// containerArgs is the args of the first container of a rendered Deployment.
func containerArgs(t *testing.T, d *unstructured.Unstructured) []string {
	t.Helper()
	args, _, _ := unstructured.NestedStringSlice(container(t, d), "args")
	return args
}

// container is the first container of the Deployment d.
func container(t *testing.T, d *unstructured.Unstructured) map[string]any {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		t.Fatalf("Deployment %s has no containers", d.GetName())
	}
	return containers[0].(map[string]any)
}
