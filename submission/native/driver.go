/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package native

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/utils/ptr"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkconf"
	"github.com/sparkop/spark-operator/sparkpod"
)

// driverParams are what the driver pod takes from Build besides the application and its conf.
type driverParams struct {
	image, mainClass, resourceType string
	labels                         map[string]string
	appID, sparkUser, localDirID   string
	cmName, tmplCMName             string
	ports                          driverPorts
}

// driverPod is the driver pod as Spark's driver feature steps build it on the template.
func driverPod(app *v1beta2.SparkApplication, c conf, p driverParams) (*corev1.Pod, error) {
	// The spark-submit submitter gives Spark this template, which Spark's feature steps add to.
	pod, err := sparkpod.Template(app, sparkpod.RoleDriver)
	if err != nil {
		return nil, userError("%v", err)
	}
	setDriverMeta(pod, app.Namespace, c, p.labels)
	ctr := driverContainer(pod, c, p.image)
	if err := setDriverResources(ctr, c); err != nil {
		return nil, err
	}
	ctr.Ports = append(ctr.Ports, p.ports.containerPorts()...)

	// The env, volumes and mounts Spark's feature steps add, in the order they add them.
	a := &additions{env: ctr.Env}
	if err := a.driverEnv(app, c, p); err != nil {
		return nil, err
	}
	a.secretVolumes(c)
	if err := a.confVolumes(app); err != nil {
		return nil, err
	}
	a.pythonEnv(c, p.resourceType)
	a.hadoopConf(c)
	a.podTemplate(p.tmplCMName)
	a.localDirs(ctr.VolumeMounts, c, p.localDirID)
	a.sparkConf(p.cmName)
	ctr.Env = a.env
	ctr.VolumeMounts = append(ctr.VolumeMounts, a.mounts...)
	pod.Spec.Volumes = append(pod.Spec.Volumes, a.volumes...)

	ctr.Args = driverArgs(&app.Spec, p.mainClass)
	setDriverPodSpec(pod, c)
	// What the webhook would still do to a pod spark-submit created (the user's env after
	// Spark's, for one), done here so the pod needs no webhook.
	if err := sparkpod.Customise(pod, app, sparkpod.RoleDriver); err != nil {
		return nil, userError("%v", err)
	}
	// And so marked, the webhook's configuration leaves it out: one admission round trip less
	// per application.
	pod.Labels[v1beta2.LabelCustomised] = "true"
	return pod, nil
}

// setDriverMeta names the pod and adds the driver's labels and annotations to the template's.
func setDriverMeta(pod *corev1.Pod, namespace string, c conf, labels map[string]string) {
	pod.Name = c[keyDriverPodName]
	pod.Namespace = namespace
	pod.GenerateName = ""
	pod.Labels = merge(pod.Labels, labels)
	pod.Annotations = merge(pod.Annotations, c.prefixed(prefixDriverAnnotation))
}

// driverContainer is the pod's Spark container, given its name if the template left it
// unnamed, its image and its pull policy.
func driverContainer(pod *corev1.Pod, c conf, image string) *corev1.Container {
	idx := sparkpod.SparkContainerIndex(pod, sparkpod.RoleDriver)
	ctr := &pod.Spec.Containers[idx]
	if ctr.Name == "" {
		ctr.Name = v1beta2.SparkDriverContainerName
	}
	ctr.Image = image
	if pp := c[keyPullPolicy]; pp != "" {
		ctr.ImagePullPolicy = corev1.PullPolicy(pp)
	}
	return ctr
}

// setDriverResources sets cpu, memory and device resources as Spark does, keeping whatever
// else the template asks for.
func setDriverResources(ctr *corev1.Container, c conf) error {
	res, err := sparkpod.ContainerResources(sparkpod.RoleDriver, c)
	if err != nil {
		return userError("%v", err)
	}
	ctr.Resources.Requests = merge(ctr.Resources.Requests, res.Requests)
	ctr.Resources.Limits = merge(ctr.Resources.Limits, res.Limits)
	return nil
}

