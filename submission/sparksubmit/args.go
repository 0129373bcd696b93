/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package sparksubmit submits SparkApplications by running Apache Spark's own spark-submit, the
// reference behaviour that the native submitter is measured against.
package sparksubmit

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/submission"
)

// Options carries what BuildArgs needs beyond the application itself.
type Options struct {
	// MasterURL is the API server URL (https://host:port); "k8s://" is prepended unless present.
	MasterURL string
	// DriverPodTemplateFile and ExecutorPodTemplateFile are the paths of the pod templates the
	// caller wrote (see PodTemplates); empty means none.
	DriverPodTemplateFile   string
	ExecutorPodTemplateFile string
}

// Spark property names and templates. Only those used in more than one place, or whose shape
// is not obvious from the call site, are named here.
const (
	confNamespace          = "spark.kubernetes.namespace"
	confAppName            = "spark.app.name"
	confDriverPodName      = "spark.kubernetes.driver.pod.name"
	confWaitAppCompletion  = "spark.kubernetes.submission.waitAppCompletion"
	confDriverTemplate     = "spark.kubernetes.driver.podTemplateFile"
	confExecutorTemplate   = "spark.kubernetes.executor.podTemplateFile"
	confDriverTemplateCtr  = "spark.kubernetes.driver.podTemplateContainerName"
	confExecutorTmplCtr    = "spark.kubernetes.executor.podTemplateContainerName"
	confMetricsConf        = "spark.metrics.conf"
	confMetricsNamespace   = "spark.metrics.namespace"
	defaultMetricsConfDir  = "/etc/metrics/conf"
	defaultMetricsPropFile = defaultMetricsConfDir + "/metrics.properties"
	defaultPromConfigFile  = defaultMetricsConfDir + "/prometheus.yaml"
	defaultPrometheusPort  = int32(8090)

	// Names of the files a typed Secret is expected to hold; the environment variables that
	// the client libraries read are pointed at them.
	gcpKeyFileName         = "key.json"
	hadoopTokenFileName    = "hadoop.token"
	envGoogleCredentials   = "GOOGLE_APPLICATION_CREDENTIALS"
	envHadoopTokenLocation = "HADOOP_TOKEN_FILE_LOCATION"
)

// operatorOwnedConf are properties the operator must decide itself: a user value for them
// would put the driver somewhere the operator does not look, or make spark-submit block.
var operatorOwnedConf = map[string]bool{
	confNamespace:         true,
	confAppName:           true,
	confDriverPodName:     true,
	confWaitAppCompletion: true,
	confDriverTemplate:    true,
	confExecutorTemplate:  true,
	confDriverTemplateCtr: true,
	confExecutorTmplCtr:   true,
}

// role is the driver or executor half of the spec, with the property prefixes that differ
// between the two.
type role struct {
	name      string // "driver" or "executor"
	pod       *v1beta2.SparkPodSpec
	k8sPrefix string // spark.kubernetes.driver. / spark.kubernetes.executor.
	envPrefix string // where plain environment variables go
}

func roles(app *v1beta2.SparkApplication) [2]role {
	return [2]role{
		{name: "driver", pod: &app.Spec.Driver.SparkPodSpec, k8sPrefix: "spark.kubernetes.driver.", envPrefix: "spark.kubernetes.driverEnv."},
		{name: "executor", pod: &app.Spec.Executor.SparkPodSpec, k8sPrefix: "spark.kubernetes.executor.", envPrefix: "spark.executorEnv."},
	}
}

