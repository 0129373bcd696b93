/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

import (
	"fmt"
	"maps"
	"path"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkconf"
)

// Names and paths shared with Spark and the Kubeflow operator, so that images and
// applications find things where they always did, and so that what is already on a pod is
// recognised.
const (
	SparkConfigMapVolume  = "spark-configmap-volume"
	SparkConfigMapPath    = "/etc/spark/conf"
	EnvSparkConfDir       = "SPARK_CONF_DIR"
	HadoopConfigMapVolume = "hadoop-configmap-volume"
	HadoopConfigMapPath   = "/etc/hadoop/conf"
	EnvHadoopConfDir      = "HADOOP_CONF_DIR"

	PrometheusConfigVolume = "prometheus-vol"
	PrometheusConfigPath   = "/etc/metrics/conf"

	// LegacyExecutorContainerName is the executor container's name in old Spark versions.
	LegacyExecutorContainerName = "executor"
)

// target is the pod being written, its main Spark container and the settings that apply to it.
type target struct {
	pod  *corev1.Pod
	ctr  int // index of the Spark container in pod.Spec.Containers
	app  *v1beta2.SparkApplication
	spec *v1beta2.SparkPodSpec
	role Role
	// forSpark is set when writing a pod template for Spark: settings that the submitters
	// pass as Spark properties are left to Spark.
	forSpark bool
	// inConf are the role's volume mounts that Spark properties declare (forSpark only).
	inConf map[string]bool
}

func (t *target) container() *corev1.Container { return &t.pod.Spec.Containers[t.ctr] }

// setting writes one customisation onto the pod, unless the pod already has it. inConf
// settings are expressed as Spark properties (sparkconf), so Spark writes them
// itself and a pod template for Spark leaves them out.
type setting struct {
	write  func(t *target) error
	inConf bool
}

// settings are written in this order. Each is idempotent.
var settings = []setting{
	{write: addOwnerReference},
	{write: addSparkConfigMap},
	{write: addHadoopConfigMap, inConf: true},
	{write: addConfigMaps},
	{write: addSecrets, inConf: true},
	{write: addVolumes},
	{write: addEnvFrom},
	{write: addEnvVars, inConf: true},
	{write: addEnvSecretKeyRefs, inConf: true},
	{write: addEnv}, // after every other setting that writes env: the user's comes last
	{write: addGPU},
	{write: addMemoryLimit},
	{write: addPorts},
	{write: addPrometheus},
	{write: addSchedulerName},
	{write: addPriorityClassName},
	{write: addNodeSelector, inConf: true},
	{write: addAffinity},
	{write: addTolerations},
	{write: addPodSecurityContext},
	{write: addSecurityContext},
	{write: addHostNetwork},
	{write: addHostAliases},
	{write: addDNSConfig},
	{write: addSidecars},
	{write: addInitContainers},
	{write: addTerminationGracePeriod},
	{write: addLifecycle},
	{write: addTerminationMessage},
	{write: addShareProcessNamespace},
}

// RejectError is a spec whose customisation cannot be applied to a pod.
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
func SparkContainerIndex(pod *corev1.Pod, role Role) int {
	names := []string{v1beta2.SparkDriverContainerName}
	if role == v1beta2.SparkRoleExecutor {
		names = []string{v1beta2.SparkExecutorContainerName, LegacyExecutorContainerName}
	}
	for _, n := range names {
		if i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == n }); i >= 0 {
			return i
		}
	}
	if len(pod.Spec.Containers) > 0 {
		return 0
	}
	return -1
}

// Customise writes every setting of app for role onto pod that the pod lacks, by the
// precedence rule (precedence.go): what a batch scheduler decided stays. The mutating webhook
// does this to every Spark pod, and the native submitter to its driver once Spark's own
// settings are on it. Users' env ends up last, after Spark's. A *RejectError means the
// spec cannot be applied.
func Customise(pod *corev1.Pod, app *v1beta2.SparkApplication, role Role) error {
	idx := SparkContainerIndex(pod, role)
	if idx < 0 {
		return reject("%s pod %s has no containers", role, pod.Name)
	}
	t := &target{pod: pod, ctr: idx, app: app, spec: specOf(app, role), role: role}
	// The user's env is taken out and put back last (addEnv), so that the settings before it
	// judge the env without it, and a second pass changes nothing.
	c := t.container()
	c.Env = slices.DeleteFunc(c.Env, func(have corev1.EnvVar) bool {
		return slices.ContainsFunc(t.spec.Env, func(e corev1.EnvVar) bool { return equality.Semantic.DeepEqual(have, e) })
	})
	return write(t)
}

// Template is the pod template Spark builds the role's pods from (both submitters give it to
// Spark): the role's spec.*.template with every setting Spark properties cannot express. The
// Spark container is the template's container of Spark's name, else its first, else a new one.
func Template(app *v1beta2.SparkApplication, role Role) (*corev1.Pod, error) {
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}}
	spec := specOf(app, role)
	if spec.Template != nil {
		t := spec.Template.DeepCopy()
		pod.ObjectMeta, pod.Spec = t.ObjectMeta, t.Spec
		// A pod so labelled skips the pod-mutating webhook: the native submitter's to set.
		delete(pod.Labels, v1beta2.LabelCustomised)
	}
	idx := SparkContainerIndex(pod, role)
	if idx < 0 {
		name := v1beta2.SparkDriverContainerName
		if role == RoleExecutor {
			name = v1beta2.SparkExecutorContainerName
		}
		pod.Spec.Containers = []corev1.Container{{Name: name}}
		idx = 0
	}
	inConf, err := sparkconf.ConfVolumes(app, role)
	if err != nil {
		return nil, &RejectError{Message: err.Error()}
	}
	if err := write(&target{pod: pod, ctr: idx, app: app, spec: spec, role: role, forSpark: true, inConf: inConf}); err != nil {
		return nil, err
	}
	return pod, nil
}

