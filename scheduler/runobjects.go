/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package scheduler

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// ObjectsForRun is implemented by schedulers that need objects of their own to exist before an
// admitted run's pods do: a PodGroup (Volcano, coscheduling), a Workload (the Kubernetes
// Workload API). RunObjects returns them for w's run as admitted by d. The controllers create
// them (EnsureRunObjects) after the admission and before the driver or server pod, in the
// workload's namespace and owned by its SparkApplication or SparkConnect, so the garbage
// collector removes them with it. Each must be named (not generateName): an object that exists
// already is left as it is, so a retry or an operator restart never creates one twice; name
// them after the run (w.Run) when each run needs its own. The operator needs RBAC to create
// them.
type ObjectsForRun interface {
	RunObjects(ctx context.Context, w Workload, d Decision) ([]client.Object, error)
}

// EnsureRunObjects creates the objects s wants for w's run admitted by d (ObjectsForRun), each
// in w's namespace with an owner reference to w's object; those that exist already are left as
// they are. A scheduler that wants none, or s nil, creates nothing. An error (the scheduler's,
// an object it may not have, the API server's) is returned for the caller to retry: the run's
// pods must not be created without them.
func EnsureRunObjects(ctx context.Context, c client.Client, s Interface, w Workload, d Decision) error {
	p, ok := s.(ObjectsForRun)
	if !ok {
		return nil
	}
	objs, err := p.RunObjects(ctx, w, d)
	if err != nil {
		return fmt.Errorf("batch scheduler %s: objects for the run of %s: %w", s.Name(), w.Key, err)
	}
	owner, err := ownerReference(w)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := createOwned(ctx, c, obj, w, owner); err != nil {
			return fmt.Errorf("batch scheduler %s: %w", s.Name(), err)
		}
	}
	return nil
}

// createOwned creates obj in w's namespace, owned by w's object, unless it exists.
func createOwned(ctx context.Context, c client.Client, obj client.Object, w Workload, owner metav1.OwnerReference) error {
	if obj == nil {
		return fmt.Errorf("an object for the run of %s is nil", w.Key)
	}
	kind := fmt.Sprintf("%T", obj)
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		kind = gvk.Kind
	}
	switch namespaced, err := c.IsObjectNamespaced(obj); {
	case err != nil:
		return fmt.Errorf("%s %s for the run of %s: %w", kind, obj.GetName(), w.Key, err)
	case !namespaced:
		return fmt.Errorf("%s %s for the run of %s is cluster-scoped: a run's objects live in its namespace", kind, obj.GetName(), w.Key)
	}
	if obj.GetName() == "" {
		return fmt.Errorf("a %s for the run of %s has no name: a run's objects must be named, so that none is created twice", kind, w.Key)
	}
	switch ns := obj.GetNamespace(); ns {
	case "":
		obj.SetNamespace(w.Key.Namespace)
	case w.Key.Namespace:
	default:
		return fmt.Errorf("%s %s for the run of %s is in namespace %s: a run's objects live in its namespace", kind, obj.GetName(), w.Key, ns)
	}
	if !hasOwner(obj, owner.UID) {
		obj.SetOwnerReferences(append(obj.GetOwnerReferences(), owner))
	}
	if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %s %s for the run of %s: %w", kind, obj.GetName(), w.Key, err)
	}
	return nil
}

// ownerReference refers to w's SparkApplication or SparkConnect.
func ownerReference(w Workload) (metav1.OwnerReference, error) {
	ref := metav1.OwnerReference{Kind: string(w.Key.Kind)}
	switch w.Key.Kind {
	case KindApplication:
		ref.APIVersion = v1beta2.GroupVersion.String()
	case KindSession:
		ref.APIVersion = v1alpha1.GroupVersion.String()
	default:
		return ref, fmt.Errorf("workload %s is of kind %q, which owns no objects", w.Key, w.Key.Kind)
	}
	if w.Object == nil || w.Object.GetUID() == "" {
		return ref, fmt.Errorf("workload %s has no stored object to own its run's objects", w.Key)
	}
	ref.Name, ref.UID = w.Object.GetName(), w.Object.GetUID()
	return ref, nil
}

func hasOwner(obj client.Object, uid types.UID) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == uid {
			return true
		}
	}
	return false
}