// BuildArgs returns the spark-submit command line (without the program name) for one attempt
// of app, which must already be defaulted. The order is deterministic: map-valued fields are
// emitted in key order, so equal specs give equal command lines.
//
// Later --conf flags override earlier ones in spark-submit, so the user's sparkConf comes first,
// the properties derived from dedicated spec fields next, and the properties the operator must
// control (namespace, pod name, labels it selects on, templates) last.
func BuildArgs(app *v1beta2.SparkApplication, attempt submission.Attempt, opts Options) ([]string, error) {
	if err := validate(app, attempt, opts); err != nil {
		return nil, err
	}
	spec := &app.Spec

	args := []string{
		"--master", masterURL(opts.MasterURL),
		"--deploy-mode", string(spec.Mode),
	}
	if spec.MainClass != nil && *spec.MainClass != "" {
		args = append(args, "--class", *spec.MainClass)
	}
	args = append(args, "--name", app.Name)
	if spec.ProxyUser != nil && *spec.ProxyUser != "" {
		args = append(args, "--proxy-user", *spec.ProxyUser)
	}
	for _, d := range []struct {
		flag  string
		items []string
	}{
		{"--jars", spec.Deps.Jars},
		{"--files", spec.Deps.Files},
		{"--py-files", spec.Deps.PyFiles},
		{"--packages", spec.Deps.Packages},
		{"--exclude-packages", spec.Deps.ExcludePackages},
		{"--repositories", spec.Deps.Repositories},
		{"--archives", spec.Deps.Archives},
	} {
		if len(d.items) > 0 {
			args = append(args, d.flag, strings.Join(d.items, ","))
		}
	}

	var c confList
	for _, k := range sortedKeys(spec.SparkConf) {
		if !operatorOwnedConf[k] {
			c.add(k, spec.SparkConf[k])
		}
	}
	for _, k := range sortedKeys(spec.HadoopConf) {
		c.add("spark.hadoop."+k, spec.HadoopConf[k])
	}

	if err := specConf(&c, app); err != nil {
		return nil, err
	}

	c.add(confNamespace, app.Namespace)
	c.add(confAppName, app.Name)
	c.add(confDriverPodName, attempt.DriverPodName)
	c.add(confWaitAppCompletion, "false")
	for _, r := range roles(app) {
		c.add(r.k8sPrefix+"label."+v1beta2.LabelAppName, app.Name)
		c.add(r.k8sPrefix+"label."+v1beta2.LabelLaunchedByOperator, "true")
		c.add(r.k8sPrefix+"label."+v1beta2.LabelSubmissionID, attempt.SubmissionID)
	}
	if opts.DriverPodTemplateFile != "" {
		c.add(confDriverTemplate, opts.DriverPodTemplateFile)
		c.add(confDriverTemplateCtr, v1beta2.SparkDriverContainerName)
	}
	if opts.ExecutorPodTemplateFile != "" {
		c.add(confExecutorTemplate, opts.ExecutorPodTemplateFile)
		c.add(confExecutorTmplCtr, v1beta2.SparkExecutorContainerName)
	}

	args = append(args, c.args()...)
	args = append(args, spec.MainApplicationFile)
	return append(args, spec.Arguments...), nil
}

func validate(app *v1beta2.SparkApplication, attempt submission.Attempt, opts Options) error {
	if app == nil {
		return errors.New("no SparkApplication given")
	}
	var problems []string
	if app.Name == "" {
		problems = append(problems, "metadata.name is empty")
	}
	if app.Namespace == "" {
		problems = append(problems, "metadata.namespace is empty")
	}
	if app.Spec.MainApplicationFile == "" {
		problems = append(problems, "spec.mainApplicationFile is empty")
	}
	// The client modes would run the driver inside the operator process.
	if app.Spec.Mode != v1beta2.DeployModeCluster {
		problems = append(problems, fmt.Sprintf("spec.mode %q is not supported by spark-submit submission: only %q", app.Spec.Mode, v1beta2.DeployModeCluster))
	}
	if attempt.SubmissionID == "" {
		problems = append(problems, "the attempt has no submission ID")
	}
	if attempt.DriverPodName == "" {
		problems = append(problems, "the attempt has no driver pod name")
	}
	if opts.MasterURL == "" {
		problems = append(problems, "no Kubernetes API server URL (master URL) configured")
	}
	if len(problems) > 0 {
		return fmt.Errorf("cannot build spark-submit arguments: %s", strings.Join(problems, "; "))
	}
	return nil
}

