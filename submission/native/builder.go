/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package native submits SparkApplications without spark-submit: it builds in Go the driver
// pod, its spark.properties ConfigMap, the executor pod-template ConfigMap and the headless
// driver Service that spark-submit 4.0.4 creates in cluster mode, and creates them directly.
// Skipping the JVM is what makes submission cheap (a few API calls instead of seconds of CPU).
package native

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
	"github.com/sparkop/spark-operator/submission"
)

// SparkVersion is the spark-submit version whose output this package reproduces; it is the
// value of the spark-version label, which names the submitting client, not the image.
const SparkVersion = "4.0.4"

// Names and paths fixed by Spark's Kubernetes resource manager; the driver and its entrypoint
// script expect them.
const (
	confVolumeName       = "spark-conf-volume-driver"
	confMountPath        = "/opt/spark/conf"
	propertiesKey        = "spark.properties"
	propertiesPath       = confMountPath + "/" + propertiesKey
	templateVolumeName   = "pod-template-volume"
	templateMountPath    = "/opt/spark/pod-template"
	templateFileName     = "pod-spec-template.yml"
	templateKey          = "podspec-configmap-key"
	localDirVolumePrefix = "spark-local-dir-"
	defaultLocalDirBase  = "/var/data/spark-"
	driverSvcSuffix      = "-driver-svc"
	defaultDriverPort    = 7078
	defaultBlockMgrPort  = 7079
	defaultUIPort        = 4040
	pythonRunnerClass    = "org.apache.spark.deploy.PythonRunner"
	rRunnerClass         = "org.apache.spark.deploy.RRunner"
	maxDNSLabel          = 63
)

// Options are the submitter-wide settings that spark-submit takes from its environment.
type Options struct {
	// Master is spark.master, e.g. "k8s://https://kubernetes.default.svc:443".
	Master string
	// SparkUser is the SPARK_USER of the driver when the application has no proxyUser;
	// spark-submit uses the name of the user it runs as.
	SparkUser string
}

// IDs are the random and time-dependent parts of a submission. Build takes them as input so
// that it stays a pure function; NewIDs makes them as spark-submit does.
type IDs struct {
	// AppID is spark.app.id: "spark-" and 32 hex digits.
	AppID string
	// ResourcePrefixID, ServiceID and ConfigMapID are Spark "unique IDs": 6 random hex digits
	// followed by the low 40 bits of the time in milliseconds, in hex.
	ResourcePrefixID string
	ServiceID        string
	ConfigMapID      string
	// LocalDirID names the default local directory, /var/data/spark-<LocalDirID>.
	LocalDirID string
	// SubmitTime is spark.app.submitTime.
	SubmitTime time.Time
	// ServiceName and TemplateConfigMapName, when set, replace the names derived from the IDs
	// above; resuming an interrupted submission uses them to match what the pod refers to.
	ServiceName           string
	TemplateConfigMapName string
}

// NewIDs draws fresh IDs.
func NewIDs(now time.Time) IDs {
	var b [16 + 9 + 16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms.
	u := b[25:41]
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u)
	return IDs{
		AppID:            "spark-" + hex.EncodeToString(b[:16]),
		ResourcePrefixID: uniqueID(b[16:19], now),
		ServiceID:        uniqueID(b[19:22], now),
		ConfigMapID:      uniqueID(b[22:25], now),
		LocalDirID:       h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:],
		SubmitTime:       now,
	}
}

func uniqueID(random []byte, now time.Time) string {
	return hex.EncodeToString(random) + strconv.FormatInt(now.UnixMilli()&0xFFFFFFFFFF, 16)
}

// Objects is what one submission creates.
type Objects struct {
	// Pod is the driver pod, owned by the SparkApplication.
	Pod *corev1.Pod
	// ConfigMap holds spark.properties; Service is the headless driver Service; PodTemplate,
	// nil unless executors need customising, holds the executor pod template. All three get
	// an owner reference to the driver pod once it exists (SetPodOwner).
	ConfigMap   *corev1.ConfigMap
	PodTemplate *corev1.ConfigMap
	Service     *corev1.Service
	// Properties is the content of spark.properties.
	Properties map[string]string
	// AppID is spark.app.id.
	AppID string
}

// SetPodOwner makes the pod the controlling owner of the other objects, so that they are
// garbage collected with it, as spark-submit arranges.
func (o *Objects) SetPodOwner(uid types.UID) {
	ref := []metav1.OwnerReference{{
		APIVersion: "v1",
		Kind:       "Pod",
		Name:       o.Pod.Name,
		UID:        uid,
		Controller: ptr.To(true),
	}}
	o.ConfigMap.OwnerReferences = ref
	o.Service.OwnerReferences = ref
	if o.PodTemplate != nil {
		o.PodTemplate.OwnerReferences = ref
	}
}

