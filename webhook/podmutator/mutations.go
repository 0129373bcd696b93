/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package podmutator applies to driver and executor pods the SparkApplication settings that
// Spark properties cannot express. The operator's submitters already put most of them into the
// driver pod and the executor pod template; the mutator adds only what a pod lacks, so a pod
// that already carries a customisation is left as it is (nothing is ever added twice).
package podmutator

import (
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// Names and paths shared with the submitters and the Kubeflow operator, so that images and
// applications find things where they always did, and so that what a submitter already added
// is recognised.
const (
	SparkConfigMapVolume  = "spark-configmap-volume"
	SparkConfigMapPath    = "/etc/spark/conf"
	EnvSparkConfDir       = "SPARK_CONF_DIR"
	HadoopConfigMapVolume = "hadoop-configmap-volume"
	HadoopConfigMapPath   = "/etc/hadoop/conf"
	EnvHadoopConfDir      = "HADOOP_CONF_DIR"

	EnvGoogleCredentials   = "GOOGLE_APPLICATION_CREDENTIALS"
	GCPKeyFileName         = "key.json"
	EnvHadoopTokenLocation = "HADOOP_TOKEN_FILE_LOCATION"
	HadoopTokenFileName    = "hadoop.token"

	PrometheusConfigVolume = "prometheus-vol"
	PrometheusConfigPath   = "/etc/metrics/conf"
	defaultPrometheusPort  = int32(8090)
	defaultPromPortName    = "jmx-exporter"

	// LegacyExecutorContainerName is the executor container's name in old Spark versions.
	LegacyExecutorContainerName = "executor"
)

// PrometheusConfigMapName is the ConfigMap holding the generated metrics.properties and JMX
// exporter configuration of app, mounted at /etc/metrics/conf when the application gives that
// content inline (spec.monitoring.metricsProperties or prometheus.configuration).
func PrometheusConfigMapName(app *v1beta2.SparkApplication) string {
	return app.MetricsConfigMapName()
}

// target is the pod being mutated, its main Spark container and the settings that apply to it.
type target struct {
	pod  *corev1.Pod
	ctr  int // index of the Spark container in pod.Spec.Containers
	app  *v1beta2.SparkApplication
	spec *v1beta2.SparkPodSpec
	role string // v1beta2.SparkRoleDriver or SparkRoleExecutor
}

func (t *target) container() *corev1.Container { return &t.pod.Spec.Containers[t.ctr] }

// mutation adds one customisation to the pod, unless the pod already has it.
type mutation func(t *target) error

// mutations are applied in this order. Each is idempotent.
var mutations = []mutation{
	addOwnerReference,
	addSparkConfigMap,
	addHadoopConfigMap,
	addConfigMaps,
	addSecrets,
	addVolumes,
	addEnv,
	addEnvFrom,
	addEnvVars,
	addEnvSecretKeyRefs,
	addGPU,
	addMemoryLimit,
	addPorts,
	addPrometheus,
	addSchedulerName,
	addPriorityClassName,
	addNodeSelector,
	addAffinity,
	addTolerations,
	addPodSecurityContext,
	addSecurityContext,
	addHostNetwork,
	addHostAliases,
	addDNSConfig,
	addSidecars,
	addInitContainers,
	addTerminationGracePeriod,
	addLifecycle,
	addShareProcessNamespace,
}

// RejectError is a pod the mutator refuses: the customisation asked for cannot be applied.
type RejectError struct{ Message string }

func (e *RejectError) Error() string { return e.Message }

func reject(format string, args ...any) error {
	return &RejectError{Message: fmt.Sprintf(format, args...)}
}

// SparkContainerIndex finds the main Spark container of a pod of the given role by name:
// spark-kubernetes-driver for drivers, spark-kubernetes-executor (or "executor", as old Spark
// versions name it) for executors. A pod whose containers have none of these names (a user pod
// template naming it otherwise) has its first container taken, as Spark does. -1 when the pod
// has no containers.
func SparkContainerIndex(pod *corev1.Pod, role string) int {
	names := []string{v1beta2.SparkDriverContainerName}
	if role == v1beta2.SparkRoleExecutor {
		names = []string{v1beta2.SparkExecutorContainerName, LegacyExecutorContainerName}
	}
	for _, n := range names {
		for i := range pod.Spec.Containers {
			if pod.Spec.Containers[i].Name == n {
				return i
			}
		}
	}
	if len(pod.Spec.Containers) > 0 {
		return 0
	}
	return -1
}

// Mutate applies app's customisations for pod's role (its spark-role label) to pod in place.
// A *RejectError means the pod must be refused.
func Mutate(pod *corev1.Pod, app *v1beta2.SparkApplication) error {
	return mutateAs(pod, app, pod.Labels[v1beta2.SparkRoleLabel])
}

// mutateAs applies app's customisations for role to pod.
func mutateAs(pod *corev1.Pod, app *v1beta2.SparkApplication, role string) error {
	var spec *v1beta2.SparkPodSpec
	switch role {
	case v1beta2.SparkRoleDriver:
		spec = &app.Spec.Driver.SparkPodSpec
	case v1beta2.SparkRoleExecutor:
		spec = &app.Spec.Executor.SparkPodSpec
	default:
		return nil // not a Spark pod: nothing to do
	}
	idx := SparkContainerIndex(pod, role)
	if idx < 0 {
		return reject("%s pod %s has no containers", role, pod.Name)
	}
	t := &target{pod: pod, ctr: idx, app: app, spec: spec, role: role}
	for _, m := range mutations {
		if err := m(t); err != nil {
			return err
		}
	}
	return nil
}

// ---- helpers that add one thing unless it is there ----

// ensureVolume adds v unless the pod has a volume of that name (then the pod's wins: it was put
// there by the submitter, by Spark, or by the user's template).
func ensureVolume(ps *corev1.PodSpec, v corev1.Volume) {
	for _, have := range ps.Volumes {
		if have.Name == v.Name {
			return
		}
	}
	ps.Volumes = append(ps.Volumes, v)
}

// ensureMount adds m to c unless c already mounts the same volume at the same path. Another
// volume at that path is a conflict the API server would reject less clearly.
func ensureMount(c *corev1.Container, m corev1.VolumeMount) error {
	for _, have := range c.VolumeMounts {
		if path.Clean(have.MountPath) != path.Clean(m.MountPath) {
			continue
		}
		if have.Name == m.Name {
			return nil
		}
		return reject("container %s: cannot mount volume %q at %s: volume %q is already mounted there (duplicate mount path)",
			c.Name, m.Name, m.MountPath, have.Name)
	}
	c.VolumeMounts = append(c.VolumeMounts, m)
	return nil
}

// ensureEnv makes e the value c's process sees. When a name is defined more than once the last
// definition applies, so only the last one of e's name counts: if it already equals e nothing
// is added; otherwise e is appended. (Spark's pods define SPARK_CONF_DIR early from the pod
// template and again later itself; an early match is not enough.)
func ensureEnv(c *corev1.Container, e corev1.EnvVar) {
	for i := len(c.Env) - 1; i >= 0; i-- {
		if c.Env[i].Name != e.Name {
			continue
		}
		if equality.Semantic.DeepEqual(c.Env[i], e) {
			return
		}
		break
	}
	c.Env = append(c.Env, e)
}

func ensureEnvFrom(c *corev1.Container, e corev1.EnvFromSource) {
	for _, have := range c.EnvFrom {
		if equality.Semantic.DeepEqual(have, e) {
			return
		}
	}
	c.EnvFrom = append(c.EnvFrom, e)
}

// ensureContainer adds c to list unless a container of that name is there.
func ensureContainer(list []corev1.Container, c corev1.Container) []corev1.Container {
	for _, have := range list {
		if have.Name == c.Name {
			return list
		}
	}
	return append(list, *c.DeepCopy())
}

func configMapVolume(volume, configMap string) corev1.Volume {
	return corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}},
	}}
}