func masterURL(u string) string {
	if strings.HasPrefix(u, "k8s://") {
		return u
	}
	return "k8s://" + u
}

// specConf adds the properties derived from the dedicated fields of the spec.
func specConf(c *confList, app *v1beta2.SparkApplication) error {
	spec := &app.Spec
	if spec.Image != nil && *spec.Image != "" {
		c.add("spark.kubernetes.container.image", *spec.Image)
	}
	if spec.ImagePullPolicy != nil && *spec.ImagePullPolicy != "" {
		c.add("spark.kubernetes.container.image.pullPolicy", *spec.ImagePullPolicy)
	}
	if len(spec.ImagePullSecrets) > 0 {
		c.add("spark.kubernetes.container.image.pullSecrets", strings.Join(spec.ImagePullSecrets, ","))
	}
	if spec.PythonVersion != nil && *spec.PythonVersion != "" {
		c.add("spark.kubernetes.pyspark.pythonVersion", *spec.PythonVersion)
	}
	if spec.MemoryOverheadFactor != nil && *spec.MemoryOverheadFactor != "" {
		if _, err := strconv.ParseFloat(*spec.MemoryOverheadFactor, 64); err != nil {
			return fmt.Errorf("spec.memoryOverheadFactor %q is not a decimal number", *spec.MemoryOverheadFactor)
		}
		// The per-role keys replaced the global one in Spark 3.3 and take precedence over it;
		// the global key is still read by older Spark versions.
		c.add("spark.kubernetes.memoryOverheadFactor", *spec.MemoryOverheadFactor)
		c.add("spark.driver.memoryOverheadFactor", *spec.MemoryOverheadFactor)
		c.add("spark.executor.memoryOverheadFactor", *spec.MemoryOverheadFactor)
	}
	if name := deref(spec.HadoopConfigMap); name != "" {
		// Spark mounts it into the driver and executors and points HADOOP_CONF_DIR at it.
		c.add("spark.kubernetes.hadoop.configMapName", name)
	}
	for _, k := range sortedKeys(spec.NodeSelector) {
		c.add("spark.kubernetes.node.selector."+k, spec.NodeSelector[k])
	}

	drv := &spec.Driver
	if drv.KubernetesMaster != nil && *drv.KubernetesMaster != "" {
		c.add("spark.kubernetes.driver.master", *drv.KubernetesMaster)
	}
	for _, k := range sortedKeys(drv.ServiceLabels) {
		c.add("spark.kubernetes.driver.service.label."+k, drv.ServiceLabels[k])
	}
	for _, k := range sortedKeys(drv.ServiceAnnotations) {
		c.add("spark.kubernetes.driver.service.annotation."+k, drv.ServiceAnnotations[k])
	}

	ex := &spec.Executor
	if ex.Instances != nil {
		c.add("spark.executor.instances", strconv.Itoa(int(*ex.Instances)))
	}
	if ex.DeleteOnTermination != nil {
		c.add("spark.kubernetes.executor.deleteOnTermination", strconv.FormatBool(*ex.DeleteOnTermination))
	}

	javaOpts := monitoringConf(c, app)
	for i, r := range roles(app) {
		if err := roleConf(c, app, r, javaOpts[i]); err != nil {
			return err
		}
	}

	if da := spec.DynamicAllocation; da != nil && da.Enabled {
		c.add("spark.dynamicAllocation.enabled", "true")
		if da.InitialExecutors != nil {
			c.add("spark.dynamicAllocation.initialExecutors", strconv.Itoa(int(*da.InitialExecutors)))
		}
		if da.MinExecutors != nil {
			c.add("spark.dynamicAllocation.minExecutors", strconv.Itoa(int(*da.MinExecutors)))
		}
		if da.MaxExecutors != nil {
			c.add("spark.dynamicAllocation.maxExecutors", strconv.Itoa(int(*da.MaxExecutors)))
		}
		// Without an external shuffle service (never present on Kubernetes by default)
		// dynamic allocation only works with shuffle tracking.
		tracking := da.ShuffleTrackingEnabled == nil || *da.ShuffleTrackingEnabled
		c.add("spark.dynamicAllocation.shuffleTracking.enabled", strconv.FormatBool(tracking))
		if da.ShuffleTrackingTimeout != nil {
			c.add("spark.dynamicAllocation.shuffleTracking.timeout", strconv.FormatInt(*da.ShuffleTrackingTimeout, 10))
		}
	}
	return nil
}

