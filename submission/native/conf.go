/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package native

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/submission"
)

// Spark property keys. They are Spark's public configuration names, spelled out once here so
// that the spec-to-conf translation and the conf-to-pod steps cannot drift apart.
const (
	keyAppName              = "spark.app.name"
	keyAppID                = "spark.app.id"
	keyAppSubmitTime        = "spark.app.submitTime"
	keyMaster               = "spark.master"
	keyDeployMode           = "spark.submit.deployMode"
	keyNamespace            = "spark.kubernetes.namespace"
	keyWaitAppCompletion    = "spark.kubernetes.submission.waitAppCompletion"
	keyDriverPodName        = "spark.kubernetes.driver.pod.name"
	keyImage                = "spark.kubernetes.container.image"
	keyDriverImage          = "spark.kubernetes.driver.container.image"
	keyExecutorImage        = "spark.kubernetes.executor.container.image"
	keyPullPolicy           = "spark.kubernetes.container.image.pullPolicy"
	keyPullSecrets          = "spark.kubernetes.container.image.pullSecrets"
	keyDriverCores          = "spark.driver.cores"
	keyDriverRequestCores   = "spark.kubernetes.driver.request.cores"
	keyDriverLimitCores     = "spark.kubernetes.driver.limit.cores"
	keyDriverMemory         = "spark.driver.memory"
	keyDriverOverhead       = "spark.driver.memoryOverhead"
	keyDriverOverheadFactor = "spark.driver.memoryOverheadFactor"
	keyDriverMinOverhead    = "spark.driver.minMemoryOverhead"
	keyOverheadFactor       = "spark.kubernetes.memoryOverheadFactor"
	keyDriverJavaOptions    = "spark.driver.extraJavaOptions"
	keyDriverServiceAccount = "spark.kubernetes.authenticate.driver.serviceAccountName"
	keyDriverMaster         = "spark.kubernetes.driver.master"
	keyExecutorCores        = "spark.executor.cores"
	keyExecutorRequestCores = "spark.kubernetes.executor.request.cores"
	keyExecutorLimitCores   = "spark.kubernetes.executor.limit.cores"
	keyExecutorMemory       = "spark.executor.memory"
	keyExecutorOverhead     = "spark.executor.memoryOverhead"
	keyExecutorJavaOptions  = "spark.executor.extraJavaOptions"
	keyExecutorInstances    = "spark.executor.instances"
	keyExecutorDelete       = "spark.kubernetes.executor.deleteOnTermination"
	keyExecutorSA           = "spark.kubernetes.authenticate.executor.serviceAccountName"
	keyJars                 = "spark.jars"
	keyFiles                = "spark.files"
	keyPyFiles              = "spark.submit.pyFiles"
	keyPackages             = "spark.jars.packages"
	keyExcludes             = "spark.jars.excludes"
	keyRepositories         = "spark.jars.repositories"
	keyArchives             = "spark.archives"
	keyPythonVersion        = "spark.kubernetes.pyspark.pythonVersion"
	keyPySparkPython        = "spark.pyspark.python"
	keyPySparkDriverPython  = "spark.pyspark.driver.python"
	keyResourceType         = "spark.kubernetes.resource.type"
	keySubmitInDriver       = "spark.kubernetes.submitInDriver"
	keyDriverHost           = "spark.driver.host"
	keyDriverPort           = "spark.driver.port"
	keyBlockManagerPort     = "spark.driver.blockManager.port"
	keyUIPort               = "spark.ui.port"
	keyExecTemplateFile     = "spark.kubernetes.executor.podTemplateFile"
	keyExecTemplateName     = "spark.kubernetes.executor.podTemplateContainerName"
	keyLocalDirsTmpfs       = "spark.kubernetes.local.dirs.tmpfs"
	keyIPFamilyPolicy       = "spark.kubernetes.driver.service.ipFamilyPolicy"
	keyIPFamilies           = "spark.kubernetes.driver.service.ipFamilies"
	keyDynAlloc             = "spark.dynamicAllocation.enabled"
	keyDynInitial           = "spark.dynamicAllocation.initialExecutors"
	keyDynMin               = "spark.dynamicAllocation.minExecutors"
	keyDynMax               = "spark.dynamicAllocation.maxExecutors"
	keyShuffleTracking      = "spark.dynamicAllocation.shuffleTracking.enabled"
	keyShuffleTrackTimeout  = "spark.dynamicAllocation.shuffleTracking.timeout"

	prefixDriverLabel        = "spark.kubernetes.driver.label."
	prefixDriverAnnotation   = "spark.kubernetes.driver.annotation."
	prefixDriverEnv          = "spark.kubernetes.driverEnv."
	prefixDriverSecrets      = "spark.kubernetes.driver.secrets."
	prefixDriverSecretKeyRef = "spark.kubernetes.driver.secretKeyRef."
	prefixDriverSvcLabel     = "spark.kubernetes.driver.service.label."
	prefixDriverSvcAnnot     = "spark.kubernetes.driver.service.annotation."
	prefixNodeSelector       = "spark.kubernetes.node.selector."
	prefixDriverNodeSelector = "spark.kubernetes.driver.node.selector."
	prefixExecNodeSelector   = "spark.kubernetes.executor.node.selector."
	prefixExecutorLabel      = "spark.kubernetes.executor.label."
	prefixExecutorAnnotation = "spark.kubernetes.executor.annotation."
	prefixExecutorEnv        = "spark.executorEnv."
	prefixExecutorSecrets    = "spark.kubernetes.executor.secrets."
	prefixExecutorSecretRef  = "spark.kubernetes.executor.secretKeyRef."
	prefixHadoop             = "spark.hadoop."
)