func write(t *target) error {
	for _, s := range settings {
		if t.forSpark && s.inConf {
			continue
		}
		if err := s.write(t); err != nil {
			return err
		}
	}
	return nil
}

func specOf(app *v1beta2.SparkApplication, role Role) *v1beta2.SparkPodSpec {
	if role == RoleExecutor {
		return &app.Spec.Executor.SparkPodSpec
	}
	return &app.Spec.Driver.SparkPodSpec
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

// addOwnerReference makes the SparkApplication the owner of its pods, as the Kubeflow operator
// does: the controlling owner of its driver, blocking the application's deletion in the
// foreground until the driver is gone; and a plain owner of its executors (which the driver
// controls), so that tools following owners from a pod (Kueue among them) find the
// application. An executor's reference does not block deletion: setting that needs update
// rights on the application, which the driver's service account that creates executors lacks.
func addOwnerReference(t *target) error {
	if t.app.UID == "" || slices.ContainsFunc(t.pod.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == t.app.UID }) {
		return nil
	}
	yes := true
	ref := metav1.OwnerReference{
		APIVersion: v1beta2.GroupVersion.String(),
		Kind:       "SparkApplication",
		Name:       t.app.Name,
		UID:        t.app.UID,
	}
	// A pod has at most one controller; an existing one is kept.
	if t.role == RoleDriver && metav1.GetControllerOfNoCopy(t.pod) == nil {
		ref.Controller, ref.BlockOwnerDeletion = &yes, &yes
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
		env, err := sparkconf.SecretEnv(t.role, i, s)
		if err != nil {
			return &RejectError{Message: err.Error()}
		}
		vol := v1beta2.ShortName(s.Name, "-volume")
		if err := ensureMount(t.container(), corev1.VolumeMount{Name: vol, MountPath: s.Path}); err != nil {
			return err
		}
		ensureVolume(&t.pod.Spec, corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: s.Name},
		}})
		if env.Name != "" {
			ensureEnv(t.container(), env)
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
		if t.inConf[m.Name] {
			continue // Spark declares and mounts it from its properties
		}
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

// addEnv puts the role's env after Spark's own, so that a user's value wins and may refer to
// Spark's variables. In a pod template Spark's come later still; the webhook, and the native
// submitter's last pass, move the user's env to the end (see Customise).
func addEnv(t *target) error {
	t.container().Env = append(t.container().Env, t.spec.Env...)
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
	for _, k := range slices.Sorted(maps.Keys(t.spec.EnvVars)) {
		ensureEnv(t.container(), corev1.EnvVar{Name: k, Value: t.spec.EnvVars[k]})
	}
	return nil
}

// addEnvSecretKeyRefs adds the deprecated envSecretKeyRefs map, in key order.
func addEnvSecretKeyRefs(t *target) error {
	for _, k := range slices.Sorted(maps.Keys(t.spec.EnvSecretKeyRefs)) {
		ref := t.spec.EnvSecretKeyRefs[k]
		if err := sparkconf.CheckEnvSecretKeyRef(t.role, k, ref); err != nil {
			return &RejectError{Message: err.Error()}
		}
		ensureEnv(t.container(), corev1.EnvVar{Name: k, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name}, Key: ref.Key},
		}})
	}
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
	port := sparkconf.MetricsPort(t.app, t.role)
	if port == nil {
		return nil
	}
	ensurePort(&t.pod.Spec, t.container(), *port)
	if len(t.app.InlineMetricsConfig()) == 0 {
		return nil
	}
	if err := ensureMount(t.container(), corev1.VolumeMount{Name: PrometheusConfigVolume, MountPath: PrometheusConfigPath}); err != nil {
		return err
	}
	// Optional: the pod starts even before the ConfigMap exists (Spark then falls back to its
	// defaults for what it cannot read).
	v := configMapVolume(PrometheusConfigVolume, t.app.MetricsConfigMapName())
	v.ConfigMap.Optional = ptr.To(true)
	ensureVolume(&t.pod.Spec, v)
	return nil
}

// addPodSecurityContext lays the role's pod security context over the pod's, field by field.
func addPodSecurityContext(t *target) error {
	t.pod.Spec.SecurityContext = overlay(t.pod.Spec.SecurityContext, t.spec.PodSecurityContext)
	return nil
}

// addSecurityContext lays the role's security context over the Spark container's, field by field.
func addSecurityContext(t *target) error {
	t.container().SecurityContext = overlay(t.container().SecurityContext, t.spec.SecurityContext)
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

// addDNSConfig lays the role's DNS config over the pod's, field by field.
func addDNSConfig(t *target) error {
	t.pod.Spec.DNSConfig = overlay(t.pod.Spec.DNSConfig, t.spec.DNSConfig)
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

// addLifecycle lays the role's lifecycle over the Spark container's, hook by hook.
func addLifecycle(t *target) error {
	t.container().Lifecycle = overlay(t.container().Lifecycle, t.spec.Lifecycle)
	return nil
}

func addShareProcessNamespace(t *target) error {
	if s := t.spec.ShareProcessNamespace; s != nil {
		v := *s
		t.pod.Spec.ShareProcessNamespace = &v
	}
	return nil
}