// monitoringConf adds the metrics properties and returns the extra JVM options (the Prometheus
// JMX exporter agent) for the driver and the executors. The ConfigMap holding a generated
// metrics.properties or exporter configuration is not created here: that is the controller's
// work, as it outlives one spark-submit run.
func monitoringConf(c *confList, app *v1beta2.SparkApplication) [2]string {
	m := app.Spec.Monitoring
	if m == nil {
		return [2]string{}
	}
	metricsFile := defaultMetricsPropFile
	if m.MetricsPropertiesFile != nil && *m.MetricsPropertiesFile != "" {
		metricsFile = *m.MetricsPropertiesFile
	}
	c.add(confMetricsConf, metricsFile)
	// Without a namespace the metric names carry the random application ID, which changes
	// on every run and defeats dashboards.
	c.add(confMetricsNamespace, app.Namespace+"."+app.Name)

	p := m.Prometheus
	if p == nil || p.JmxExporterJar == "" {
		return [2]string{}
	}
	configFile := defaultPromConfigFile
	if p.ConfigFile != nil && *p.ConfigFile != "" {
		configFile = *p.ConfigFile
	}
	agent := fmt.Sprintf("-javaagent:%s=%d:%s", p.JmxExporterJar, prometheusPort(p), configFile)
	var out [2]string
	if m.ExposeDriverMetrics {
		out[0] = agent
	}
	if m.ExposeExecutorMetrics {
		out[1] = agent
	}
	return out
}

func prometheusPort(p *v1beta2.PrometheusSpec) int32 {
	if p.Port != nil {
		return *p.Port
	}
	return defaultPrometheusPort
}

func prometheusPortName(p *v1beta2.PrometheusSpec) string {
	if p.PortName != nil && *p.PortName != "" {
		return *p.PortName
	}
	return "jmx-exporter"
}

// exposesMetrics reports whether the Prometheus exporter runs in the given role's JVM.
func exposesMetrics(app *v1beta2.SparkApplication, roleName string) bool {
	m := app.Spec.Monitoring
	if m == nil || m.Prometheus == nil || m.Prometheus.JmxExporterJar == "" {
		return false
	}
	if roleName == "driver" {
		return m.ExposeDriverMetrics
	}
	return m.ExposeExecutorMetrics
}

