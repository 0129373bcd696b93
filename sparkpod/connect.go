/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

// What a SparkConnect means for Kubernetes objects: the server pod (its Spark conf included),
// the ConfigMap with the executor pod template, the Service. Pure functions of the spec, kept in
// this one file so that they can move onto the shared pod-settings source when it lands.

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/utils/ptr"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkconf"
)

// Ports of the server. The Service exposes all four; clients use ConnectPort.
const (
	ConnectPort             = 15002
	ConnectUIPort           = 4040
	ConnectDriverPort       = 7078
	ConnectBlockManagerPort = 7079
)

const (
	// ConnectExecutorTemplateKey is the file name of the executor pod template in its ConfigMap.
	ConnectExecutorTemplateKey = "executor-pod-template.yaml"
	// connectExecutorTemplateDir is where the server pod mounts it (the Kubeflow operator's path).
	connectExecutorTemplateDir = "/tmp/spark"
	connectExecutorTemplateVol = "spark-conf"
	// connectMasterURL is the API server as seen from inside the cluster.
	connectMasterURL = "k8s://https://kubernetes.default.svc"
)

// ConnectOverriddenConf lists the keys of spec.sparkConf that the operator sets itself, so the user's
// values for them have no effect.
func ConnectOverriddenConf(conn *v1alpha1.SparkConnect) []string {
	return sparkconf.Dropped(conn.Spec.SparkConf, sparkconf.SessionOwned)
}

// ConnectServerPod builds the server pod of conn from spec.server.template: the Spark Connect server
// started in client mode against the cluster, the operator's labels (with the server's
// submission ID, status.server.submissionID, when recorded), conn as its controller, and the
// batch scheduler's settings pods for the server and (through the executor pod template) its
// executors. An error means no server can be built from this spec (a message for the user).
func ConnectServerPod(conn *v1alpha1.SparkConnect, pods RoleScheduling) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	if t := conn.Spec.Server.Template; t != nil {
		t = t.DeepCopy()
		pod.Labels, pod.Annotations, pod.Spec = t.Labels, t.Annotations, t.Spec
	}
	pod.Name, pod.Namespace = conn.ServerPodName(), conn.Namespace
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	maps.Copy(pod.Labels, conn.ServerSelector())
	pod.Labels[v1alpha1.LabelSparkVersion] = conn.Spec.SparkVersion
	if id := conn.Status.Server.SubmissionID; id != "" {
		pod.Labels[v1beta2.LabelSubmissionID] = id
	}
	pod.OwnerReferences = []metav1.OwnerReference{connectOwnerRef(conn)}

	if len(pod.Spec.Containers) == 0 {
		pod.Spec.Containers = []corev1.Container{{Name: v1beta2.SparkDriverContainerName}}
	}
	c := &pod.Spec.Containers[SparkContainerIndex(pod, RoleDriver)]
	if c.Image == "" {
		c.Image = ptr.Deref(conn.Spec.Image, "")
	}
	if c.Image == "" {
		return nil, errors.New("no image for the server: set spec.image or the image of the server template's " +
			v1beta2.SparkDriverContainerName + " container")
	}
	conf, err := ConnectServerConf(conn, pods.Executor)
	if err != nil {
		return nil, err
	}
	c.Command = []string{"bash", "-c", connectStartScript(conf)}
	c.Args = nil
	// The template's env goes last, so that a user's value wins (as sparkpod orders it).
	c.Env = append([]corev1.EnvVar{
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		// start-connect-server.sh stays in the foreground, so the pod lives as long as the server.
		{Name: "SPARK_NO_DAEMONIZE", Value: "true"},
	}, c.Env...)
	for _, p := range []corev1.ContainerPort{
		{Name: "spark-connect", ContainerPort: ConnectPort}, {Name: "spark-ui", ContainerPort: ConnectUIPort},
		{Name: "driver-rpc", ContainerPort: ConnectDriverPort}, {Name: "blockmanager", ContainerPort: ConnectBlockManagerPort},
	} {
		if !slices.ContainsFunc(c.Ports, func(have corev1.ContainerPort) bool { return have.ContainerPort == p.ContainerPort }) {
			p.Protocol = corev1.ProtocolTCP
			c.Ports = append(c.Ports, p)
		}
	}
	// Ready means a client can connect: the gRPC port accepts connections.
	if c.ReadinessProbe == nil {
		c.ReadinessProbe = &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(ConnectPort)}},
			PeriodSeconds: 5,
		}
	}
	if c.Lifecycle == nil {
		c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
			Command: []string{"bash", "-c", "${SPARK_HOME}/sbin/stop-connect-server.sh"},
		}}}
	}
	if connectExecutorTemplate(conn, pods.Executor) != nil {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{
			Name: connectExecutorTemplateVol, MountPath: connectExecutorTemplateDir + "/" + ConnectExecutorTemplateKey,
			SubPath: ConnectExecutorTemplateKey, ReadOnly: true,
		})
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: connectExecutorTemplateVol, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: conn.ExecutorTemplateConfigMapName()}},
		}})
	}
	// The server is the session's driver: the same settings writer as every driver's, so a
	// template setting means the same on both and the webhook finds nothing to add.
	if err := Customise(pod, ConnectApplication(conn), RoleDriver); err != nil {
		return nil, err
	}
	pods.Driver.Apply(&pod.ObjectMeta, &pod.Spec)
	return pod, nil
}

