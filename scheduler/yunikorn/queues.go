/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package yunikorn

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/scheduler/gang"
)

const (
	// DefaultNamespace is the namespace of YuniKorn's configuration (its ConfigMaps), as its
	// Helm chart installs it.
	DefaultNamespace = "yunikorn"
	// The ConfigMaps YuniKorn reads its configuration from, the second over the first, and
	// the key of its queues (yunikorn-k8shim pkg/common/constants).
	defaultsConfigMap = "yunikorn-defaults"
	configsConfigMap  = "yunikorn-configs"
	queuesKey         = "queues.yaml"
	// partition is the one partition the k8shim schedules in.
	partition = "default"
	root      = "root"
)

var _ gang.ForeignQueueLimits = (*Scheduler)(nil)

// QueueLimits are the resources.max of the YuniKorn queue named and of its ancestors, the
// queue's own first, for the gang scheduler's core to admit the queue's runs whole within
// them: YuniKorn allocates no pod of a queue beyond its max (or an ancestor's), so a run
// admitted by the nodes alone could start its driver and wait for its executors. The queue is
// read from YuniKorn's configuration (queues.yaml of the yunikorn-configs ConfigMap over
// yunikorn-defaults'), as its provided placement rule names it: a name without "root." is
// under root; a queue not configured but created by the rule gets its parent's child template.
// No queue named (YuniKorn's placement rules choose), no max on the way to root, or a
// configuration the operator may not read: no limits.
//
// Not counted: pods of the queue that are not the operator's runs, guaranteed resources
// (YuniKorn's fair share and preemption, not a limit) and maxapplications.
func (s *Scheduler) QueueLimits(ctx context.Context, queue string) ([]gang.ForeignQueue, error) {
	if queue == "" || s.Reader == nil {
		return nil, nil
	}
	conf, err := s.limits.Get("", func() (*queueConf, error) { return s.readQueues(ctx) })
	if err != nil || conf == nil {
		return nil, err
	}
	return limitsOf(conf, queue)
}

// queueConf is a queue of YuniKorn's queues.yaml, as far as its limits go.
type queueConf struct {
	Name          string      `json:"name"`
	Resources     resources   `json:"resources"`
	ChildTemplate template    `json:"childtemplate"`
	Queues        []queueConf `json:"queues"`
}

type resources struct {
	// Max holds quantities; YuniKorn reads numbers too (vcore: 4).
	Max map[string]any `json:"max"`
}

type template struct {
	Resources resources `json:"resources"`
}

// readQueues is the root queue of the default partition of YuniKorn's configuration; nil where
// there is none, or it may not be read.
func (s *Scheduler) readQueues(ctx context.Context) (*queueConf, error) {
	ns := s.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	text := ""
	for _, name := range []string{defaultsConfigMap, configsConfigMap} {
		var cm corev1.ConfigMap
		switch err := s.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cm); {
		case apierrors.IsNotFound(err), apierrors.IsForbidden(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("reading YuniKorn's configuration %s/%s: %w", ns, name, err)
		}
		if v, ok := cm.Data[queuesKey]; ok {
			text = v
		}
	}
	var conf struct {
		Partitions []struct {
			Name   string      `json:"name"`
			Queues []queueConf `json:"queues"`
		} `json:"partitions"`
	}
	useNumber := func(d *json.Decoder) *json.Decoder { d.UseNumber(); return d }
	if err := yaml.Unmarshal([]byte(text), &conf, yaml.JSONOpt(useNumber)); err != nil {
		return nil, fmt.Errorf("YuniKorn's %s: %w", queuesKey, err)
	}
	for _, p := range conf.Partitions {
		if strings.EqualFold(p.Name, partition) {
			for i := range p.Queues {
				if strings.EqualFold(p.Queues[i].Name, root) {
					return &p.Queues[i], nil
				}
			}
		}
	}
	return nil, nil
}

// limitsOf are the limits binding queue (a path from root, or a name under it) in the tree
// under r: the queue's own first; none where no queue on the way has a max.
func limitsOf(r *queueConf, queue string) ([]gang.ForeignQueue, error) {
	parts := strings.Split(queue, ".")
	if !strings.EqualFold(parts[0], root) {
		parts = append([]string{root}, parts...)
	}
	var chain []gang.ForeignQueue // root first
	limited := false
	at := r
	for i, part := range parts {
		var max map[string]any
		switch {
		case i == 0:
			max = r.Resources.Max
		case at != nil:
			parent := at
			at = nil
			for j := range parent.Queues {
				if strings.EqualFold(parent.Queues[j].Name, part) {
					at = &parent.Queues[j]
				}
			}
			if at != nil {
				max = at.Resources.Max
			} else if i == len(parts)-1 {
				max = parent.ChildTemplate.Resources.Max // made by the placement rule
			}
		}
		l, err := resourceList(max)
		if err != nil {
			return nil, fmt.Errorf("YuniKorn queue %s: resources.max: %w", strings.Join(parts[:i+1], "."), err)
		}
		limited = limited || len(l) > 0
		chain = append(chain, gang.ForeignQueue{Name: strings.ToLower(strings.Join(parts[:i+1], ".")), Max: l})
	}
	if !limited {
		return nil, nil
	}
	slices.Reverse(chain)
	return chain, nil
}

// resourceList is a YuniKorn resource map as Kubernetes names resources: vcore is cpu, the
// rest (memory, pods, extended resources) keep their names.
func resourceList(m map[string]any) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for name, v := range m {
		q, err := resource.ParseQuantity(fmt.Sprint(v))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if name == "vcore" {
			name = string(corev1.ResourceCPU)
		}
		out[corev1.ResourceName(name)] = q
	}
	return out, nil
}
