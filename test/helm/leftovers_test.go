/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package helm

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/sparkop/spark-operator/test/cluster"
)

// kept is what may stay in the release's namespace after `helm uninstall`, as docs/helm.md
// says: the namespace's own service account and CA ConfigMap, events, the controller's
// leader-election Lease and, with cert-manager, the Secrets of its Certificates (gone with the
// namespace).
func (r *release) kept(resource, name string) bool {
	switch resource {
	case "secrets":
		return r.certManager && (name == r.webhookName()+"-certs" || name == r.webhookName()+"-ca")
	case "events", "events.events.k8s.io":
		return true
	case "serviceaccounts":
		return name == "default"
	case "configmaps":
		return name == "kube-root-ca.crt"
	case "leases.coordination.k8s.io":
		return name == r.name+"-controller-lock"
	}
	return false
}

// requireNothingLeft: after `helm uninstall`, nothing of the release is left (once the garbage
// collector has removed the pods of its Deployments): in its namespace only what kept allows,
// and nowhere an object carrying its instance label or named with its prefix (but the CRDs,
// which Helm never removes).
func (r *release) requireNothingLeft(t *testing.T) {
	t.Helper()
	var left []string
	cluster.Eventually(t, 3*time.Minute, "nothing of the release left", func() (bool, error) {
		var err error
		left, err = r.leftovers()
		return len(left) == 0, err
	})
	for _, l := range left {
		t.Errorf("left behind after helm uninstall: %s", l)
	}
}

// leftovers lists what is left of the release in the cluster, as "resource namespace/name".
func (r *release) leftovers() ([]string, error) {
	cfg, err := cluster.RESTConfig(r.kubeconfig)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	lists, err := disc.ServerPreferredResources()
	if err != nil {
		return nil, err
	}
	var left []string
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, res := range list.APIResources {
			if !slices.Contains(res.Verbs, "list") || res.Kind == "CustomResourceDefinition" {
				continue
			}
			l, err := r.leftoversOf(dyn, gv.WithResource(res.Name), res.Namespaced)
			if err != nil {
				return nil, err
			}
			left = append(left, l...)
		}
	}
	return left, nil
}

func (r *release) leftoversOf(dyn dynamic.Interface, gvr schema.GroupVersionResource, namespaced bool) ([]string, error) {
	resource := gvr.Resource
	if gvr.Group != "" {
		resource += "." + gvr.Group
	}
	objs, err := dyn.Resource(gvr).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", resource, err)
	}
	var left []string
	for _, o := range objs.Items {
		leftover := o.GetLabels()["app.kubernetes.io/instance"] == r.name ||
			(!namespaced && strings.HasPrefix(o.GetName(), r.name+"-")) ||
			(namespaced && o.GetNamespace() == r.namespace && !r.kept(resource, o.GetName()))
		if leftover {
			left = append(left, fmt.Sprintf("%s %s/%s", resource, o.GetNamespace(), o.GetName()))
		}
	}
	return left, nil
}
