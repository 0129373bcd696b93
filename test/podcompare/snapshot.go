/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package podcompare compares what native submission created with what spark-submit created
// for the same application: the driver pod, the ConfigMaps and the Services it owns. It reads
// them (Read), normalises what differs between any two submissions by design (Snapshot: names,
// IDs and the fields the API server, the schedulers and the kubelet set), and lists the fields
// in which the two still differ (Compare), each checked against the accepted differences
// (Allowed). Only tests import it: test/equivalence on the simulated cluster, test/realnode on
// the real node.
package podcompare

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/submission/native"
)

// Snapshot is what one submission created, normalised (see New). Objects are keyed by their
// normalised names.
type Snapshot struct {
	Pod        *corev1.Pod
	Services   map[string]*corev1.Service
	ConfigMaps map[string]*corev1.ConfigMap
	// Properties is the driver's spark.properties, parsed; its ConfigMap entry is emptied.
	Properties map[string]string
	// ExecutorTemplate is the executor pod template, parsed; its ConfigMap entry is emptied.
	ExecutorTemplate *corev1.Pod
}

// Generated are the identifiers of one submission that differ between any two by design.
type Generated struct {
	// AppUID is the SparkApplication's UID.
	AppUID types.UID
	// SubmissionID is the attempt's submission ID; empty when both sides share one.
	SubmissionID string
}

// Keys of the ConfigMaps spark-submit creates.
const (
	propertiesKey = "spark.properties"
	templateKey   = "podspec-configmap-key"
	parsedMarker  = "(parsed: see Properties / ExecutorTemplate)"
)

// Placeholders for what differs between any two submissions by design.
const (
	phNamespace    = "NAMESPACE"
	phAppUID       = "APP-UID"
	phPodUID       = "DRIVER-POD-UID"
	phAppID        = "SPARK-APP-ID"
	phSubmissionID = "SUBMISSION-ID"
	phSubmitTime   = "SUBMIT-TIME"
	phConfCM       = "SPARK-CONF-CONFIGMAP"
	phTemplateCM   = "EXECUTOR-TEMPLATE-CONFIGMAP"
	phService      = "DRIVER-SERVICE"
	phPrefix       = "RESOURCE-PREFIX"
	phTokenVolume  = "kube-api-access-RANDOM"
)

var (
	// Spark's default local directory, /var/data/spark-<random UUID>.
	localDirRE = regexp.MustCompile(`/var/data/spark-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// The service-account token volume the API server's admission adds, with a random suffix.
	tokenVolumeRE = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}\b`)
)

// Read reads what a submission created: the driver pod, as stored, and the ConfigMaps and
// Services in its namespace that it owns.
func Read(ctx context.Context, c client.Reader, namespace, driverPod string) (*corev1.Pod, []*corev1.ConfigMap, []*corev1.Service, error) {
	pod := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: driverPod}, pod); err != nil {
		return nil, nil, nil, fmt.Errorf("reading the driver pod: %w", err)
	}
	var cms corev1.ConfigMapList
	if err := c.List(ctx, &cms, client.InNamespace(namespace)); err != nil {
		return nil, nil, nil, err
	}
	var svcs corev1.ServiceList
	if err := c.List(ctx, &svcs, client.InNamespace(namespace)); err != nil {
		return nil, nil, nil, err
	}
	return pod, ownedBy(cms.Items, pod.UID), ownedBy(svcs.Items, pod.UID), nil
}

func ownedBy[T any, PT interface {
	*T
	metav1.Object
}](items []T, owner types.UID) []PT {
	var out []PT
	for i := range items {
		obj := PT(&items[i])
		for _, ref := range obj.GetOwnerReferences() {
			if ref.UID == owner {
				out = append(out, obj)
				break
			}
		}
	}
	return out
}

// New parses the properties file and the executor template, and normalises what differs
// between any two submissions by design: generated names and IDs are replaced by placeholders
// wherever they appear; the bookkeeping the API server, the schedulers and the kubelet add
// (UIDs, resource versions, generations, timestamps, managed fields, node name, status) is
// removed.
func New(pod *corev1.Pod, ids Generated, cms []*corev1.ConfigMap, svcs []*corev1.Service) (*Snapshot, error) {
	s := &Snapshot{Pod: pod.DeepCopy(), Services: map[string]*corev1.Service{}, ConfigMaps: map[string]*corev1.ConfigMap{}}
	replacer := []string{pod.Namespace, phNamespace, string(ids.AppUID), phAppUID, string(pod.UID), phPodUID,
		ids.SubmissionID, phSubmissionID}
	if id := pod.Labels[v1beta2.SparkAppSelectorLabel]; id != "" {
		replacer = append(replacer, id, phAppID)
	}

	var prefixes []string
	for _, svc := range svcs {
		svc = svc.DeepCopy()
		replacer = append(replacer, svc.Name, phService)
		if p, ok := strings.CutSuffix(svc.Name, "-driver-svc"); ok {
			prefixes = append(prefixes, p)
		}
		s.Services[svc.Name] = svc
	}
	for _, cm := range cms {
		names, err := s.addConfigMap(cm.DeepCopy())
		if err != nil {
			return nil, err
		}
		replacer = append(replacer, names.replacer...)
		prefixes = append(prefixes, names.prefixes...)
	}
	if p := s.Properties["spark.kubernetes.executor.podNamePrefix"]; p != "" {
		prefixes = append(prefixes, p)
	}
	for _, p := range prefixes {
		replacer = append(replacer, p, phPrefix)
	}
	s.clearServerFields()

	// Replace the generated names wherever they occur: in names, labels, selectors, env,
	// volumes, properties. Longer ones first, so a name is not half-replaced by its prefix.
	data, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	text := replaceAll(string(data), replacer)
	text = localDirRE.ReplaceAllString(text, "/var/data/spark-LOCAL-DIR-UUID")
	text = tokenVolumeRE.ReplaceAllString(text, phTokenVolume)
	out := &Snapshot{}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		return nil, err
	}
	out.tokenVolumeLast()
	// Key the objects by their normalised names.
	out.Services = rekey(out.Services)
	out.ConfigMaps = rekey(out.ConfigMaps)
	return out, nil
}

