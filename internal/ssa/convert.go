/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package ssa

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

// The operator builds some objects as typed values (sparkpod's pure functions of a spec); these
// turn them into apply configurations that set what the typed value sets: its name, labels,
// annotations, owner references and content. Nothing else of the typed value is applied
// (status, resourceVersion, what the API server allocates).

// ConfigMap is the apply configuration of cm.
func ConfigMap(cm *corev1.ConfigMap) *corev1ac.ConfigMapApplyConfiguration {
	cfg := corev1ac.ConfigMap(cm.Name, cm.Namespace)
	meta(cfg, &cm.ObjectMeta)
	if cm.Data != nil {
		cfg.WithData(cm.Data)
	}
	if cm.BinaryData != nil {
		cfg.WithBinaryData(cm.BinaryData)
	}
	return cfg
}

// Service is the apply configuration of svc's metadata and spec. A port's unset target port
// stays unset (the API server makes it the port), and its unset protocol is TCP, the default.
func Service(svc *corev1.Service) (*corev1ac.ServiceApplyConfiguration, error) {
	cfg := corev1ac.Service(svc.Name, svc.Namespace)
	meta(cfg, &svc.ObjectMeta)
	// The apply configuration of a spec has the spec's JSON form.
	data, err := json.Marshal(&svc.Spec)
	if err != nil {
		return nil, fmt.Errorf("encoding the spec of Service %s: %w", svc.Name, err)
	}
	spec := &corev1ac.ServiceSpecApplyConfiguration{}
	if err := json.Unmarshal(data, spec); err != nil {
		return nil, fmt.Errorf("decoding the spec of Service %s: %w", svc.Name, err)
	}
	for i := range spec.Ports {
		p := &spec.Ports[i]
		// IntOrString has no empty JSON form: an unset target port reads as 0.
		if t := p.TargetPort; t != nil && t.IntValue() == 0 && t.StrVal == "" {
			p.TargetPort = nil
		}
		if p.Protocol == nil || *p.Protocol == "" {
			p.WithProtocol(corev1.ProtocolTCP)
		}
	}
	cfg.WithSpec(spec)
	return cfg, nil
}

// meta gives cfg the labels, annotations and owner references of m.
func meta[T any](cfg interface {
	WithLabels(map[string]string) T
	WithAnnotations(map[string]string) T
	WithOwnerReferences(...*metav1ac.OwnerReferenceApplyConfiguration) T
}, m *metav1.ObjectMeta) {
	if len(m.Labels) > 0 {
		cfg.WithLabels(m.Labels)
	}
	if len(m.Annotations) > 0 {
		cfg.WithAnnotations(m.Annotations)
	}
	for _, r := range m.OwnerReferences {
		ref := metav1ac.OwnerReference().WithAPIVersion(r.APIVersion).WithKind(r.Kind).WithName(r.Name).WithUID(r.UID)
		if r.Controller != nil {
			ref.WithController(*r.Controller)
		}
		if r.BlockOwnerDeletion != nil {
			ref.WithBlockOwnerDeletion(*r.BlockOwnerDeletion)
		}
		cfg.WithOwnerReferences(ref)
	}
}