// ConnectServerConf is the Spark properties the server is started with, in order (a later value for a
// key wins): the user's sparkConf and hadoopConf, then what the spec's fields mean, then what the
// operator owns. spark.driver.host is not among them: it is the pod's IP, known only in the pod.
// executor is the batch scheduler's settings for the executors, which go in their pod template.
func ConnectServerConf(conn *v1alpha1.SparkConnect, executor Scheduling) ([]sparkconf.Property, error) {
	conf := sparkconf.UserProperties(conn.Spec.SparkConf, conn.Spec.HadoopConf, sparkconf.SessionOwned)
	add := func(k, v string) { conf = append(conf, sparkconf.Property{Key: k, Value: v}) }

	image := ConnectExecutorImage(conn)
	if image == "" {
		return nil, errors.New("no image for the executors: set spec.image or the image of the executor template's " +
			v1beta2.SparkExecutorContainerName + " container")
	}
	add("spark.kubernetes.container.image", image)
	add("spark.kubernetes.executor.container.image", image)
	srv, ex := &conn.Spec.Server, &conn.Spec.Executor
	if srv.Cores != nil {
		add("spark.driver.cores", strconv.Itoa(int(*srv.Cores)))
	}
	if srv.Memory != nil {
		add("spark.driver.memory", *srv.Memory)
	}
	if ex.Instances != nil {
		add("spark.executor.instances", strconv.Itoa(int(*ex.Instances)))
	}
	if ex.Cores != nil {
		add("spark.executor.cores", strconv.Itoa(int(*ex.Cores)))
	}
	if ex.Memory != nil {
		add("spark.executor.memory", *ex.Memory)
	}
	conf = append(conf, sparkconf.DynamicAllocationConf(conn.Spec.DynamicAllocation)...)
	// The SparkConnect's labels and the operator's go on the executors, which is how the
	// controller finds them (executorSelector) and the webhook knows whose they are.
	execLabels := maps.Clone(conn.Labels)
	if execLabels == nil {
		execLabels = map[string]string{}
	}
	execLabels[v1beta2.LabelLaunchedByOperator] = "true"
	execLabels[v1alpha1.LabelConnectName] = conn.Name
	if id := conn.Status.Server.SubmissionID; id != "" {
		execLabels[v1beta2.LabelSubmissionID] = id
	}
	for _, k := range slices.Sorted(maps.Keys(execLabels)) {
		add("spark.kubernetes.executor.label."+k, execLabels[k])
	}

	add("spark.master", connectMasterURL)
	add("spark.submit.deployMode", "client")
	add("spark.kubernetes.namespace", conn.Namespace)
	add("spark.driver.bindAddress", "0.0.0.0")
	add("spark.driver.port", strconv.Itoa(ConnectDriverPort))
	add("spark.driver.blockManager.port", strconv.Itoa(ConnectBlockManagerPort))
	// Naming the server pod makes it the owner of the executors: deleting it removes them.
	add("spark.kubernetes.driver.pod.name", conn.ServerPodName())
	add("spark.kubernetes.executor.podNamePrefix", conn.Name)
	if connectExecutorTemplate(conn, executor) != nil {
		add("spark.kubernetes.executor.podTemplateFile", connectExecutorTemplateDir+"/"+ConnectExecutorTemplateKey)
		add("spark.kubernetes.executor.podTemplateContainerName", v1beta2.SparkExecutorContainerName)
	}
	return conf, nil
}

// ConnectExecutorImage is the executors' image: the executor template's spark-kubernetes-executor
// container's, else spec.image.
func ConnectExecutorImage(conn *v1alpha1.SparkConnect) string {
	if t := conn.Spec.Executor.Template; t != nil {
		for _, c := range t.Spec.Containers {
			if c.Name == v1beta2.SparkExecutorContainerName && c.Image != "" {
				return c.Image
			}
		}
	}
	return ptr.Deref(conn.Spec.Image, "")
}

