/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparksubmit

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
	"github.com/sparkop/spark-operator/submission/sparkconf"
)

// Where spec.sparkConfigMap is mounted, as the Kubeflow operator did, so that existing images
// and applications find it at the same place.
const (
	sparkConfigMapVolume = "spark-configmap-volume"
	sparkConfigMapPath   = "/etc/spark/conf"
	envSparkConfDir      = "SPARK_CONF_DIR"
)

// PodTemplates returns the driver and executor pod templates carrying everything Spark
// properties cannot express. The user's spec.driver.template / spec.executor.template are the
// base; the dedicated spec fields are laid over them. The driver template is owned by the
// SparkApplication, which Spark copies to the driver pod, so that deleting the application
// garbage-collects the driver (and, through Spark's own owner references, everything else).
// A batch scheduler's pod settings (sched) are laid over both, so every pod carries them from
// its creation. app must carry its UID (be read from the API server).
func PodTemplates(app *v1beta2.SparkApplication, sched sparkpod.RoleScheduling) (driver, executor *corev1.Pod, err error) {
	if app == nil {
		return nil, nil, errors.New("no SparkApplication given")
	}
	if app.UID == "" {
		return nil, nil, fmt.Errorf("SparkApplication %s/%s has no UID: the driver cannot be given an owner reference to it (read it from the API server first)", app.Namespace, app.Name)
	}
	driver, err = podTemplate(app, sparkconf.Driver, app.Spec.Driver.Template, v1beta2.SparkDriverContainerName)
	if err != nil {
		return nil, nil, err
	}
	executor, err = podTemplate(app, sparkconf.Executor, app.Spec.Executor.Template, v1beta2.SparkExecutorContainerName)
	if err != nil {
		return nil, nil, err
	}

	ref := metav1.OwnerReference{
		APIVersion: v1beta2.GroupVersion.String(),
		Kind:       "SparkApplication",
		Name:       app.Name,
		UID:        app.UID,
		Controller: ptr(true),
	}
	driver.OwnerReferences = slices.DeleteFunc(driver.OwnerReferences, func(r metav1.OwnerReference) bool {
		return r.UID == app.UID || (r.Controller != nil && *r.Controller)
	})
	driver.OwnerReferences = append(driver.OwnerReferences, ref)
	sched.Driver.Apply(&driver.ObjectMeta, &driver.Spec)
	sched.Executor.Apply(&executor.ObjectMeta, &executor.Spec)
	return driver, executor, nil
}

