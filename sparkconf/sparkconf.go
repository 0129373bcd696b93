/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package sparkconf translates a SparkApplication into the Spark configuration that
// spark-submit receives: the command-line values and the ordered --conf properties. It is the
// one place where spec fields are mapped to Spark property keys; the spark-submit submitter
// renders the result as a command line, the native submitter writes it into spark.properties.
package sparkconf

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// Spark property names the submitters refer to as well.
const (
	KeyNamespace           = "spark.kubernetes.namespace"
	KeyAppName             = "spark.app.name"
	KeyDriverPodName       = "spark.kubernetes.driver.pod.name"
	KeyWaitAppCompletion   = "spark.kubernetes.submission.waitAppCompletion"
	KeyDriverTemplate      = "spark.kubernetes.driver.podTemplateFile"
	KeyExecutorTemplate    = "spark.kubernetes.executor.podTemplateFile"
	KeyDriverTemplateCtr   = "spark.kubernetes.driver.podTemplateContainerName"
	KeyExecutorTemplateCtr = "spark.kubernetes.executor.podTemplateContainerName"
)

const (
	confMetricsConf        = "spark.metrics.conf"
	confMetricsNamespace   = "spark.metrics.namespace"
	defaultMetricsConfDir  = "/etc/metrics/conf"
	defaultMetricsPropFile = defaultMetricsConfDir + "/" + v1beta2.MetricsPropertiesKey
	defaultPromConfigFile  = defaultMetricsConfDir + "/" + v1beta2.PrometheusConfigKey
	defaultPrometheusPort  = int32(8090)
	defaultPromPortName    = "jmx-exporter"
)

// ApplicationOwned are the properties the operator decides for a SparkApplication: a user value
// for them would put the driver somewhere the operator does not look, or make spark-submit
// block. A value in spec.sparkConf is dropped (UserProperties) and the validating webhook warns
// (Dropped).
var ApplicationOwned = []string{
	KeyNamespace, KeyAppName, KeyDriverPodName, KeyWaitAppCompletion,
	KeyDriverTemplate, KeyExecutorTemplate, KeyDriverTemplateCtr, KeyExecutorTemplateCtr,
	// A pod so labelled skips the pod-mutating webhook (v1beta2.LabelCustomised).
	"spark.kubernetes.driver.label." + v1beta2.LabelCustomised, "spark.kubernetes.executor.label." + v1beta2.LabelCustomised,
}

// SessionOwned are the properties the operator decides for a SparkConnect server: a user value
// would make the server or its executors unreachable, or lose them for the status.
var SessionOwned = []string{
	"spark.master", "spark.submit.deployMode", KeyNamespace,
	"spark.driver.host", "spark.driver.port", "spark.driver.blockManager.port", "spark.driver.bindAddress",
	KeyDriverPodName, "spark.kubernetes.executor.podNamePrefix", KeyExecutorTemplate, KeyExecutorTemplateCtr,
}