func (p driverPorts) containerPorts() []corev1.ContainerPort {
	return []corev1.ContainerPort{
		{Name: "driver-rpc-port", ContainerPort: p.rpc, Protocol: corev1.ProtocolTCP},
		{Name: "blockmanager", ContainerPort: p.blockManager, Protocol: corev1.ProtocolTCP},
		{Name: "spark-ui", ContainerPort: p.ui, Protocol: corev1.ProtocolTCP},
	}
}

// additions are what Spark's feature steps add to the driver container's env and mounts and
// to the pod's volumes; the order of env decides which value applies.
type additions struct {
	env     []corev1.EnvVar
	mounts  []corev1.VolumeMount
	volumes []corev1.Volume
}

func (a *additions) mount(v corev1.Volume, m corev1.VolumeMount) {
	a.volumes = append(a.volumes, v)
	a.mounts = append(a.mounts, m)
}

// driverEnv adds the basic driver step's env: the user, the application ID, the driverEnv
// properties, the bind address, then the secretKeyRef properties.
func (a *additions) driverEnv(app *v1beta2.SparkApplication, c conf, p driverParams) error {
	user := p.sparkUser
	if s := &app.Spec; s.ProxyUser != nil && *s.ProxyUser != "" {
		user = *s.ProxyUser
	}
	a.env = append(a.env,
		corev1.EnvVar{Name: "SPARK_USER", Value: user},
		corev1.EnvVar{Name: "SPARK_APPLICATION_ID", Value: p.appID},
	)
	driverEnv := c.prefixed(prefixDriverEnv)
	for _, k := range slices.Sorted(maps.Keys(driverEnv)) {
		a.env = append(a.env, corev1.EnvVar{Name: k, Value: driverEnv[k]})
	}
	a.env = append(a.env, corev1.EnvVar{Name: "SPARK_DRIVER_BIND_ADDRESS", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"},
	}})
	refs := c.prefixed(prefixDriverSecretKeyRef)
	for _, k := range slices.Sorted(maps.Keys(refs)) {
		name, key, ok := strings.Cut(refs[k], ":")
		if !ok || name == "" || key == "" {
			return userError("secret key reference %q for %s: want <secret>:<key>", refs[k], k)
		}
		a.env = append(a.env, corev1.EnvVar{Name: k, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key},
		}})
	}
	return nil
}

// secretVolumes mounts the secrets the properties name, by secret name.
func (a *additions) secretVolumes(c conf) {
	secrets := c.prefixed(prefixDriverSecrets)
	for _, name := range slices.Sorted(maps.Keys(secrets)) {
		vol := name + "-volume"
		a.mount(corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}},
			corev1.VolumeMount{Name: vol, MountPath: secrets[name]})
	}
}

// confVolumes is Spark's MountVolumesFeatureStep, after its secrets: the volumes the
// properties declare.
func (a *additions) confVolumes(app *v1beta2.SparkApplication) error {
	inConf, err := sparkconf.ConfVolumes(app, sparkconf.Driver)
	if err != nil {
		return userError("%v", err)
	}
	declared := sparkconf.VolumesByName(app)
	for _, m := range app.Spec.Driver.VolumeMounts {
		if inConf[m.Name] {
			a.mount(*declared[m.Name].DeepCopy(), m)
		}
	}
	return nil
}

func (a *additions) pythonEnv(c conf, resourceType string) {
	if resourceType != "python" {
		return
	}
	if py := c[keyPySparkPython]; py != "" {
		a.env = append(a.env, corev1.EnvVar{Name: "PYSPARK_PYTHON", Value: py})
	}
	if py := c.get(keyPySparkDriverPython, c[keyPySparkPython]); py != "" {
		a.env = append(a.env, corev1.EnvVar{Name: "PYSPARK_DRIVER_PYTHON", Value: py})
	}
}

// hadoopConf is Spark's HadoopConfDriverFeatureStep, after DriverCommandFeatureStep's env.
func (a *additions) hadoopConf(c conf) {
	if cm := sparkpod.HadoopConfigMap(sparkpod.RoleDriver, c); cm != "" {
		v, m, e := sparkpod.SparkHadoopConf(cm)
		a.mount(v, m)
		a.env = append(a.env, e)
	}
}