// conf is a Spark configuration: what spark-submit would hold after parsing its command line.
type conf map[string]string

func (c conf) get(key, def string) string {
	if v, ok := c[key]; ok {
		return v
	}
	return def
}

// prefixed returns the entries under prefix with the prefix cut off, as Spark's
// parsePrefixedKeyValuePairs does.
func (c conf) prefixed(prefix string) map[string]string {
	var out map[string]string
	for k, v := range c {
		if len(k) > len(prefix) && strings.HasPrefix(k, prefix) {
			if out == nil {
				out = make(map[string]string)
			}
			out[k[len(prefix):]] = v
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// submitConf translates the application into the Spark configuration that the spark-submit
// submitter passes on its command line (the Kubeflow operator's translation): spec.sparkConf
// first, then the typed fields, which win over it.
func submitConf(app *v1beta2.SparkApplication, attempt submission.Attempt, master string) conf {
	s := &app.Spec
	c := make(conf, 48+len(s.SparkConf)+len(s.HadoopConf))
	for k, v := range s.SparkConf {
		c[k] = v
	}
	for k, v := range s.HadoopConf {
		c[prefixHadoop+k] = v
	}
	c[keyMaster] = master
	c[keyDeployMode] = string(v1beta2.DeployModeCluster)
	c[keyAppName] = app.Name
	c[keyNamespace] = app.Namespace
	c[keyWaitAppCompletion] = "false"
	c[keyDriverPodName] = attempt.DriverPodName
	setStr(c, keyImage, s.Image)
	setStr(c, keyPullPolicy, s.ImagePullPolicy)
	if len(s.ImagePullSecrets) > 0 {
		c[keyPullSecrets] = strings.Join(s.ImagePullSecrets, ",")
	}
	setList(c, keyJars, s.Deps.Jars)
	setList(c, keyFiles, s.Deps.Files)
	setList(c, keyPyFiles, s.Deps.PyFiles)
	setList(c, keyPackages, s.Deps.Packages)
	setList(c, keyExcludes, s.Deps.ExcludePackages)
	setList(c, keyRepositories, s.Deps.Repositories)
	setList(c, keyArchives, s.Deps.Archives)
	setStr(c, keyPythonVersion, s.PythonVersion)
	setStr(c, keyOverheadFactor, s.MemoryOverheadFactor)
	for k, v := range s.NodeSelector {
		c[prefixNodeSelector+k] = v
	}
	if d := s.DynamicAllocation; d != nil && d.Enabled {
		c[keyDynAlloc] = "true"
		setInt32(c, keyDynInitial, d.InitialExecutors)
		setInt32(c, keyDynMin, d.MinExecutors)
		setInt32(c, keyDynMax, d.MaxExecutors)
		if d.ShuffleTrackingEnabled != nil {
			c[keyShuffleTracking] = strconv.FormatBool(*d.ShuffleTrackingEnabled)
		}
		if d.ShuffleTrackingTimeout != nil {
			c[keyShuffleTrackTimeout] = strconv.FormatInt(*d.ShuffleTrackingTimeout, 10)
		}
	}

	driverAgent, executorAgent := monitoringConf(c, app)

	// Driver.
	d := &s.Driver
	// The Kubeflow translation names the image per role even when only spec.image is set.
	setStr(c, keyDriverImage, s.Image)
	setStr(c, keyDriverImage, d.Image)
	setInt32(c, keyDriverCores, d.Cores)
	setStr(c, keyDriverRequestCores, d.CoreRequest)
	setStr(c, keyDriverLimitCores, d.CoreLimit)
	setStr(c, keyDriverMemory, d.Memory)
	setStr(c, keyDriverOverhead, d.MemoryOverhead)
	setStr(c, keyDriverServiceAccount, d.ServiceAccount)
	setStr(c, keyDriverJavaOptions, joinNonEmpty(deref(d.JavaOptions), driverAgent))
	setStr(c, keyDriverMaster, d.KubernetesMaster)
	for k, v := range d.Labels {
		c[prefixDriverLabel+k] = v
	}
	c[prefixDriverLabel+v1beta2.LabelAppName] = app.Name
	c[prefixDriverLabel+v1beta2.LabelLaunchedByOperator] = "true"
	c[prefixDriverLabel+v1beta2.LabelSubmissionID] = attempt.SubmissionID
	for k, v := range d.Annotations {
		c[prefixDriverAnnotation+k] = v
	}
	addScrapeAnnotations(c, prefixDriverAnnotation, s, true)
	for k, v := range d.EnvVars {
		c[prefixDriverEnv+k] = v
	}
	for k, v := range d.EnvSecretKeyRefs {
		c[prefixDriverSecretKeyRef+k] = v.Name + ":" + v.Key
	}
	for _, sec := range d.Secrets {
		c[prefixDriverSecrets+sec.Name] = sec.Path
		addSecretEnv(c, prefixDriverEnv, sec)
	}
	for k, v := range d.NodeSelector {
		c[prefixDriverNodeSelector+k] = v
	}
	addVolumeConf(c, "spark.kubernetes.driver.volumes.", sparkVolumes(s, &d.SparkPodSpec))
	for k, v := range d.ServiceLabels {
		c[prefixDriverSvcLabel+k] = v
	}
	for k, v := range d.ServiceAnnotations {
		c[prefixDriverSvcAnnot+k] = v
	}

	// Executors.
	e := &s.Executor
	setStr(c, keyExecutorImage, s.Image)
	setStr(c, keyExecutorImage, e.Image)
	setInt32(c, keyExecutorCores, e.Cores)
	setStr(c, keyExecutorRequestCores, e.CoreRequest)
	setStr(c, keyExecutorLimitCores, e.CoreLimit)
	setStr(c, keyExecutorMemory, e.Memory)
	setStr(c, keyExecutorOverhead, e.MemoryOverhead)
	setStr(c, keyExecutorSA, e.ServiceAccount)
	setStr(c, keyExecutorJavaOptions, joinNonEmpty(deref(e.JavaOptions), executorAgent))
	setInt32(c, keyExecutorInstances, e.Instances)
	if e.DeleteOnTermination != nil {
		c[keyExecutorDelete] = strconv.FormatBool(*e.DeleteOnTermination)
	}
	for k, v := range e.Labels {
		c[prefixExecutorLabel+k] = v
	}
	c[prefixExecutorLabel+v1beta2.LabelAppName] = app.Name
	c[prefixExecutorLabel+v1beta2.LabelLaunchedByOperator] = "true"
	c[prefixExecutorLabel+v1beta2.LabelSubmissionID] = attempt.SubmissionID
	for k, v := range e.Annotations {
		c[prefixExecutorAnnotation+k] = v
	}
	addScrapeAnnotations(c, prefixExecutorAnnotation, s, false)
	for k, v := range e.EnvVars {
		c[prefixExecutorEnv+k] = v
	}
	for k, v := range e.EnvSecretKeyRefs {
		c[prefixExecutorSecretRef+k] = v.Name + ":" + v.Key
	}
	for _, sec := range e.Secrets {
		c[prefixExecutorSecrets+sec.Name] = sec.Path
		addSecretEnv(c, prefixExecutorEnv, sec)
	}
	for k, v := range e.NodeSelector {
		c[prefixExecNodeSelector+k] = v
	}
	addVolumeConf(c, "spark.kubernetes.executor.volumes.", sparkVolumes(s, &e.SparkPodSpec))
	return c
}

// Metrics settings of spec.monitoring, as the spark-submit submitter (and the Kubeflow
// operator before it) translates them.
const (
	keyMetricsConf         = "spark.metrics.conf"
	keyMetricsNamespace    = "spark.metrics.namespace"
	defaultMetricsPropFile = "/etc/metrics/conf/metrics.properties"
	defaultPromConfigFile  = "/etc/metrics/conf/prometheus.yaml"
	defaultPrometheusPort  = int32(8090)
	defaultPromPortName    = "jmx-exporter"
)

// monitoringConf adds the metrics properties of spec.monitoring and returns the JVM option
// that loads the Prometheus JMX exporter agent into the driver and into the executors ("" for
// a role that does not expose metrics).
func monitoringConf(c conf, app *v1beta2.SparkApplication) (driverAgent, executorAgent string) {
	m := app.Spec.Monitoring
	if m == nil {
		return "", ""
	}
	metricsFile := defaultMetricsPropFile
	if m.MetricsPropertiesFile != nil && *m.MetricsPropertiesFile != "" {
		metricsFile = *m.MetricsPropertiesFile
	}
	c[keyMetricsConf] = metricsFile
	// Without a namespace the metric names carry the random application ID.
	c[keyMetricsNamespace] = app.Namespace + "." + app.Name
	p := m.Prometheus
	if p == nil || p.JmxExporterJar == "" {
		return "", ""
	}
	configFile := defaultPromConfigFile
	if p.ConfigFile != nil && *p.ConfigFile != "" {
		configFile = *p.ConfigFile
	}
	agent := fmt.Sprintf("-javaagent:%s=%d:%s", p.JmxExporterJar, prometheusPort(p), configFile)
	if m.ExposeDriverMetrics {
		driverAgent = agent
	}
	if m.ExposeExecutorMetrics {
		executorAgent = agent
	}
	return driverAgent, executorAgent
}

// metricsPort is the container port of the Prometheus exporter of the driver (or of the
// executors), nil when that role does not expose metrics.
func metricsPort(s *v1beta2.SparkApplicationSpec, driver bool) *corev1.ContainerPort {
	m := s.Monitoring
	if m == nil || m.Prometheus == nil || m.Prometheus.JmxExporterJar == "" ||
		(driver && !m.ExposeDriverMetrics) || (!driver && !m.ExposeExecutorMetrics) {
		return nil
	}
	name := defaultPromPortName
	if n := m.Prometheus.PortName; n != nil && *n != "" {
		name = *n
	}
	return &corev1.ContainerPort{Name: name, ContainerPort: prometheusPort(m.Prometheus), Protocol: corev1.ProtocolTCP}
}

// addScrapeAnnotations marks the pods of a role that exposes metrics for annotation-based
// Prometheus discovery; they win over the user's annotations of the same names.
func addScrapeAnnotations(c conf, prefix string, s *v1beta2.SparkApplicationSpec, driver bool) {
	port := metricsPort(s, driver)
	if port == nil {
		return
	}
	c[prefix+"prometheus.io/scrape"] = "true"
	c[prefix+"prometheus.io/port"] = strconv.Itoa(int(port.ContainerPort))
	c[prefix+"prometheus.io/path"] = "/metrics"
}

func prometheusPort(p *v1beta2.PrometheusSpec) int32 {
	if p.Port != nil {
		return *p.Port
	}
	return defaultPrometheusPort
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func joinNonEmpty(parts ...string) *string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	out := strings.Join(keep, " ")
	return &out
}

// sparkVolume is a mount of a role's main container whose volume Spark properties can declare.
type sparkVolume struct {
	kind     string // hostPath, emptyDir, nfs or persistentVolumeClaim
	mount    corev1.VolumeMount
	options  map[string]string
	readOnly bool // the volume source's own read-only flag
}

// sparkVolumes returns the mounts of p's main container that the spark-submit submitter (like
// the Kubeflow operator) passes as spark.kubernetes.<role>.volumes.* properties: those of
// hostPath, emptyDir, nfs and persistentVolumeClaim volumes that no sidecar or init container
// mounts too.
func sparkVolumes(s *v1beta2.SparkApplicationSpec, p *v1beta2.SparkPodSpec) []sparkVolume {
	shared := map[string]bool{}
	for _, cs := range [][]corev1.Container{p.Sidecars, p.InitContainers} {
		for _, c := range cs {
			for _, m := range c.VolumeMounts {
				shared[m.Name] = true
			}
		}
	}
	var out []sparkVolume
	for _, m := range p.VolumeMounts {
		i := slices.IndexFunc(s.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if i < 0 || m.MountPath == "" || shared[m.Name] {
			continue
		}
		v := &s.Volumes[i]
		sv := sparkVolume{mount: m, options: map[string]string{}}
		switch {
		case v.HostPath != nil:
			sv.kind = "hostPath"
			sv.options["path"] = v.HostPath.Path
			if v.HostPath.Type != nil && *v.HostPath.Type != "" {
				sv.options["type"] = string(*v.HostPath.Type)
			}
		case v.EmptyDir != nil:
			sv.kind = "emptyDir"
			if v.EmptyDir.Medium != "" {
				sv.options["medium"] = string(v.EmptyDir.Medium)
			}
			if v.EmptyDir.SizeLimit != nil {
				sv.options["sizeLimit"] = v.EmptyDir.SizeLimit.String()
			}
		case v.NFS != nil:
			sv.kind = "nfs"
			sv.options["server"], sv.options["path"], sv.readOnly = v.NFS.Server, v.NFS.Path, v.NFS.ReadOnly
		case v.PersistentVolumeClaim != nil:
			sv.kind = "persistentVolumeClaim"
			sv.options["claimName"], sv.readOnly = v.PersistentVolumeClaim.ClaimName, v.PersistentVolumeClaim.ReadOnly
		default:
			continue
		}
		out = append(out, sv)
	}
	return out
}

func addVolumeConf(c conf, prefix string, vols []sparkVolume) {
	for _, v := range vols {
		base := prefix + v.kind + "." + v.mount.Name + "."
		c[base+"mount.path"] = v.mount.MountPath
		if v.mount.SubPath != "" {
			c[base+"mount.subPath"] = v.mount.SubPath
		}
		if v.mount.SubPathExpr != "" {
			c[base+"mount.subPathExpr"] = v.mount.SubPathExpr
		}
		if v.mount.ReadOnly || v.readOnly {
			c[base+"mount.readOnly"] = "true"
		}
		for k, o := range v.options {
			c[base+"options."+k] = o
		}
	}
}

// addSecretEnv points the well-known credential variables at typed secrets, as the Kubeflow
// operator does, so applications find them without extra configuration.
func addSecretEnv(c conf, envPrefix string, sec v1beta2.SecretInfo) {
	switch sec.Type {
	case v1beta2.SecretTypeGCPServiceAccount:
		c[envPrefix+"GOOGLE_APPLICATION_CREDENTIALS"] = strings.TrimSuffix(sec.Path, "/") + "/key.json"
	case v1beta2.SecretTypeHadoopDelegationToken:
		c[envPrefix+"HADOOP_TOKEN_FILE_LOCATION"] = strings.TrimSuffix(sec.Path, "/") + "/hadoop.token"
	}
}

func setStr(c conf, key string, v *string) {
	if v != nil && *v != "" {
		c[key] = *v
	}
}

func setInt32(c conf, key string, v *int32) {
	if v != nil {
		c[key] = strconv.FormatInt(int64(*v), 10)
	}
}

func setList(c conf, key string, v []string) {
	if len(v) > 0 {
		c[key] = strings.Join(v, ",")
	}
}

// mebibytes parses a size in Spark's notation ("512m", "2g", "1024k"); a bare number is in
// MiB, as Spark reads spark.driver.memory and spark.driver.memoryOverhead.
func mebibytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("invalid size %q: want a number with an optional unit such as 512m or 2g", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: %v", s, err)
	}
	var shift uint // log2 of the unit in bytes, relative to MiB below
	switch t[i:] {
	case "", "m", "mb":
		return n, nil
	case "b":
		return n >> 20, nil
	case "k", "kb":
		return n >> 10, nil
	case "g", "gb":
		shift = 10
	case "t", "tb":
		shift = 20
	case "p", "pb":
		shift = 30
	default:
		return 0, fmt.Errorf("invalid size %q: unknown unit %q", s, t[i:])
	}
	if n > (1<<62)>>shift {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return n << shift, nil
}

// javaDate formats t as java.util.Date#toString does, for the comment that
// java.util.Properties#store writes.
func javaDate(t time.Time) string {
	return t.Format("Mon Jan 02 15:04:05 MST 2006")
}

// propertiesFile renders props in java.util.Properties#store format, which the driver reads
// back with Properties#load: keys in sorted order so equal confs give equal files.
func propertiesFile(comment string, when time.Time, props map[string]string) string {
	var b strings.Builder
	b.Grow(64 * (len(props) + 2))
	b.WriteString("#")
	b.WriteString(comment)
	b.WriteString("\n#")
	b.WriteString(javaDate(when))
	b.WriteString("\n")
	for _, k := range sortedKeys(props) {
		escapeProperty(&b, k, true)
		b.WriteByte('=')
		escapeProperty(&b, props[k], false)
		b.WriteByte('\n')
	}
	return b.String()
}

func escapeProperty(b *strings.Builder, s string, isKey bool) {
	for i, r := range s {
		switch r {
		case ' ':
			if i == 0 || isKey {
				b.WriteByte('\\')
			}
			b.WriteByte(' ')
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\f':
			b.WriteString(`\f`)
		case '=', ':', '#', '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
}

// ParseProperties reads a file in java.util.Properties format (as written by spark-submit or
// by this package) into a map; tests use it to compare ConfigMaps by content.
func ParseProperties(s string) (map[string]string, error) {
	out := make(map[string]string)
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		// A line ending in an odd number of backslashes continues on the next one.
		for strings.HasSuffix(line, `\`) && (len(line)-len(strings.TrimRight(line, `\`)))%2 == 1 && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		key, rest := splitKey(line)
		k, err := unescapeProperty(key)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		v, err := unescapeProperty(rest)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		out[k] = v
	}
	return out, nil
}

func splitKey(line string) (string, string) {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '=', ':', ' ', '\t', '\f':
			key := line[:i]
			rest := strings.TrimLeft(line[i:], " \t\f")
			if rest != "" && (rest[0] == '=' || rest[0] == ':') && (line[i] == ' ' || line[i] == '\t' || line[i] == '\f') {
				rest = rest[1:]
			} else if line[i] == '=' || line[i] == ':' {
				rest = line[i+1:]
			}
			return key, strings.TrimLeft(rest, " \t\f")
		}
	}
	return line, ""
}

func unescapeProperty(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf("truncated \\u escape in %q", s)
			}
			n, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf("bad \\u escape in %q", s)
			}
			b.WriteRune(rune(n))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}
