/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package nsfilter restricts the operator to namespaces whose labels match a selector
// (--namespace-selector). A fixed list of namespaces is handled by the cache itself; a selector
// cannot be, because namespaces gain and lose labels while the operator runs.
package nsfilter

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Filter admits objects whose namespace's labels match Selector.
type Filter struct {
	// Reader reads Namespaces; the manager's cached client keeps this cheap.
	Reader   client.Reader
	Selector labels.Selector
}

// Allows reports whether objects in namespace are the operator's to handle. An empty selector
// allows every namespace; a namespace that cannot be read is not allowed, so the operator
// never acts where it was not asked to.
func (f *Filter) Allows(ctx context.Context, namespace string) bool {
	if f == nil || f.Selector == nil || f.Selector.Empty() {
		return true
	}
	var ns corev1.Namespace
	if err := f.Reader.Get(ctx, client.ObjectKey{Name: namespace}, &ns); err != nil {
		return false
	}
	return f.Selector.Matches(labels.Set(ns.Labels))
}

// Predicate filters watch events by the object's namespace.
func (f *Filter) Predicate() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj client.Object) bool {
		return f.Allows(context.Background(), obj.GetNamespace())
	})
}