// podTemplate mounts the executor pod template ConfigMap, if there is one (tmplCMName), where
// the properties tell the driver to find it.
func (a *additions) podTemplate(tmplCMName string) {
	if tmplCMName == "" {
		return
	}
	a.mount(corev1.Volume{Name: templateVolumeName, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: tmplCMName},
		Items:                []corev1.KeyToPath{{Key: templateKey, Path: templateFileName}},
	}}}, corev1.VolumeMount{Name: templateVolumeName, MountPath: templateMountPath})
}

// localDirs is Spark's LocalDirsFeatureStep: the container's mounts (the template's, then
// those added so far) of volumes named spark-local-dir-*, if the user declared any; else one
// emptyDir per directory, under a random name by default.
func (a *additions) localDirs(templateMounts []corev1.VolumeMount, c conf, localDirID string) {
	var dirs []string
	for _, m := range append(slices.Clip(templateMounts), a.mounts...) {
		if strings.HasPrefix(m.Name, localDirVolumePrefix) {
			dirs = append(dirs, m.MountPath)
		}
	}
	if len(dirs) == 0 {
		dirs = []string{defaultLocalDirBase + localDirID}
		if v := c["spark.local.dir"]; v != "" {
			dirs = strings.Split(v, ",")
		}
		var medium corev1.StorageMedium
		if c[keyLocalDirsTmpfs] == "true" {
			medium = corev1.StorageMediumMemory
		}
		for i, dir := range dirs {
			vol := localDirVolumePrefix + strconv.Itoa(i+1)
			a.mount(corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: medium}}},
				corev1.VolumeMount{Name: vol, MountPath: dir})
		}
	}
	a.env = append(a.env, corev1.EnvVar{Name: "SPARK_LOCAL_DIRS", Value: strings.Join(dirs, ",")})
}

// sparkConf mounts spark.properties from its ConfigMap (cmName) as the driver's conf dir.
func (a *additions) sparkConf(cmName string) {
	a.mount(corev1.Volume{Name: confVolumeName, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: cmName},
		Items:                []corev1.KeyToPath{{Key: propertiesKey, Path: propertiesKey, Mode: ptr.To(int32(0o644))}},
	}}}, corev1.VolumeMount{Name: confVolumeName, MountPath: confMountPath})
	a.env = append(a.env, corev1.EnvVar{Name: "SPARK_CONF_DIR", Value: confMountPath})
}

// driverArgs is the entrypoint's command line: run as the proxy user if there is one, read
// spark.properties, run mainClass with the primary resource and the application's arguments.
func driverArgs(s *v1beta2.SparkApplicationSpec, mainClass string) []string {
	args := []string{"driver"}
	if s.ProxyUser != nil && *s.ProxyUser != "" {
		args = append(args, "--proxy-user", *s.ProxyUser)
	}
	args = append(args, "--properties-file", propertiesPath, "--class", mainClass, s.MainApplicationFile)
	return append(args, s.Arguments...)
}

// setDriverPodSpec sets what the properties say about the pod as a whole: restart policy,
// service account, pull secrets, node selector and scheduler.
func setDriverPodSpec(pod *corev1.Pod, c conf) {
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	if sa := c[keyDriverServiceAccount]; sa != "" {
		pod.Spec.ServiceAccountName = sa
		pod.Spec.DeprecatedServiceAccount = sa
	}
	if ps := c[keyPullSecrets]; ps != "" {
		for _, name := range strings.Split(ps, ",") {
			pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: strings.TrimSpace(name)})
		}
	}
	pod.Spec.NodeSelector = merge(pod.Spec.NodeSelector, sparkpod.NodeSelector(sparkpod.RoleDriver, c))
	// Spark sets the scheduler its properties name over the template's; spec.driver.schedulerName
	// and a batch scheduler's choice reach the properties too (sparkconf), and win.
	if name, ok := sparkpod.SchedulerName(sparkpod.RoleDriver, c); ok {
		pod.Spec.SchedulerName = name
	}
}