// mountConfigMap adds the volume of a ConfigMap and its mount in the Spark container.
func mountConfigMap(t *target, volume, configMap, mountPath string) error {
	if err := ensureMount(t.container(), corev1.VolumeMount{Name: volume, MountPath: mountPath}); err != nil {
		return err
	}
	ensureVolume(&t.pod.Spec, configMapVolume(volume, configMap))
	return nil
}

// ---- the mutations ----

// addOwnerReference makes the SparkApplication the controller of its driver, so that deleting
// the application deletes the driver (and through it the executors).
func addOwnerReference(t *target) error {
	if t.role != v1beta2.SparkRoleDriver || t.app.UID == "" {
		return nil
	}
	for _, r := range t.pod.OwnerReferences {
		if r.UID == t.app.UID {
			return nil
		}
	}
	yes := true
	ref := metav1.OwnerReference{
		APIVersion: v1beta2.GroupVersion.String(),
		Kind:       "SparkApplication",
		Name:       t.app.Name,
		UID:        t.app.UID,
		Controller: &yes,
	}
	for _, r := range t.pod.OwnerReferences {
		if r.Controller != nil && *r.Controller {
			ref.Controller = nil // a pod has at most one controller; keep the existing one
		}
	}
	t.pod.OwnerReferences = append(t.pod.OwnerReferences, ref)
	return nil
}