func userError(format string, args ...any) error {
	return &submission.Error{Message: fmt.Sprintf(format, args...)}
}

// Build computes the objects spark-submit would create for this attempt of app. Invalid specs
// give a *submission.Error.
func Build(app *v1beta2.SparkApplication, attempt submission.Attempt, opts Options, ids IDs) (*Objects, error) {
	if err := checkAttempt(app, attempt, opts); err != nil {
		return nil, err
	}
	c, err := submitConf(app, attempt, opts.Master)
	if err != nil {
		return nil, err
	}
	image := c.get(keyDriverImage, c[keyImage])
	if image == "" {
		return nil, userError("no driver image: set spec.image or spec.driver.image")
	}
	resourceType := sparkpod.ResourceType(app.Spec.Type)
	mainClass, err := chooseMainClass(&app.Spec, c)
	if err != nil {
		return nil, err
	}
	names := objectNamesFor(app.Name, ids)

	// What spark-submit adds to the user's conf before writing spark.properties.
	addSubmitConf(c, ids, resourceType)
	ports, err := driverNetwork(c, app, names.service)
	if err != nil {
		return nil, err
	}
	tmplCM, err := templateConfigMap(app, attempt.Scheduling.Executor, c, names.template)
	if err != nil {
		return nil, err
	}

	labels := driverLabels(app.Name, c, ids.AppID)
	pod, err := driverPod(app, c, driverParams{
		image:        image,
		mainClass:    mainClass,
		resourceType: resourceType,
		labels:       labels,
		appID:        ids.AppID,
		sparkUser:    opts.SparkUser,
		localDirID:   ids.LocalDirID,
		cmName:       names.conf,
		tmplCMName:   cmNameOf(tmplCM),
		ports:        ports,
	})
	if err != nil {
		return nil, err
	}
	// The batch scheduler's settings go on last: they win over the spec's (its scheduler name,
	// the nodes it reserved).
	attempt.Scheduling.Driver.Apply(&pod.ObjectMeta, &pod.Spec)

	svc := driverService(app.Namespace, names.service, ids.AppID, c, labels, ports)
	props := map[string]string(c)
	cm := propertiesConfigMap(app.Namespace, names.conf, ids.SubmitTime, props)
	return &Objects{Pod: pod, ConfigMap: cm, PodTemplate: tmplCM, Service: svc, Properties: props, AppID: ids.AppID}, nil
}

// checkAttempt rejects what spark-submit could not be asked to do: an application that is not
// stored yet, an attempt without its names, client mode, no primary resource, no master.
func checkAttempt(app *v1beta2.SparkApplication, attempt submission.Attempt, opts Options) error {
	if app == nil {
		return userError("no SparkApplication given")
	}
	s := &app.Spec
	switch {
	case app.Name == "" || app.Namespace == "":
		return userError("SparkApplication needs a name and a namespace")
	case app.UID == "":
		return userError("SparkApplication %s/%s has no UID: it must be stored before it is submitted", app.Namespace, app.Name)
	case attempt.DriverPodName == "" || attempt.SubmissionID == "":
		return userError("submission attempt needs a driver pod name and a submission ID")
	case s.Mode != "" && s.Mode != v1beta2.DeployModeCluster:
		return userError("native submission supports only cluster mode, not %q", s.Mode)
	case s.MainApplicationFile == "":
		return userError("spec.mainApplicationFile is required")
	case opts.Master == "":
		return userError("no Kubernetes master URL configured for submission")
	}
	return nil
}

// chooseMainClass is the class the driver runs: the user's for JVM applications, whose
// application jar spark-submit adds to spark.jars, or Spark's runner for Python and R.
func chooseMainClass(s *v1beta2.SparkApplicationSpec, c conf) (string, error) {
	switch s.Type {
	case v1beta2.SparkApplicationTypeJava, v1beta2.SparkApplicationTypeScala, "":
		if s.MainClass == nil || *s.MainClass == "" {
			return "", userError("spec.mainClass is required for %s applications", s.Type)
		}
		if !slices.Contains(strings.Split(c[keyJars], ","), s.MainApplicationFile) {
			if c[keyJars] == "" {
				c[keyJars] = s.MainApplicationFile
			} else {
				c[keyJars] += "," + s.MainApplicationFile
			}
		}
		return *s.MainClass, nil
	case v1beta2.SparkApplicationTypePython:
		return pythonRunnerClass, nil
	case v1beta2.SparkApplicationTypeR:
		return rRunnerClass, nil
	default:
		return "", userError("unknown application type %q", s.Type)
	}
}

// objectNames are the names of the objects created besides the driver pod.
type objectNames struct {
	service, conf, template string
}