// roleConf adds the properties of spec.driver or spec.executor.
func roleConf(c *confList, app *v1beta2.SparkApplication, r role, extraJavaOpts string) error {
	p := r.pod
	sparkPrefix := "spark." + r.name + "."
	image := app.Spec.Image
	if p.Image != nil && *p.Image != "" {
		image = p.Image
	}
	if image != nil && *image != "" {
		c.add(r.k8sPrefix+"container.image", *image)
	}
	if p.Cores != nil {
		c.add(sparkPrefix+"cores", strconv.Itoa(int(*p.Cores)))
	}
	if p.CoreRequest != nil && *p.CoreRequest != "" {
		c.add(r.k8sPrefix+"request.cores", *p.CoreRequest)
	}
	if p.CoreLimit != nil && *p.CoreLimit != "" {
		c.add(r.k8sPrefix+"limit.cores", *p.CoreLimit)
	}
	if p.Memory != nil && *p.Memory != "" {
		c.add(sparkPrefix+"memory", *p.Memory)
	}
	if p.MemoryOverhead != nil && *p.MemoryOverhead != "" {
		c.add(sparkPrefix+"memoryOverhead", *p.MemoryOverhead)
	}
	if p.ServiceAccount != nil && *p.ServiceAccount != "" {
		c.add("spark.kubernetes.authenticate."+r.name+".serviceAccountName", *p.ServiceAccount)
	}
	javaOpts := joinNonEmpty(" ", deref(p.JavaOptions), extraJavaOpts)
	if javaOpts != "" {
		c.add(sparkPrefix+"extraJavaOptions", javaOpts)
	}

	// The application's own labels come first so that the pod-level ones win, and the
	// operator's labels (added last by BuildArgs) win over both.
	labels := maps.Clone(app.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, p.Labels)
	for _, k := range sortedKeys(labels) {
		c.add(r.k8sPrefix+"label."+k, labels[k])
	}
	annotations := maps.Clone(p.Annotations)
	if exposesMetrics(app, r.name) {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations["prometheus.io/scrape"] = "true"
		annotations["prometheus.io/port"] = strconv.Itoa(int(prometheusPort(app.Spec.Monitoring.Prometheus)))
		annotations["prometheus.io/path"] = "/metrics"
	}
	for _, k := range sortedKeys(annotations) {
		c.add(r.k8sPrefix+"annotation."+k, annotations[k])
	}
	for _, k := range sortedKeys(p.NodeSelector) {
		c.add(r.k8sPrefix+"node.selector."+k, p.NodeSelector[k])
	}

	for _, s := range p.Secrets {
		if s.Name == "" || s.Path == "" {
			return fmt.Errorf("spec.%s.secrets: every secret needs a name and a path (got name %q, path %q)", r.name, s.Name, s.Path)
		}
		c.add(r.k8sPrefix+"secrets."+s.Name, s.Path)
		switch s.Type {
		case v1beta2.SecretTypeGCPServiceAccount:
			c.add(r.envPrefix+envGoogleCredentials, path.Join(s.Path, gcpKeyFileName))
		case v1beta2.SecretTypeHadoopDelegationToken:
			c.add(r.envPrefix+envHadoopTokenLocation, path.Join(s.Path, hadoopTokenFileName))
		case v1beta2.SecretTypeGeneric, "":
		default:
			return fmt.Errorf("spec.%s.secrets[%s]: unknown secretType %q (want %s, %s or %s)", r.name, s.Name, s.Type,
				v1beta2.SecretTypeGCPServiceAccount, v1beta2.SecretTypeHadoopDelegationToken, v1beta2.SecretTypeGeneric)
		}
	}
	for _, k := range sortedKeys(p.EnvVars) {
		c.add(r.envPrefix+k, p.EnvVars[k])
	}
	for _, k := range sortedKeys(p.EnvSecretKeyRefs) {
		ref := p.EnvSecretKeyRefs[k]
		if ref.Name == "" || ref.Key == "" {
			return fmt.Errorf("spec.%s.envSecretKeyRefs[%s]: needs both a secret name and a key", r.name, k)
		}
		c.add(r.k8sPrefix+"secretKeyRef."+k, ref.Name+":"+ref.Key)
	}

	mounts, err := confVolumeMounts(app, r)
	if err != nil {
		return err
	}
	for _, m := range mounts {
		base := r.k8sPrefix + "volumes." + m.kind + "." + m.mount.Name + "."
		c.add(base+"mount.path", m.mount.MountPath)
		if m.mount.SubPath != "" {
			c.add(base+"mount.subPath", m.mount.SubPath)
		}
		if m.mount.SubPathExpr != "" {
			c.add(base+"mount.subPathExpr", m.mount.SubPathExpr)
		}
		if m.mount.ReadOnly || m.volumeReadOnly {
			c.add(base+"mount.readOnly", "true")
		}
		for _, k := range sortedKeys(m.options) {
			c.add(base+"options."+k, m.options[k])
		}
	}
	return nil
}