// addSparkConfigMap mounts spec.sparkConfigMap at /etc/spark/conf and sets SPARK_CONF_DIR.
func addSparkConfigMap(t *target) error {
	name := t.app.Spec.SparkConfigMap
	if name == nil || *name == "" {
		return nil
	}
	if err := mountConfigMap(t, SparkConfigMapVolume, *name, SparkConfigMapPath); err != nil {
		return err
	}
	ensureEnv(t.container(), corev1.EnvVar{Name: EnvSparkConfDir, Value: SparkConfigMapPath})
	return nil
}

// addHadoopConfigMap mounts spec.hadoopConfigMap at /etc/hadoop/conf and sets HADOOP_CONF_DIR.
func addHadoopConfigMap(t *target) error {
	name := t.app.Spec.HadoopConfigMap
	if name == nil || *name == "" {
		return nil
	}
	if err := mountConfigMap(t, HadoopConfigMapVolume, *name, HadoopConfigMapPath); err != nil {
		return err
	}
	ensureEnv(t.container(), corev1.EnvVar{Name: EnvHadoopConfDir, Value: HadoopConfigMapPath})
	return nil
}

// addConfigMaps mounts each of the role's configMaps at its path, as volume <name>-vol.
func addConfigMaps(t *target) error {
	for i, cm := range t.spec.ConfigMaps {
		if cm.Name == "" || cm.Path == "" {
			return reject("spec.%s.configMaps[%d]: needs a name and a path", t.role, i)
		}
		if err := mountConfigMap(t, v1beta2.ShortName(cm.Name, "-vol"), cm.Name, cm.Path); err != nil {
			return err
		}
	}
	return nil
}

// addSecrets mounts each of the role's secrets at its path, as volume <name>-volume (the name
// Spark gives the Secrets it mounts itself), and points GOOGLE_APPLICATION_CREDENTIALS or
// HADOOP_TOKEN_FILE_LOCATION at the key file of typed Secrets.
func addSecrets(t *target) error {
	for i, s := range t.spec.Secrets {
		if s.Name == "" || s.Path == "" {
			return reject("spec.%s.secrets[%d]: needs a name and a path", t.role, i)
		}
		vol := v1beta2.ShortName(s.Name, "-volume")
		if err := ensureMount(t.container(), corev1.VolumeMount{Name: vol, MountPath: s.Path}); err != nil {
			return err
		}
		ensureVolume(&t.pod.Spec, corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: s.Name},
		}})
		switch s.Type {
		case v1beta2.SecretTypeGCPServiceAccount:
			ensureEnv(t.container(), corev1.EnvVar{Name: EnvGoogleCredentials, Value: path.Join(s.Path, GCPKeyFileName)})
		case v1beta2.SecretTypeHadoopDelegationToken:
			ensureEnv(t.container(), corev1.EnvVar{Name: EnvHadoopTokenLocation, Value: path.Join(s.Path, HadoopTokenFileName)})
		case v1beta2.SecretTypeGeneric, "":
		default:
			return reject("spec.%s.secrets[%d].secretType: unknown type %q", t.role, i, s.Type)
		}
	}
	return nil
}