// connectStartScript is the server container's bash command. Every property is single-quoted, so
// values reach Spark as written; only the driver host is expanded (bracketed when it is an
// IPv6 address).
func connectStartScript(conf []sparkconf.Property) string {
	var b strings.Builder
	b.WriteString(`host="${POD_IP}"; case "$host" in *:*) host="[$host]" ;; esac; `)
	b.WriteString(`exec "${SPARK_HOME}/sbin/start-connect-server.sh" --conf "spark.driver.host=${host}"`)
	for _, p := range conf {
		b.WriteString(" --conf ")
		b.WriteString(shellQuote(p.Key + "=" + p.Value))
	}
	return b.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// connectExecutorTemplate is the executor pod template the server gives Spark: spec.executor.template
// with the batch scheduler's executor settings; nil when there is neither. A template without
// containers gets the executor's, named: Spark cannot read a pod template whose containers are
// null (the server fails to start with a NullPointerException), as they are when written from
// a PodSpec that has none.
func connectExecutorTemplate(conn *v1alpha1.SparkConnect, executor Scheduling) *corev1.PodTemplateSpec {
	t := conn.Spec.Executor.Template
	if t == nil && executor.IsZero() {
		return nil
	}
	if t == nil {
		t = &corev1.PodTemplateSpec{}
	}
	t = t.DeepCopy()
	if len(t.Spec.Containers) == 0 {
		t.Spec.Containers = []corev1.Container{{Name: v1beta2.SparkExecutorContainerName}}
	}
	executor.Apply(&t.ObjectMeta, &t.Spec)
	return t
}

// ConnectExecutorTemplateConfigMap holds the executor pod template (spec.executor.template with the
// batch scheduler's executor settings) for the server to read; nil when there is none.
func ConnectExecutorTemplateConfigMap(conn *v1alpha1.SparkConnect, executor Scheduling) (*corev1.ConfigMap, error) {
	t := connectExecutorTemplate(conn, executor)
	if t == nil {
		return nil, nil
	}
	data, err := yaml.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("encoding the executor template: %w", err)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: conn.ExecutorTemplateConfigMapName(), Namespace: conn.Namespace,
			Labels: connectOwnedLabels(conn), OwnerReferences: []metav1.OwnerReference{connectOwnerRef(conn)},
		},
		Data: map[string]string{ConnectExecutorTemplateKey: string(data)},
	}, nil
}

// ConnectService is the Service in front of the server, from spec.server.service: the server's
// four ports unless it names ports itself, and always a selector for the server pod.
func ConnectService(conn *v1alpha1.SparkConnect) *corev1.Service {
	svc := &corev1.Service{}
	if s := conn.Spec.Server.Service; s != nil {
		svc.Labels, svc.Annotations, svc.Spec = maps.Clone(s.Labels), maps.Clone(s.Annotations), *s.Spec.DeepCopy()
	}
	svc.Name, svc.Namespace = conn.ServerServiceName(), conn.Namespace
	if svc.Labels == nil {
		svc.Labels = map[string]string{}
	}
	maps.Copy(svc.Labels, connectOwnedLabels(conn))
	svc.OwnerReferences = []metav1.OwnerReference{connectOwnerRef(conn)}
	if len(svc.Spec.Ports) == 0 {
		port := func(name string, n int32, protocol string) corev1.ServicePort {
			return corev1.ServicePort{Name: name, Port: n, TargetPort: intstr.FromInt32(n), Protocol: corev1.ProtocolTCP, AppProtocol: &protocol}
		}
		svc.Spec.Ports = []corev1.ServicePort{
			port("driver-rpc", ConnectDriverPort, "tcp"), port("blockmanager", ConnectBlockManagerPort, "tcp"),
			port("web-ui", ConnectUIPort, "http"), port("spark-connect-server", ConnectPort, "grpc"),
		}
	}
	if svc.Spec.Selector == nil {
		svc.Spec.Selector = map[string]string{}
	}
	maps.Copy(svc.Spec.Selector, conn.ServerSelector())
	return svc
}