// confVolume is a volume mount of the main container that Spark properties can express.
type confVolume struct {
	kind           string // Spark's volume type: hostPath, emptyDir, nfs, persistentVolumeClaim
	mount          corev1.VolumeMount
	options        map[string]string
	volumeReadOnly bool
}

// sparkVolumeKind maps a volume to Spark's volume type; ok is false for sources Spark has no
// properties for (they go into the pod template). A volume without any source is an error.
func sparkVolumeKind(v *corev1.Volume) (kind string, options map[string]string, readOnly, ok bool, err error) {
	switch {
	case v.HostPath != nil:
		o := map[string]string{"path": v.HostPath.Path}
		if v.HostPath.Type != nil && *v.HostPath.Type != "" {
			o["type"] = string(*v.HostPath.Type)
		}
		return "hostPath", o, false, true, nil
	case v.EmptyDir != nil:
		o := map[string]string{}
		if v.EmptyDir.Medium != "" {
			o["medium"] = string(v.EmptyDir.Medium)
		}
		if v.EmptyDir.SizeLimit != nil {
			o["sizeLimit"] = v.EmptyDir.SizeLimit.String()
		}
		return "emptyDir", o, false, true, nil
	case v.NFS != nil:
		return "nfs", map[string]string{"server": v.NFS.Server, "path": v.NFS.Path}, v.NFS.ReadOnly, true, nil
	case v.PersistentVolumeClaim != nil:
		return "persistentVolumeClaim", map[string]string{"claimName": v.PersistentVolumeClaim.ClaimName}, v.PersistentVolumeClaim.ReadOnly, true, nil
	}
	if v.VolumeSource == (corev1.VolumeSource{}) {
		return "", nil, false, false, fmt.Errorf("spec.volumes[%s]: no volume source set (unknown volume type)", v.Name)
	}
	return "", nil, false, false, nil
}

// confVolumeMounts splits the main container's mounts: those whose volume Spark can declare
// itself from properties, returned here, and the rest, which PodTemplates puts into the
// template. A volume also mounted by a sidecar or init container must be declared in the
// template, or the pod would declare it twice.
func confVolumeMounts(app *v1beta2.SparkApplication, r role) ([]confVolume, error) {
	volumes := volumesByName(app)
	shared := mountedByOthers(r.pod)
	var out []confVolume
	for _, m := range r.pod.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			return nil, fmt.Errorf("spec.%s.volumeMounts: volume %q is not declared in spec.volumes", r.name, m.Name)
		}
		if m.MountPath == "" {
			return nil, fmt.Errorf("spec.%s.volumeMounts[%s]: mountPath is empty", r.name, m.Name)
		}
		kind, options, readOnly, ok, err := sparkVolumeKind(v)
		if err != nil {
			return nil, err
		}
		if !ok || shared[m.Name] {
			continue
		}
		out = append(out, confVolume{kind: kind, mount: m, options: options, volumeReadOnly: readOnly})
	}
	return out, nil
}

func volumesByName(app *v1beta2.SparkApplication) map[string]*corev1.Volume {
	out := make(map[string]*corev1.Volume, len(app.Spec.Volumes))
	for i := range app.Spec.Volumes {
		out[app.Spec.Volumes[i].Name] = &app.Spec.Volumes[i]
	}
	return out
}

func mountedByOthers(p *v1beta2.SparkPodSpec) map[string]bool {
	out := map[string]bool{}
	for _, cs := range [][]corev1.Container{p.Sidecars, p.InitContainers} {
		for _, c := range cs {
			for _, m := range c.VolumeMounts {
				out[m.Name] = true
			}
		}
	}
	return out
}

// confList collects --conf pairs in the order they were added.
type confList struct{ kv [][2]string }

func (c *confList) add(k, v string) { c.kv = append(c.kv, [2]string{k, v}) }

func (c *confList) args() []string {
	out := make([]string, 0, 2*len(c.kv))
	for _, kv := range c.kv {
		out = append(out, "--conf", kv[0]+"="+kv[1])
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func joinNonEmpty(sep string, parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, sep)
}