// addVolumes adds the role's volumeMounts to the Spark container, and the spec.volumes they, or
// the role's sidecars and init containers, refer to.
func addVolumes(t *target) error {
	byName := map[string]*corev1.Volume{}
	for i := range t.app.Spec.Volumes {
		byName[t.app.Spec.Volumes[i].Name] = &t.app.Spec.Volumes[i]
	}
	need := func(name string) error {
		v, ok := byName[name]
		if !ok {
			for _, have := range t.pod.Spec.Volumes {
				if have.Name == name {
					return nil
				}
			}
			return reject("spec.%s: volume %q is mounted but not declared in spec.volumes", t.role, name)
		}
		ensureVolume(&t.pod.Spec, *v.DeepCopy())
		return nil
	}
	for _, m := range t.spec.VolumeMounts {
		if err := ensureMount(t.container(), m); err != nil {
			return err
		}
		if err := need(m.Name); err != nil {
			return err
		}
	}
	for _, list := range [][]corev1.Container{t.spec.Sidecars, t.spec.InitContainers} {
		for _, c := range list {
			for _, m := range c.VolumeMounts {
				if err := need(m.Name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func addEnv(t *target) error {
	for _, e := range t.spec.Env {
		ensureEnv(t.container(), e)
	}
	return nil
}

func addEnvFrom(t *target) error {
	for _, e := range t.spec.EnvFrom {
		ensureEnvFrom(t.container(), e)
	}
	return nil
}

// addEnvVars adds the deprecated envVars map, in key order.
func addEnvVars(t *target) error {
	for _, k := range sortedKeys(t.spec.EnvVars) {
		ensureEnv(t.container(), corev1.EnvVar{Name: k, Value: t.spec.EnvVars[k]})
	}
	return nil
}

// addEnvSecretKeyRefs adds the deprecated envSecretKeyRefs map, in key order.
func addEnvSecretKeyRefs(t *target) error {
	for _, k := range sortedKeys(t.spec.EnvSecretKeyRefs) {
		ref := t.spec.EnvSecretKeyRefs[k]
		if ref.Name == "" || ref.Key == "" {
			return reject("spec.%s.envSecretKeyRefs[%s]: needs a secret name and a key", t.role, k)
		}
		ensureEnv(t.container(), corev1.EnvVar{Name: k, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name}, Key: ref.Key},
		}})
	}
	return nil
}

// ValidateExtendedResourceName checks that name can be a GPU (extended) resource: a qualified
// name with a domain prefix outside kubernetes.io, such as nvidia.com/gpu.
func ValidateExtendedResourceName(name string) error {
	if errs := utilvalidation.IsQualifiedName(name); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid resource name: %s", name, strings.Join(errs, "; "))
	}
	domain, _, ok := strings.Cut(name, "/")
	if !ok {
		return fmt.Errorf("%q is not an extended resource name: it needs a domain prefix, as in nvidia.com/gpu", name)
	}
	if domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io") || strings.HasPrefix(name, "requests.") {
		return fmt.Errorf("%q is not an extended resource name: the %s domain is reserved", name, domain)
	}
	return nil
}