// Dropped lists, sorted, the keys of sparkConf that are among owned: the operator sets them
// itself, so the user's values are not used.
func Dropped(sparkConf map[string]string, owned []string) []string {
	var keys []string
	for _, k := range slices.Sorted(maps.Keys(sparkConf)) {
		if slices.Contains(owned, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// UserProperties are the properties a user gives in spec.sparkConf (those not owned) and
// spec.hadoopConf (each key under spark.hadoop., where Spark passes it to Hadoop; a key already
// there is taken as it is), in key order.
func UserProperties(sparkConf, hadoopConf map[string]string, owned []string) []Property {
	var out []Property
	for _, k := range slices.Sorted(maps.Keys(sparkConf)) {
		if !slices.Contains(owned, k) {
			out = append(out, Property{k, sparkConf[k]})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(hadoopConf)) {
		key := k
		if !strings.HasPrefix(key, hadoopPrefix) {
			key = hadoopPrefix + key
		}
		out = append(out, Property{key, hadoopConf[k]})
	}
	return out
}

const hadoopPrefix = "spark.hadoop."

// Property is one --conf key=value pair.
type Property struct{ Key, Value string }

// Submit is what spark-submit is given for one attempt: the values of its own flags, and the
// properties in --conf order (a later value for a key wins).
type Submit struct {
	DeployMode string
	MainClass  string // empty when not set
	Name       string
	ProxyUser  string // empty when not set

	Jars, Files, PyFiles, Packages, ExcludePackages, Repositories, Archives []string

	Conf []Property

	MainApplicationFile string
	Arguments           []string
}

// Map returns the properties with later values winning, as spark-submit reads them.
func (s *Submit) Map() map[string]string {
	out := make(map[string]string, len(s.Conf))
	for _, p := range s.Conf {
		out[p.Key] = p.Value
	}
	return out
}

// Options identify the attempt (status.submissionID and the driver pod's name, which label
// and name the pods) and name the pod template files the spark-submit submitter passes; empty
// means none.
type Options struct {
	SubmissionID            string
	DriverPodName           string
	DriverPodTemplateFile   string
	ExecutorPodTemplateFile string
	// Decided is what a batch scheduler chose for the driver's and the executors' pods that
	// Spark sets from properties (its decision); zero where it chose nothing.
	Decided [2]Decided
}

// Decided is the part of a batch scheduler's decision for one role that Spark sets on pods from
// its properties, over the pod template: it is passed last, so it wins over the spec and the
// user's sparkConf (the precedence rule, sparkpod/precedence.go).
type Decided struct {
	SchedulerName string
	NodeSelector  map[string]string
}

// Build translates one attempt of app, which must already be defaulted. The order is
// deterministic: map-valued fields are emitted in key order, so equal specs give equal confs.
//
// The user's sparkConf (without the operator-owned keys) comes first, then hadoopConf, then
// the properties derived from dedicated spec fields, and the properties the operator must
// control (namespace, pod name, labels it selects on, templates) last.
func Build(app *v1beta2.SparkApplication, opts Options) (*Submit, error) {
	if app == nil {
		return nil, errors.New("no SparkApplication given")
	}
	spec := &app.Spec
	s := &Submit{
		DeployMode:          string(spec.Mode),
		MainClass:           ptr.Deref(spec.MainClass, ""),
		Name:                app.Name,
		ProxyUser:           ptr.Deref(spec.ProxyUser, ""),
		Jars:                spec.Deps.Jars,
		Files:               spec.Deps.Files,
		PyFiles:             spec.Deps.PyFiles,
		Packages:            spec.Deps.Packages,
		ExcludePackages:     spec.Deps.ExcludePackages,
		Repositories:        spec.Deps.Repositories,
		Archives:            spec.Deps.Archives,
		MainApplicationFile: spec.MainApplicationFile,
		Arguments:           spec.Arguments,
	}
	c := &confList{kv: UserProperties(spec.SparkConf, spec.HadoopConf, ApplicationOwned)}

	if err := specConf(c, app); err != nil {
		return nil, err
	}

	c.add(KeyNamespace, app.Namespace)
	c.add(KeyAppName, app.Name)
	c.add(KeyDriverPodName, opts.DriverPodName)
	c.add(KeyWaitAppCompletion, "false")
	for _, r := range roles {
		c.add(r.k8sPrefix+"label."+v1beta2.LabelAppName, app.Name)
		c.add(r.k8sPrefix+"label."+v1beta2.LabelLaunchedByOperator, "true")
		c.add(r.k8sPrefix+"label."+v1beta2.LabelSubmissionID, opts.SubmissionID)
	}
	for i, r := range roles {
		if name := SchedulerName(app, r.role, opts.Decided[i].SchedulerName); name != "" {
			c.add(r.k8sPrefix+"scheduler.name", name)
		}
		for _, k := range slices.Sorted(maps.Keys(opts.Decided[i].NodeSelector)) {
			c.add(r.k8sPrefix+"node.selector."+k, opts.Decided[i].NodeSelector[k])
		}
	}
	if opts.DriverPodTemplateFile != "" {
		c.add(KeyDriverTemplate, opts.DriverPodTemplateFile)
		c.add(KeyDriverTemplateCtr, v1beta2.SparkDriverContainerName)
	}
	if opts.ExecutorPodTemplateFile != "" {
		c.add(KeyExecutorTemplate, opts.ExecutorPodTemplateFile)
		c.add(KeyExecutorTemplateCtr, v1beta2.SparkExecutorContainerName)
	}
	s.Conf = c.kv
	return s, nil
}

// SchedulerName is the scheduler of role's pods when the operator decides it: the batch
// scheduler's choice, else spec.<role>.schedulerName; empty leaves it to the user's sparkConf
// and the pod template. Spark sets the scheduler its properties name over the pod template's,
// so the choice must be a property to win over the user's spark.kubernetes.scheduler.name and
// spark.kubernetes.<role>.scheduler.name, as it does with the Kubeflow operator, whose webhook
// sets spec.batchScheduler, else spec.<role>.schedulerName, over what Spark chose.
func SchedulerName(app *v1beta2.SparkApplication, r Role, batch string) string {
	if batch != "" {
		return batch
	}
	return ptr.Deref(r.PodSpec(app).SchedulerName, "")
}

// Role is the part a pod plays in a Spark application, the driver or executor half of the
// spec: "driver" or "executor", as Spark's spark-role label and the spec's field names say.
type Role string

const (
	Driver   Role = v1beta2.SparkRoleDriver
	Executor Role = v1beta2.SparkRoleExecutor
)

// roleInfo holds the property prefixes that differ between the two roles.
type roleInfo struct {
	role      Role
	k8sPrefix string // spark.kubernetes.driver. / spark.kubernetes.executor.
	envPrefix string // where plain environment variables go
}

var roles = [2]roleInfo{
	{role: Driver, k8sPrefix: "spark.kubernetes.driver.", envPrefix: "spark.kubernetes.driverEnv."},
	{role: Executor, k8sPrefix: "spark.kubernetes.executor.", envPrefix: "spark.executorEnv."},
}

// PodSpec is the role's part of the spec.
func (r Role) PodSpec(app *v1beta2.SparkApplication) *v1beta2.SparkPodSpec {
	if r == Driver {
		return &app.Spec.Driver.SparkPodSpec
	}
	return &app.Spec.Executor.SparkPodSpec
}

type confList struct{ kv []Property }

func (c *confList) add(k, v string) { c.kv = append(c.kv, Property{k, v}) }

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
	if name := ptr.Deref(spec.HadoopConfigMap, ""); name != "" {
		// Spark mounts it into the driver and executors and points HADOOP_CONF_DIR at it.
		c.add("spark.kubernetes.hadoop.configMapName", name)
	}
	for _, k := range slices.Sorted(maps.Keys(spec.NodeSelector)) {
		c.add("spark.kubernetes.node.selector."+k, spec.NodeSelector[k])
	}

	drv := &spec.Driver
	if drv.KubernetesMaster != nil && *drv.KubernetesMaster != "" {
		c.add("spark.kubernetes.driver.master", *drv.KubernetesMaster)
	}
	for _, k := range slices.Sorted(maps.Keys(drv.ServiceLabels)) {
		c.add("spark.kubernetes.driver.service.label."+k, drv.ServiceLabels[k])
	}
	for _, k := range slices.Sorted(maps.Keys(drv.ServiceAnnotations)) {
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
	for i, r := range roles {
		if err := roleConf(c, app, r, javaOpts[i]); err != nil {
			return err
		}
	}

	for _, p := range DynamicAllocationConf(spec.DynamicAllocation) {
		c.add(p.Key, p.Value)
	}
	return nil
}

// DynamicAllocationConf is the Spark properties of spec.dynamicAllocation; none when it is
// off. The SparkConnect controller passes the same to its servers.
func DynamicAllocationConf(da *v1beta2.DynamicAllocation) []Property {
	if da == nil || !da.Enabled {
		return nil
	}
	c := &confList{}
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
	return c.kv
}

// roleConf adds the properties of spec.driver or spec.executor.
func roleConf(c *confList, app *v1beta2.SparkApplication, r roleInfo, extraJavaOpts string) error {
	p := r.role.PodSpec(app)
	sizeConf(c, app, r, p, extraJavaOpts)
	metadataConf(c, app, r, p)
	if err := envConf(c, r, p); err != nil {
		return err
	}
	return volumeConf(c, app, r)
}

// sizeConf adds the role's image, sizes, service account and JVM options.
func sizeConf(c *confList, app *v1beta2.SparkApplication, r roleInfo, p *v1beta2.SparkPodSpec, extraJavaOpts string) {
	sparkPrefix := "spark." + string(r.role) + "."
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
		c.add("spark.kubernetes.authenticate."+string(r.role)+".serviceAccountName", *p.ServiceAccount)
	}
	javaOpts := joinNonEmpty(" ", ptr.Deref(p.JavaOptions, ""), extraJavaOpts)
	if javaOpts != "" {
		c.add(sparkPrefix+"extraJavaOptions", javaOpts)
	}
}

// metadataConf adds the role's pod labels, annotations and node selector.
func metadataConf(c *confList, app *v1beta2.SparkApplication, r roleInfo, p *v1beta2.SparkPodSpec) {
	// The application's own labels come first so that the pod-level ones win, and the
	// operator's labels (added last by Build) win over both.
	labels := maps.Clone(app.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, p.Labels)
	delete(labels, v1beta2.LabelCustomised) // the native submitter's alone to set
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		c.add(r.k8sPrefix+"label."+k, labels[k])
	}
	annotations := maps.Clone(p.Annotations)
	if port := MetricsPort(app, r.role); port != nil {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations["prometheus.io/scrape"] = "true"
		annotations["prometheus.io/port"] = strconv.Itoa(int(port.ContainerPort))
		annotations["prometheus.io/path"] = "/metrics"
	}
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		c.add(r.k8sPrefix+"annotation."+k, annotations[k])
	}
	for _, k := range slices.Sorted(maps.Keys(p.NodeSelector)) {
		c.add(r.k8sPrefix+"node.selector."+k, p.NodeSelector[k])
	}
}

// envConf adds the role's secrets and environment.
func envConf(c *confList, r roleInfo, p *v1beta2.SparkPodSpec) error {
	for i, s := range p.Secrets {
		env, err := SecretEnv(r.role, i, s)
		if err != nil {
			return err
		}
		c.add(r.k8sPrefix+"secrets."+s.Name, s.Path)
		if env.Name != "" {
			c.add(r.envPrefix+env.Name, env.Value)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.EnvVars)) {
		c.add(r.envPrefix+k, p.EnvVars[k])
	}
	for _, k := range slices.Sorted(maps.Keys(p.EnvSecretKeyRefs)) {
		ref := p.EnvSecretKeyRefs[k]
		if err := CheckEnvSecretKeyRef(r.role, k, ref); err != nil {
			return err
		}
		c.add(r.k8sPrefix+"secretKeyRef."+k, ref.Name+":"+ref.Key)
	}
	return nil
}

// volumeConf adds the role's volume mounts that Spark properties can express.
func volumeConf(c *confList, app *v1beta2.SparkApplication, r roleInfo) error {
	mounts, err := confVolumeMounts(app, r.role)
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
		for _, k := range slices.Sorted(maps.Keys(m.options)) {
			c.add(base+"options."+k, m.options[k])
		}
	}
	return nil
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