// generatedNames are the generated names one object gives away: old/new pairs for replaceAll,
// and resource-name prefixes.
type generatedNames struct{ replacer, prefixes []string }

// addConfigMap keeps cm, with its properties file or executor template parsed.
func (s *Snapshot) addConfigMap(cm *corev1.ConfigMap) (generatedNames, error) {
	var g generatedNames
	if text, ok := cm.Data[propertiesKey]; ok {
		if s.Properties != nil {
			return g, fmt.Errorf("two ConfigMaps hold %s", propertiesKey)
		}
		props, err := native.ParseProperties(text)
		if err != nil {
			return g, fmt.Errorf("ConfigMap %s: %s: %w", cm.Name, propertiesKey, err)
		}
		if _, ok := props["spark.app.submitTime"]; ok {
			props["spark.app.submitTime"] = phSubmitTime
		}
		s.Properties = props
		cm.Data[propertiesKey] = parsedMarker
		g.replacer = append(g.replacer, cm.Name, phConfCM)
	}
	if text, ok := cm.Data[templateKey]; ok {
		if s.ExecutorTemplate != nil {
			return g, fmt.Errorf("two ConfigMaps hold %s", templateKey)
		}
		tmpl := &corev1.Pod{}
		if err := yaml.UnmarshalStrict([]byte(text), tmpl); err != nil {
			return g, fmt.Errorf("ConfigMap %s: executor pod template: %w", cm.Name, err)
		}
		s.ExecutorTemplate = tmpl
		cm.Data[templateKey] = parsedMarker
		g.replacer = append(g.replacer, cm.Name, phTemplateCM)
		if p, ok := strings.CutSuffix(cm.Name, "-driver-podspec-conf-map"); ok {
			g.prefixes = append(g.prefixes, p)
		}
	}
	s.ConfigMaps[cm.Name] = cm
	return g, nil
}

// clearServerFields removes what the API server, the schedulers and the kubelet set, which
// neither submitter chooses.
func (s *Snapshot) clearServerFields() {
	clearMeta(&s.Pod.ObjectMeta)
	s.Pod.Spec.NodeName = ""
	s.Pod.Status = corev1.PodStatus{}
	for _, o := range s.Services {
		clearMeta(&o.ObjectMeta)
	}
	for _, o := range s.ConfigMaps {
		clearMeta(&o.ObjectMeta)
	}
}

func clearMeta(m *metav1.ObjectMeta) {
	m.UID = ""
	m.ResourceVersion = ""
	m.CreationTimestamp = metav1.Time{}
	m.ManagedFields = nil
}

// tokenVolumeLast puts the service-account token volume last. The API server's ServiceAccount
// admission appends it to what the pod is created with. A pod spark-submit created gets the
// webhook's settings only after that (mutating webhooks run after the built-in admission); the
// native submitter writes them before creating the pod. Where the token volume lands among the
// others is therefore no difference between the submitters.
func (s *Snapshot) tokenVolumeLast() {
	ps := &s.Pod.Spec
	if i := slices.IndexFunc(ps.Volumes, func(v corev1.Volume) bool { return v.Name == phTokenVolume }); i >= 0 {
		ps.Volumes = append(slices.Delete(slices.Clone(ps.Volumes), i, i+1), ps.Volumes[i])
	}
	for c := range ps.Containers {
		ctr := &ps.Containers[c]
		if i := slices.IndexFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == phTokenVolume }); i >= 0 {
			ctr.VolumeMounts = append(slices.Delete(slices.Clone(ctr.VolumeMounts), i, i+1), ctr.VolumeMounts[i])
		}
	}
}

// replaceAll replaces each old string of the old/new pairs, the longest first.
func replaceAll(s string, pairs []string) string {
	type pair struct{ old, new string }
	var ps []pair
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i] != "" {
			ps = append(ps, pair{pairs[i], pairs[i+1]})
		}
	}
	sort.SliceStable(ps, func(i, j int) bool { return len(ps[i].old) > len(ps[j].old) })
	for _, p := range ps {
		s = strings.ReplaceAll(s, p.old, p.new)
	}
	return s
}

func rekey[T any, PT interface {
	*T
	metav1.Object
}](m map[string]PT) map[string]PT {
	out := make(map[string]PT, len(m))
	for _, o := range m {
		out[o.GetName()] = o
	}
	return out
}