// addGPU sets the limit of the role's GPU resource on the Spark container.
func addGPU(t *target) error {
	g := t.spec.GPU
	if g == nil {
		return nil
	}
	if err := ValidateExtendedResourceName(g.Name); err != nil {
		return reject("spec.%s.gpu.name: %v", t.role, err)
	}
	if g.Quantity <= 0 {
		return nil
	}
	c := t.container()
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	c.Resources.Limits[corev1.ResourceName(g.Name)] = *resource.NewQuantity(g.Quantity, resource.DecimalSI)
	return nil
}

// addMemoryLimit replaces the Spark container's memory limit with the role's memoryLimit.
func addMemoryLimit(t *target) error {
	if t.spec.MemoryLimit == nil || *t.spec.MemoryLimit == "" {
		return nil
	}
	q, err := resource.ParseQuantity(*t.spec.MemoryLimit)
	if err != nil {
		return reject("spec.%s.memoryLimit %q: %v", t.role, *t.spec.MemoryLimit, err)
	}
	c := t.container()
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	c.Resources.Limits[corev1.ResourceMemory] = q
	return nil
}

// ensurePort adds p to c unless a port of the same name, or the same number and protocol, is
// on any container of the pod.
func ensurePort(ps *corev1.PodSpec, c *corev1.Container, p corev1.ContainerPort) {
	if p.Protocol == "" {
		p.Protocol = corev1.ProtocolTCP
	}
	for _, ctr := range ps.Containers {
		for _, have := range ctr.Ports {
			proto := have.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			if (p.Name != "" && have.Name == p.Name) || (have.ContainerPort == p.ContainerPort && proto == p.Protocol) {
				return
			}
		}
	}
	c.Ports = append(c.Ports, p)
}

func addPorts(t *target) error {
	for _, p := range t.spec.Ports {
		ensurePort(&t.pod.Spec, t.container(), corev1.ContainerPort{Name: p.Name, ContainerPort: p.ContainerPort, Protocol: p.Protocol})
	}
	return nil
}

// addPrometheus adds the JMX exporter's port when the role's metrics are exposed, and mounts
// the generated configuration ConfigMap when the application gives the configuration inline.
func addPrometheus(t *target) error {
	m := t.app.Spec.Monitoring
	if m == nil || m.Prometheus == nil || m.Prometheus.JmxExporterJar == "" {
		return nil
	}
	if (t.role == v1beta2.SparkRoleDriver && !m.ExposeDriverMetrics) || (t.role == v1beta2.SparkRoleExecutor && !m.ExposeExecutorMetrics) {
		return nil
	}
	p := m.Prometheus
	port, name := defaultPrometheusPort, defaultPromPortName
	if p.Port != nil {
		port = *p.Port
	}
	if p.PortName != nil && *p.PortName != "" {
		name = *p.PortName
	}
	ensurePort(&t.pod.Spec, t.container(), corev1.ContainerPort{Name: name, ContainerPort: port, Protocol: corev1.ProtocolTCP})
	if len(t.app.InlineMetricsConfig()) == 0 {
		return nil
	}
	if err := ensureMount(t.container(), corev1.VolumeMount{Name: PrometheusConfigVolume, MountPath: PrometheusConfigPath}); err != nil {
		return err
	}
	// Optional: the pod starts even before the ConfigMap exists (Spark then falls back to its
	// defaults for what it cannot read).
	v := configMapVolume(PrometheusConfigVolume, PrometheusConfigMapName(t.app))
	v.ConfigMap.Optional = ptrTo(true)
	ensureVolume(&t.pod.Spec, v)
	return nil
}

func ptrTo[T any](v T) *T { return &v }

// addSchedulerName sets the scheduler: the application's batch scheduler wins over the role's
// schedulerName.
func addSchedulerName(t *target) error {
	if b := t.app.Spec.BatchScheduler; b != nil && *b != "" && *b != "default" {
		t.pod.Spec.SchedulerName = *b
		return nil
	}
	if s := t.spec.SchedulerName; s != nil && *s != "" {
		t.pod.Spec.SchedulerName = *s
	}
	return nil
}