func podTemplate(app *v1beta2.SparkApplication, r sparkconf.Role, base *corev1.PodTemplateSpec, mainName string) (*corev1.Pod, error) {
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}}
	if base != nil {
		b := base.DeepCopy()
		pod.ObjectMeta, pod.Spec = b.ObjectMeta, b.Spec
	}
	p := r.PodSpec(app)

	// Spark takes the container named by podTemplateContainerName as its own, else the first.
	main := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == mainName })
	if main < 0 && len(pod.Spec.Containers) > 0 {
		main = 0
	}
	if main < 0 {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: mainName})
		main = len(pod.Spec.Containers) - 1
	}
	ctr := &pod.Spec.Containers[main]

	ctr.Env = append(ctr.Env, p.Env...)
	ctr.EnvFrom = append(ctr.EnvFrom, p.EnvFrom...)
	if p.SecurityContext != nil {
		ctr.SecurityContext = p.SecurityContext.DeepCopy()
	}
	if p.Lifecycle != nil {
		ctr.Lifecycle = p.Lifecycle.DeepCopy()
	}
	for _, port := range p.Ports {
		ctr.Ports = append(ctr.Ports, corev1.ContainerPort{Name: port.Name, ContainerPort: port.ContainerPort, Protocol: port.Protocol})
	}
	if port := sparkconf.MetricsPort(app, r); port != nil {
		ctr.Ports = append(ctr.Ports, *port)
	}
	if g := p.GPU; g != nil {
		if g.Name == "" {
			return nil, fmt.Errorf("spec.%s.gpu.name is empty: it must be a resource name such as nvidia.com/gpu", r)
		}
		if g.Quantity < 0 {
			return nil, fmt.Errorf("spec.%s.gpu.quantity is negative (%d)", r, g.Quantity)
		}
		if g.Quantity > 0 {
			if ctr.Resources.Limits == nil {
				ctr.Resources.Limits = corev1.ResourceList{}
			}
			ctr.Resources.Limits[corev1.ResourceName(g.Name)] = *resource.NewQuantity(g.Quantity, resource.DecimalSI)
		}
	}

	// Volumes that Spark declares from properties must not be declared here as well.
	inConf, err := sparkconf.ConfVolumes(app, r)
	if err != nil {
		return nil, err
	}
	for _, m := range p.VolumeMounts {
		if !inConf[m.Name] {
			ctr.VolumeMounts = append(ctr.VolumeMounts, m)
		}
	}
	volumes := sparkconf.VolumesByName(app)
	needed := map[string]bool{}
	for _, m := range ctr.VolumeMounts {
		needed[m.Name] = true
	}
	for name := range sparkconf.MountedByOthers(p) {
		needed[name] = true
	}
	for _, v := range app.Spec.Volumes {
		if needed[v.Name] && !inConf[v.Name] {
			setVolume(&pod.Spec, *v.DeepCopy())
		}
	}
	for name := range sparkconf.MountedByOthers(p) {
		if _, ok := volumes[name]; !ok && !hasVolume(&pod.Spec, name) {
			return nil, fmt.Errorf("spec.%s: a sidecar or init container mounts volume %q, which is not declared in spec.volumes", r, name)
		}
	}

	for _, cm := range p.ConfigMaps {
		if cm.Name == "" || cm.Path == "" {
			return nil, fmt.Errorf("spec.%s.configMaps: every entry needs a name and a path (got name %q, path %q)", r, cm.Name, cm.Path)
		}
		vol := v1beta2.ShortName(cm.Name, "-vol")
		setVolume(&pod.Spec, corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}},
		}})
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: vol, MountPath: cm.Path})
	}
	if name := app.Spec.SparkConfigMap; name != nil && *name != "" {
		setVolume(&pod.Spec, corev1.Volume{Name: sparkConfigMapVolume, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: *name}},
		}})
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: sparkConfigMapVolume, MountPath: sparkConfigMapPath})
		ctr.Env = append(ctr.Env, corev1.EnvVar{Name: envSparkConfDir, Value: sparkConfigMapPath})
	}

	pod.Spec.InitContainers = append(pod.Spec.InitContainers, deepCopyContainers(p.InitContainers)...)
	pod.Spec.Containers = append(pod.Spec.Containers, deepCopyContainers(p.Sidecars)...)
	pod.Spec.Tolerations = append(pod.Spec.Tolerations, p.Tolerations...)
	pod.Spec.HostAliases = append(pod.Spec.HostAliases, p.HostAliases...)
	if p.Affinity != nil {
		pod.Spec.Affinity = p.Affinity.DeepCopy()
	}
	if p.PodSecurityContext != nil {
		pod.Spec.SecurityContext = p.PodSecurityContext.DeepCopy()
	}
	if p.HostNetwork != nil {
		pod.Spec.HostNetwork = *p.HostNetwork
	}
	if p.DNSConfig != nil {
		pod.Spec.DNSConfig = p.DNSConfig.DeepCopy()
	}
	if p.PriorityClassName != nil && *p.PriorityClassName != "" {
		pod.Spec.PriorityClassName = *p.PriorityClassName
	}
	if p.SchedulerName != nil && *p.SchedulerName != "" {
		pod.Spec.SchedulerName = *p.SchedulerName
	}
	if p.TerminationGracePeriodSeconds != nil {
		pod.Spec.TerminationGracePeriodSeconds = ptr(*p.TerminationGracePeriodSeconds)
	}
	if p.ShareProcessNamespace != nil {
		pod.Spec.ShareProcessNamespace = ptr(*p.ShareProcessNamespace)
	}
	return pod, nil
}

// setVolume adds v, replacing a volume of the same name from the user's template: the
// dedicated spec fields win over the template.
func setVolume(spec *corev1.PodSpec, v corev1.Volume) {
	if i := slices.IndexFunc(spec.Volumes, func(x corev1.Volume) bool { return x.Name == v.Name }); i >= 0 {
		spec.Volumes[i] = v
		return
	}
	spec.Volumes = append(spec.Volumes, v)
}

func hasVolume(spec *corev1.PodSpec, name string) bool {
	return slices.ContainsFunc(spec.Volumes, func(x corev1.Volume) bool { return x.Name == name })
}

func deepCopyContainers(cs []corev1.Container) []corev1.Container {
	out := make([]corev1.Container, len(cs))
	for i := range cs {
		cs[i].DeepCopyInto(&out[i])
	}
	return out
}

func ptr[T any](v T) *T { return &v }
