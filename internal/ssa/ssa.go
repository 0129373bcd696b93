/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package ssa writes the objects the operator derives from a spec (UI Services and Ingresses,
// a SparkConnect's Service and executor template ConfigMap, an application's metrics
// ConfigMap) with server-side apply, the one way they are written:
//
//   - the operator owns only the fields it sets, under the field manager FieldOwner, so keys
//     that others add (annotations of other controllers, node ports the API server allocates)
//     survive every update;
//   - a hash of what was applied is kept on the object (AppliedAnnotation), so an object already
//     as wanted, as read from the cache, is not applied again: a steady reconcile costs no API
//     request;
//   - an object of the name that is not the writer's is not overwritten.
package ssa

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"k8s.io/utils/ptr"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// FieldOwner is the server-side apply field manager of everything the operator applies.
const FieldOwner = "spark-operator"

// AppliedAnnotation holds a hash of what the operator last applied to an object.
const AppliedAnnotation = v1beta2.GroupName + "/applied-hash"

// Config is an apply configuration of client-go (such as *ServiceApplyConfiguration) that
// names its object.
type Config[T any] interface {
	GetKind() *string
	GetName() *string
	GetNamespace() *string
	IsApplyConfiguration()
	WithAnnotations(map[string]string) T
}

// Ownership is what an existing object of the name to write is to the writer.
type Ownership int

const (
	// Foreign objects are someone else's: they are left alone and Apply fails with a
	// *NotOwnedError.
	Foreign Ownership = iota
	// Owned objects are the writer's: applied over, or left as they are when unchanged.
	Owned
	// Stale objects belong to an earlier owner of the same name (deleted and recreated before
	// the garbage collector caught up): deleted first, so the new one starts clean.
	Stale
)

// Owner describes the writer of an object.
type Owner struct {
	// Name names the owner in errors ("SparkConnect demo").
	Name string
	// Of tells what an existing object is to the owner.
	Of func(existing client.Object) Ownership
}

// ControlledBy is the owner of objects whose controller reference points to obj (by UID); any
// other object is foreign.
func ControlledBy(obj metav1.Object, kind string) Owner {
	return Owner{
		Name: kind + " " + obj.GetName(),
		Of: func(existing client.Object) Ownership {
			if metav1.IsControlledBy(existing, obj) {
				return Owned
			}
			return Foreign
		},
	}
}

// NotOwnedError reports an object of the name to write that is not the writer's.
type NotOwnedError struct {
	Kind, Namespace, Name, Owner string
}

func (e *NotOwnedError) Error() string {
	return fmt.Sprintf("%s %s/%s exists and is not controlled by %s", e.Kind, e.Namespace, e.Name, e.Owner)
}

// Apply writes cfg's fields with server-side apply, forcing ownership of them, unless the
// object, as c reads it (the manager's cache), already carries the hash of cfg. existing is
// where the object is read into: after Apply it holds the object as it was read, or nothing
// when there was none. It reports whether it wrote.
//
// The operator's cache holds only objects with its label: when it has none of the name, api
// (the API server, not a cache), when not nil, is asked, so that an object of the name without
// the label is not taken over. That read happens only while the object is missing from the
// cache, not on a steady reconcile.
//
// cfg must be complete on every call: fields it set before and leaves out now are removed.
// It gets AppliedAnnotation.
func Apply[T Config[T]](ctx context.Context, c client.Client, api client.Reader, cfg T, existing client.Object, owner Owner) (bool, error) {
	kind, name, ns := ptr.Deref(cfg.GetKind(), ""), ptr.Deref(cfg.GetName(), ""), ptr.Deref(cfg.GetNamespace(), "")
	found, err := compare(ctx, c, api, cfg, existing, owner)
	switch {
	case err != nil:
		return false, err
	case found == current:
		return false, nil
	case found == stale:
		uid := existing.GetUID()
		if err := c.Delete(ctx, existing, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("deleting %s %s/%s of an earlier %s: %w", kind, ns, name, owner.Name, err)
		}
	}
	if err := c.Apply(ctx, cfg, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return false, fmt.Errorf("applying %s %s/%s: %w", kind, ns, name, err)
	}
	return true, nil
}

// Current reports whether Apply would leave the object as it is: c (the manager's cache) shows
// it owned and carrying cfg's hash. It writes nothing and reads only through c; existing is
// where the object is read into. An object of the name that is not the owner's is a
// *NotOwnedError, as in Apply.
func Current[T Config[T]](ctx context.Context, c client.Reader, cfg T, existing client.Object, owner Owner) (bool, error) {
	found, err := compare(ctx, c, nil, cfg, existing, owner)
	return found == current, err
}

// found is what compare found of the object cfg names.
type found int

const (
	absent  found = iota // no object of the name
	current              // the owner's, as cfg wants it
	changed              // the owner's, not as cfg wants it (or being deleted)
	stale                // an earlier owner's
)

// compare reads the object cfg names into existing, through c and then api (as Apply), and
// tells what it is to owner and to cfg. It gives cfg its AppliedAnnotation.
func compare[T Config[T]](ctx context.Context, c, api client.Reader, cfg T, existing client.Object, owner Owner) (found, error) {
	kind, name, ns := ptr.Deref(cfg.GetKind(), ""), ptr.Deref(cfg.GetName(), ""), ptr.Deref(cfg.GetNamespace(), "")
	hash, err := Hash(cfg)
	if err != nil {
		return absent, fmt.Errorf("encoding %s %s/%s: %w", kind, ns, name, err)
	}
	cfg.WithAnnotations(map[string]string{AppliedAnnotation: hash})
	key := client.ObjectKey{Namespace: ns, Name: name}
	err = c.Get(ctx, key, existing)
	if apierrors.IsNotFound(err) && api != nil {
		err = api.Get(ctx, key, existing)
	}
	switch {
	case apierrors.IsNotFound(err):
		return absent, nil
	case err != nil:
		return absent, fmt.Errorf("getting %s %s/%s: %w", kind, ns, name, err)
	}
	switch owner.Of(existing) {
	case Foreign:
		return absent, &NotOwnedError{Kind: kind, Namespace: ns, Name: name, Owner: owner.Name}
	case Stale:
		return stale, nil
	}
	if existing.GetAnnotations()[AppliedAnnotation] == hash && existing.GetDeletionTimestamp().IsZero() {
		return current, nil
	}
	return changed, nil
}

// Hash is the hash of cfg's fields that AppliedAnnotation records, computed before the
// annotation is added.
func Hash(cfg any) (string, error) {
	data, err := json.Marshal(cfg)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12]), nil
}