func addPriorityClassName(t *target) error {
	p := t.spec.PriorityClassName
	if p == nil || *p == "" || t.pod.Spec.PriorityClassName == *p {
		return nil
	}
	// The Priority admission plugin resolved spec.priority from the pod's class before the
	// webhook ran; a value left from another class would contradict the new class.
	t.pod.Spec.PriorityClassName = *p
	t.pod.Spec.Priority = nil
	return nil
}

// addNodeSelector merges spec.nodeSelector and the role's nodeSelector into the pod's; the
// role's value wins for a key in both.
func addNodeSelector(t *target) error {
	for _, sel := range []map[string]string{t.app.Spec.NodeSelector, t.spec.NodeSelector} {
		for k, v := range sel {
			if t.pod.Spec.NodeSelector == nil {
				t.pod.Spec.NodeSelector = map[string]string{}
			}
			t.pod.Spec.NodeSelector[k] = v
		}
	}
	return nil
}

func addAffinity(t *target) error {
	if t.spec.Affinity != nil {
		t.pod.Spec.Affinity = t.spec.Affinity.DeepCopy()
	}
	return nil
}

func addTolerations(t *target) error {
outer:
	for _, tol := range t.spec.Tolerations {
		for _, have := range t.pod.Spec.Tolerations {
			if equality.Semantic.DeepEqual(have, tol) {
				continue outer
			}
		}
		t.pod.Spec.Tolerations = append(t.pod.Spec.Tolerations, *tol.DeepCopy())
	}
	return nil
}

func addPodSecurityContext(t *target) error {
	if t.spec.PodSecurityContext != nil {
		t.pod.Spec.SecurityContext = t.spec.PodSecurityContext.DeepCopy()
	}
	return nil
}

func addSecurityContext(t *target) error {
	if t.spec.SecurityContext != nil {
		t.container().SecurityContext = t.spec.SecurityContext.DeepCopy()
	}
	return nil
}

// addHostNetwork puts the pod on the host network; its DNS policy becomes
// ClusterFirstWithHostNet so that it still resolves cluster names.
func addHostNetwork(t *target) error {
	if t.spec.HostNetwork == nil || !*t.spec.HostNetwork {
		return nil
	}
	t.pod.Spec.HostNetwork = true
	t.pod.Spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	return nil
}

func addHostAliases(t *target) error {
outer:
	for _, a := range t.spec.HostAliases {
		for _, have := range t.pod.Spec.HostAliases {
			if equality.Semantic.DeepEqual(have, a) {
				continue outer
			}
		}
		t.pod.Spec.HostAliases = append(t.pod.Spec.HostAliases, *a.DeepCopy())
	}
	return nil
}

func addDNSConfig(t *target) error {
	if t.spec.DNSConfig != nil {
		t.pod.Spec.DNSConfig = t.spec.DNSConfig.DeepCopy()
	}
	return nil
}

func addSidecars(t *target) error {
	for _, c := range t.spec.Sidecars {
		t.pod.Spec.Containers = ensureContainer(t.pod.Spec.Containers, c)
	}
	return nil
}

func addInitContainers(t *target) error {
	for _, c := range t.spec.InitContainers {
		t.pod.Spec.InitContainers = ensureContainer(t.pod.Spec.InitContainers, c)
	}
	return nil
}

func addTerminationGracePeriod(t *target) error {
	if s := t.spec.TerminationGracePeriodSeconds; s != nil {
		v := *s
		t.pod.Spec.TerminationGracePeriodSeconds = &v
	}
	return nil
}

func addLifecycle(t *target) error {
	if t.spec.Lifecycle != nil {
		t.container().Lifecycle = t.spec.Lifecycle.DeepCopy()
	}
	return nil
}

func addShareProcessNamespace(t *target) error {
	if s := t.spec.ShareProcessNamespace; s != nil {
		v := *s
		t.pod.Spec.ShareProcessNamespace = &v
	}
	return nil
}