// ConnectDemand is what a session asks the cluster for, as a gang: the server (in the driver's
// place) and the executors it starts with, in the one demand calculation the batch schedulers
// read (DemandOf). The server pod is the operator's, built from its template, so when
// the template gives its containers requests, those are the server's demand. It is what the
// SparkConnect controller asks the session's batch scheduler to admit, and what the
// gang scheduler counts for it.
func ConnectDemand(conn *v1alpha1.SparkConnect) (Demand, error) {
	d, err := DemandOf(ConnectApplication(conn))
	if err != nil {
		return d, err
	}
	server, err := ConnectServerPod(conn, RoleScheduling{})
	if err != nil {
		return d, err
	}
	if requests, limits := PodResources(server); len(requests) > 0 {
		d.Driver.Requests, d.Driver.Limits = requests, limits
	}
	return d, nil
}

func connectOwnerRef(conn *v1alpha1.SparkConnect) metav1.OwnerReference {
	return *metav1.NewControllerRef(conn, v1alpha1.GroupVersion.WithKind("SparkConnect"))
}

// connectOwnedLabels mark the Service and ConfigMap: the Kubeflow operator's labels, and the one the
// operator's caches select on.
func connectOwnedLabels(conn *v1alpha1.SparkConnect) map[string]string {
	return map[string]string{
		v1alpha1.LabelCreatedByOperator: "true",
		v1beta2.LabelLaunchedByOperator: "true",
		v1alpha1.LabelConnectName:       conn.Name,
	}
}

// ConnectApplication is conn seen as a SparkApplication: the server as its driver, the pod
// templates' settings as the driver's and executors' fields, the sizes and executor count as
// Spark reads them for a server (spark.executor.instances unset means 2, or none to start with
// under dynamic allocation). It has no UID, so no owner reference is added on its account (the
// operator makes the SparkConnect the server's owner).
func ConnectApplication(conn *v1alpha1.SparkConnect) *v1beta2.SparkApplication {
	app := &v1beta2.SparkApplication{}
	app.Name, app.Namespace = conn.Name, conn.Namespace
	app.Spec.Image = conn.Spec.Image
	app.Spec.SparkConf, app.Spec.HadoopConf = conn.Spec.SparkConf, conn.Spec.HadoopConf
	app.Spec.DynamicAllocation = conn.Spec.DynamicAllocation
	srv, ex := &conn.Spec.Server, &conn.Spec.Executor
	app.Spec.Driver.Cores, app.Spec.Driver.Memory = srv.Cores, srv.Memory
	app.Spec.Executor.Cores, app.Spec.Executor.Memory = ex.Cores, ex.Memory
	app.Spec.Executor.Instances = ex.Instances
	if ex.Instances == nil {
		instances := int32(2)
		if da := conn.Spec.DynamicAllocation; da != nil && da.Enabled {
			instances = 0
		}
		app.Spec.Executor.Instances = &instances
	}
	var volumes []corev1.Volume
	fromTemplate(&app.Spec.Driver.SparkPodSpec, &volumes, conn.Spec.Server.Template, RoleDriver)
	fromTemplate(&app.Spec.Executor.SparkPodSpec, &volumes, conn.Spec.Executor.Template, RoleExecutor)
	app.Spec.Volumes = volumes
	return app
}

// fromTemplate fills spec with the settings of t that the mutations apply, and adds t's volumes.
func fromTemplate(spec *v1beta2.SparkPodSpec, volumes *[]corev1.Volume, t *corev1.PodTemplateSpec, role Role) {
	if t == nil {
		return
	}
	t = t.DeepCopy()
	ps := &t.Spec
	*volumes = append(*volumes, ps.Volumes...)
	spec.Affinity, spec.Tolerations, spec.NodeSelector = ps.Affinity, ps.Tolerations, ps.NodeSelector
	spec.PodSecurityContext, spec.DNSConfig, spec.HostAliases = ps.SecurityContext, ps.DNSConfig, ps.HostAliases
	spec.TerminationGracePeriodSeconds, spec.ShareProcessNamespace = ps.TerminationGracePeriodSeconds, ps.ShareProcessNamespace
	spec.InitContainers = ps.InitContainers
	if ps.HostNetwork {
		spec.HostNetwork = &ps.HostNetwork
	}
	if ps.SchedulerName != "" {
		spec.SchedulerName = &ps.SchedulerName
	}
	if ps.PriorityClassName != "" {
		spec.PriorityClassName = &ps.PriorityClassName
	}
	main := SparkContainerIndex(&corev1.Pod{Spec: *ps}, role)
	for i, c := range ps.Containers {
		if i != main {
			spec.Sidecars = append(spec.Sidecars, c)
			continue
		}
		spec.Env, spec.EnvFrom, spec.VolumeMounts = c.Env, c.EnvFrom, c.VolumeMounts
		spec.SecurityContext, spec.Lifecycle = c.SecurityContext, c.Lifecycle
	}
}
