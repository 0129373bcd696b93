/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package cluster

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// KueueGV is the API of the pinned Kueue (hack/tools/kueue, v0.17.0) that
// `hack/local-cluster.sh kueue` serves. Its kinds are handled unstructured: Scheme does not
// know them, and the repository does not import Kueue.
var KueueGV = schema.GroupVersion{Group: "kueue.x-k8s.io", Version: "v1beta2"}

// KueueObject is an object of Kueue's kind with spec.
func KueueObject(kind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(KueueGV.WithKind(kind))
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// KueueQueue is what Kueue needs to admit applications labelled for a LocalQueue: a
// ResourceFlavor, a ClusterQueue over it, and the LocalQueue pointing at the ClusterQueue.
type KueueQueue struct {
	Flavor, ClusterQueue, LocalQueue *unstructured.Unstructured
}

// NewKueueQueue makes a ResourceFlavor and a ClusterQueue, both called name, and the LocalQueue
// local in namespace ns. The flavor's nodeLabels (none: any node) go into the node selector of
// the applications Kueue admits; the ClusterQueue takes workloads from every namespace and
// admits them while what they request of each resource in quota stays within quota.
func NewKueueQueue(name string, nodeLabels map[string]string, quota corev1.ResourceList, ns, local string) KueueQueue {
	flavorSpec := map[string]any{}
	if len(nodeLabels) > 0 {
		labels := map[string]any{}
		for k, v := range nodeLabels {
			labels[k] = v
		}
		flavorSpec["nodeLabels"] = labels
	}
	var covered, resources []any
	for _, r := range slices.Sorted(maps.Keys(quota)) {
		q := quota[r]
		covered = append(covered, string(r))
		resources = append(resources, map[string]any{"name": string(r), "nominalQuota": q.String()})
	}
	return KueueQueue{
		Flavor: KueueObject("ResourceFlavor", "", name, flavorSpec),
		ClusterQueue: KueueObject("ClusterQueue", "", name, map[string]any{
			"namespaceSelector": map[string]any{},
			"resourceGroups": []any{map[string]any{
				"coveredResources": covered,
				"flavors":          []any{map[string]any{"name": name, "resources": resources}},
			}},
		}),
		LocalQueue: KueueObject("LocalQueue", ns, local, map[string]any{"clusterQueue": name}),
	}
}

// Objects are q's objects in the order to create them.
func (q KueueQueue) Objects() []client.Object {
	return []client.Object{q.Flavor, q.ClusterQueue, q.LocalQueue}
}

// KueueActive reports whether cq, a ClusterQueue as read from the API server, is active: Kueue
// admits nothing to it before.
func KueueActive(cq *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(cq.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "Active" && m["status"] == "True" {
			return true
		}
	}
	return false
}