func objectNamesFor(appName string, ids IDs) objectNames {
	prefix := resourceNamePrefix(appName, ids.ResourcePrefixID)
	n := objectNames{
		service:  prefix + driverSvcSuffix,
		conf:     "spark-drv-" + ids.ConfigMapID + "-conf-map",
		template: prefix + "-driver-podspec-conf-map",
	}
	if len(n.service) > maxDNSLabel {
		n.service = "spark-" + ids.ServiceID + driverSvcSuffix
	}
	if ids.ServiceName != "" {
		n.service = ids.ServiceName
	}
	if ids.TemplateConfigMapName != "" {
		n.template = ids.TemplateConfigMapName
	}
	return n
}

// addSubmitConf adds the application's identity and the properties spark-submit always sets.
func addSubmitConf(c conf, ids IDs, resourceType string) {
	c[keyAppID] = ids.AppID
	c[keyAppSubmitTime] = strconv.FormatInt(ids.SubmitTime.UnixMilli(), 10)
	c[keySubmitInDriver] = "true"
	c[sparkpod.KeyResourceType] = resourceType
	if _, ok := c[sparkpod.KeyOverheadFactor]; !ok {
		c[sparkpod.KeyOverheadFactor] = strconv.FormatFloat(sparkpod.DefaultOverheadFactor(resourceType), 'f', -1, 64)
	}
	if _, ok := c[keyPyFiles]; !ok {
		c[keyPyFiles] = ""
	}
	if cm := sparkpod.HadoopConfigMap(sparkpod.RoleDriver, c); cm != "" {
		c[sparkpod.KeyExecutorHadoopConfigMap] = cm // for the executors, as Spark's driver step passes it on
	}
}

// driverPorts are the ports the driver listens on, which its Service exposes.
type driverPorts struct {
	rpc, blockManager, ui int32
}

// driverNetwork reads the driver's ports and sets the properties the executors reach it by:
// its host (the Service's name) and its ports.
func driverNetwork(c conf, app *v1beta2.SparkApplication, svcName string) (driverPorts, error) {
	var p driverPorts
	var err error
	if p.rpc, err = portConf(c, keyDriverPort, defaultDriverPort); err != nil {
		return p, err
	}
	if p.blockManager, err = portConf(c, keyBlockManagerPort, defaultBlockMgrPort); err != nil {
		return p, err
	}
	if p.ui, err = portConf(c, keyUIPort, defaultUIPort); err != nil {
		return p, err
	}
	delete(c, keyUIPort) // only read, never written back, unless the user set it
	if v, ok := app.Spec.SparkConf[keyUIPort]; ok {
		c[keyUIPort] = v
	}
	c[keyDriverHost] = svcName + "." + app.Namespace + ".svc"
	c[keyDriverPort] = strconv.Itoa(int(p.rpc))
	c[keyBlockManagerPort] = strconv.Itoa(int(p.blockManager))
	return p, nil
}

// driverLabels are the driver pod's labels, which the driver Service selects it by.
func driverLabels(appName string, c conf, appID string) map[string]string {
	labels := make(map[string]string, 8)
	for k, v := range c.prefixed(prefixDriverLabel) {
		labels[k] = v
	}
	labels[v1beta2.SparkAppSelectorLabel] = appID
	labels[v1beta2.SparkRoleLabel] = v1beta2.SparkRoleDriver
	labels["spark-version"] = SparkVersion
	labels[v1beta2.SparkAppNameLabel] = appNameLabel(appName)
	return labels
}

func portConf(c conf, key string, def int32) (int32, error) {
	v, ok := c[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil || n <= 0 || n > 65535 {
		return 0, userError("%s=%q: want a port number from 1 to 65535", key, v)
	}
	return int32(n), nil
}

// resourceNamePrefix mirrors how spark-submit derives the prefix of the Service and
// pod-template ConfigMap names from the application name.
func resourceNamePrefix(appName, id string) string {
	return sanitize(strings.TrimSpace(appName + "-" + id))
}

// appNameLabel makes the application name a valid label value, as Spark does.
func appNameLabel(appName string) string {
	v := sanitize(strings.TrimSpace(appName))
	if len(v) > maxDNSLabel {
		v = v[:maxDNSLabel]
	}
	return strings.Trim(v, "-")
}

// sanitize lower-cases s, turns every character outside [a-z0-9-] into '-' and collapses runs
// of '-'.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	return b.String()
}

func cmNameOf(cm *corev1.ConfigMap) string {
	if cm == nil {
		return ""
	}
	return cm.Name
}

func merge[M ~map[K]V, K comparable, V any](dst, src M) M {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = make(M, len(src))
	}
	for k, v := range src {
		dst[k] = v
	}
	return dst
}
