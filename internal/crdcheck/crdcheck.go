/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package crdcheck tells whether the installed CRDs hold the status the operator writes. An
// older CRD, such as the Kubeflow operator's, lacks status fields (the conditions, the spec
// hash, the batch scheduler); the API server drops them without an error, and the operator
// then never sees a spec edit nor says why an application waits. Helm does not replace CRDs
// already installed, so a move from the Kubeflow chart leaves them. The package owns what is
// checked (derived from the API types, from which the CRDs are generated) and the one command
// that replaces the CRDs.
package crdcheck

import (
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// ReplaceCommand replaces the installed CRDs with the chart's (the chart's NOTES, docs/helm.md
// and docs/migrating.md give it too). Server-side, because the CRDs are too large for
// client-side apply's annotation, and forced, to take them over from the Helm release that
// created them.
const ReplaceCommand = "helm show crds charts/spark-operator | kubectl apply --server-side --force-conflicts -f -"

// Kind is a custom resource whose CRD is checked: the CRD's name, the version the operator
// uses, and the status type it writes.
type Kind struct {
	CRD     string
	Version string
	Status  any
}

// The kinds whose status the operator writes.
var (
	SparkApplication = Kind{CRD: "sparkapplications.sparkoperator.k8s.io", Version: v1beta2.GroupVersion.Version,
		Status: v1beta2.SparkApplicationStatus{}}
	ScheduledSparkApplication = Kind{CRD: "scheduledsparkapplications.sparkoperator.k8s.io", Version: v1beta2.GroupVersion.Version,
		Status: v1beta2.ScheduledSparkApplicationStatus{}}
	SparkConnect = Kind{CRD: "sparkconnects.sparkoperator.k8s.io", Version: v1alpha1.GroupVersion.Version,
		Status: v1alpha1.SparkConnectStatus{}}
)

// Missing returns the status fields of k (dotted JSON paths) that the CRD's schema of
// k.Version lacks, and so that the API server would drop.
func Missing(crd *apiextensionsv1.CustomResourceDefinition, k Kind) ([]string, error) {
	for _, v := range crd.Spec.Versions {
		if v.Name != k.Version {
			continue
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return nil, nil // no schema: nothing is pruned
		}
		status, ok := v.Schema.OpenAPIV3Schema.Properties["status"]
		if !ok {
			return []string{"status"}, nil
		}
		var missing []string
		walk(reflect.TypeOf(k.Status), &status, "", &missing)
		return missing, nil
	}
	return nil, fmt.Errorf("the CRD %s serves no version %s", crd.Name, k.Version)
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// walk adds to missing each field of t that schema s lacks, below path.
func walk(t reflect.Type, s *apiextensionsv1.JSONSchemaProps, path string, missing *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil || (s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields) {
		return
	}
	for _, m := range []reflect.Type{jsonMarshaler, textMarshaler} {
		if t.Implements(m) || reflect.PointerTo(t).Implements(m) {
			return // its own encoding, such as a time: a value, not an object of fields
		}
	}
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case !f.IsExported() || name == "-":
			case name == "" && (f.Anonymous || strings.Contains(opts, "inline")):
				walk(f.Type, s, path, missing)
			default:
				if name == "" {
					name = f.Name
				}
				p, ok := s.Properties[name]
				if !ok {
					*missing = append(*missing, path+name)
					continue
				}
				walk(f.Type, &p, path+name+".", missing)
			}
		}
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			walk(t.Elem(), s.Items.Schema, path, missing)
		}
	case reflect.Map:
		if s.AdditionalProperties != nil {
			walk(t.Elem(), s.AdditionalProperties.Schema, path, missing)
		}
	}
}

// Check reads the CRD of each kind and fails, naming ReplaceCommand, if one is not installed
// or lacks status fields. When c may not read CRDs (a user's own RBAC) it passes and says so
// (forbidden): the check is a courtesy, not a condition of running.
func Check(ctx context.Context, c client.Reader, kinds ...Kind) (forbidden bool, err error) {
	var problems []string
	for _, k := range kinds {
		var crd apiextensionsv1.CustomResourceDefinition
		switch err := c.Get(ctx, client.ObjectKey{Name: k.CRD}, &crd); {
		case apierrors.IsForbidden(err):
			return true, nil
		case apierrors.IsNotFound(err):
			problems = append(problems, fmt.Sprintf("the CRD %s is not installed", k.CRD))
			continue
		case err != nil:
			return false, fmt.Errorf("reading the CRD %s: %w", k.CRD, err)
		}
		missing, err := Missing(&crd, k)
		if err != nil {
			problems = append(problems, err.Error())
		} else if len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("the CRD %s lacks the status fields %s, which the API server would drop",
				k.CRD, strings.Join(missing, ", ")))
		}
	}
	if len(problems) == 0 {
		return false, nil
	}
	return false, fmt.Errorf("%s: install this operator's CRDs (Helm does not replace CRDs already installed, such as the Kubeflow operator's): %s",
		strings.Join(problems, "; "), ReplaceCommand)
}
