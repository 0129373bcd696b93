/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package executors creates executor pods for tests the way a Spark driver would. The local
// cluster's kwok nodes run no Spark, so no driver ever asks for executors; tests that need
// them (executor state tracking, gang scheduling, metrics) make them with this package.
package executors

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
)

// Annotations the local cluster's kwok stages act on (hack/kwok/stages.yaml).
const (
	AnnotationRunSeconds = "kwok.sparkop.dev/run-seconds"
	AnnotationExitCode   = "kwok.sparkop.dev/exit-code"
)

// Label keys Spark puts on executors that v1beta2 does not name.
const (
	LabelResourceProfileID = "spark-resource-profile-id"
)

const (
	defaultCores     = 1
	defaultMemoryMiB = 1024
	// Spark's memory overhead: 10% of the executor memory, at least 384 MiB.
	minOverheadMiB = 384
	// Spark's spark.driver.port default on Kubernetes.
	driverPort = 7078
	// Spark keeps the executor pod name prefix short enough that "-exec-<id>" still fits a
	// 63-character DNS label.
	maxPrefixLength = 47
)

// Options tune the executors Create makes.
type Options struct {
	// FirstID is the executor ID of the first pod; 0 means 1, Spark's first executor ID.
	// Tests that add executors later (dynamic allocation) continue from the last ID.
	FirstID int
	// Annotations are added to every executor, for example the kwok annotations.
	Annotations map[string]string
	// Cores is spark.executor.cores; 0 means 1.
	Cores int
	// MemoryMiB is spark.executor.memory in MiB; 0 means 1024. The pod requests it plus
	// Spark's overhead.
	MemoryMiB int
	// PodNamePrefix is spark.kubernetes.executor.podNamePrefix (a SparkConnect server sets it
	// to the SparkConnect's name); empty means the prefix Spark derives (PodNamePrefix).
	PodNamePrefix string
	// Template is the executor pod template the driver was given (see TemplateOf); when set,
	// executors are built on it as Spark builds them: its metadata and spec are the base, its
	// executor container (by name, else its first) gets Spark's settings.
	Template *corev1.Pod
	// Conf is the driver's Spark configuration (its spark.properties); when set, it sizes the
	// executors (cpu, memory, device resources) as Spark's executor reads it, and Cores and
	// MemoryMiB are ignored.
	Conf map[string]string
}

// Where Spark mounts the executor pod template into the driver (both submitters).
const templateVolume = "pod-template-volume"

// TemplateOf reads the executor pod template mounted into driver from its ConfigMap; nil when
// the driver has none.
func TemplateOf(ctx context.Context, c client.Reader, driver *corev1.Pod) (*corev1.Pod, error) {
	for _, v := range driver.Spec.Volumes {
		if v.Name != templateVolume || v.ConfigMap == nil {
			continue
		}
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: driver.Namespace, Name: v.ConfigMap.Name}, cm); err != nil {
			return nil, fmt.Errorf("reading executor pod template of driver %s/%s: %w", driver.Namespace, driver.Name, err)
		}
		key := ""
		for _, item := range v.ConfigMap.Items {
			key = item.Key
		}
		data, ok := cm.Data[key]
		if !ok {
			return nil, fmt.Errorf("ConfigMap %s/%s has no key %q", cm.Namespace, cm.Name, key)
		}
		pod := &corev1.Pod{}
		if err := yaml.Unmarshal([]byte(data), pod); err != nil {
			return nil, fmt.Errorf("decoding executor pod template of driver %s/%s: %w", driver.Namespace, driver.Name, err)
		}
		return pod, nil
	}
	return nil, nil
}

// PodNamePrefix is the executor pod name prefix Spark would choose for the application of
// driver: the application name and a hex suffix. Spark's suffix is random; this one is derived
// from the driver's UID so that tests can predict names.
func PodNamePrefix(driver *corev1.Pod) string {
	base := driver.Labels[v1beta2.SparkAppNameLabel]
	if base == "" {
		base = strings.TrimSuffix(driver.Name, "-driver")
	}
	seed := string(driver.UID)
	if seed == "" {
		seed = driver.Namespace + "/" + driver.Name
	}
	sum := sha256.Sum256([]byte(seed))
	suffix := hex.EncodeToString(sum[:])[:16]
	if keep := maxPrefixLength - len(suffix) - 1; len(base) > keep {
		base = base[:keep]
	}
	base = strings.Trim(base, "-.")
	if base == "" {
		return "spark-" + suffix
	}
	return base + "-" + suffix
}

// Name is the name of executor id of driver's application.
func Name(driver *corev1.Pod, id int) string {
	return fmt.Sprintf("%s-exec-%d", PodNamePrefix(driver), id)
}

// Build returns executor id of driver's application, as Create would create it.
func Build(driver *corev1.Pod, id int, opts Options) (*corev1.Pod, error) {
	if driver == nil {
		return nil, errors.New("no driver pod")
	}
	if driver.UID == "" {
		return nil, fmt.Errorf("driver pod %s/%s has no UID; pass the pod as read from the API server", driver.Namespace, driver.Name)
	}
	if id < 1 {
		return nil, fmt.Errorf("executor ID %d: Spark's IDs start at 1", id)
	}
	cores, memMiB, sized, err := sizes(opts)
	if err != nil {
		return nil, err
	}
	pod := fromTemplate(driver, id, opts)
	c := executorContainer(pod)
	c.Image = driverImage(driver)
	c.Args = append(c.Args, "executor")
	c.Ports = append(c.Ports, corev1.ContainerPort{Name: "blockmanager", ContainerPort: 7079, Protocol: corev1.ProtocolTCP})
	c.Env = append(c.Env, executorEnv(driver, id, cores, memMiB)...)
	// Spark sets cpu, memory and devices and keeps whatever else the template asks for.
	c.Resources.Requests = merged(c.Resources.Requests, sized.Requests)
	c.Resources.Limits = merged(c.Resources.Limits, sized.Limits)
	return pod, nil
}

// sizes are an executor's cores, memory (MiB) and container resources, from opts.
func sizes(opts Options) (cores, memMiB int, sized corev1.ResourceRequirements, err error) {
	cores = opts.Cores
	if cores <= 0 {
		cores = defaultCores
	}
	memMiB = opts.MemoryMiB
	if memMiB <= 0 {
		memMiB = defaultMemoryMiB
	}
	podMiB := int64(memMiB + max(memMiB/10, minOverheadMiB))
	sized = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewQuantity(int64(cores), resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(podMiB*1024*1024, resource.BinarySI),
		},
		Limits: corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(podMiB*1024*1024, resource.BinarySI)},
	}
	if opts.Conf != nil {
		if sized, err = sparkpod.ContainerResources(sparkpod.RoleExecutor, opts.Conf); err != nil {
			return 0, 0, sized, err
		}
		if cores, err = strconv.Atoi(opts.Conf["spark.executor.cores"]); err != nil {
			cores = defaultCores
		}
		if memMiB64, err := sparkpod.ParseMiB(opts.Conf["spark.executor.memory"]); err == nil {
			memMiB = int(memMiB64)
		} else {
			memMiB = defaultMemoryMiB
		}
	}
	return cores, memMiB, sized, nil
}

// fromTemplate is executor id's pod before its container's settings: opts.Template's metadata
// and spec (when set), the labels Spark gives executors, owned by driver.
func fromTemplate(driver *corev1.Pod, id int, opts Options) *corev1.Pod {
	labels := map[string]string{
		v1beta2.SparkRoleLabel:       v1beta2.SparkRoleExecutor,
		v1beta2.SparkExecutorIDLabel: strconv.Itoa(id),
		LabelResourceProfileID:       "0",
	}
	for k, v := range driver.Labels {
		// The operator's labels are on the driver because it set them there; Spark copies
		// them to executors because the operator passes them as executor labels too. All
		// but the native submitter's mark of a driver it customised, which executors lack.
		if k == v1beta2.SparkAppSelectorLabel || k == v1beta2.SparkAppNameLabel ||
			strings.HasPrefix(k, v1beta2.GroupName+"/") && k != v1beta2.LabelCustomised {
			labels[k] = v
		}
	}

	name := Name(driver, id)
	if opts.PodNamePrefix != "" {
		name = fmt.Sprintf("%s-exec-%d", opts.PodNamePrefix, id)
	}
	yes := true
	pod := &corev1.Pod{}
	if opts.Template != nil {
		t := opts.Template.DeepCopy()
		pod.ObjectMeta, pod.Spec = metav1.ObjectMeta{Labels: t.Labels, Annotations: t.Annotations, OwnerReferences: t.OwnerReferences}, t.Spec
	}
	pod.Name, pod.Namespace = name, driver.Namespace
	pod.Labels = merged(pod.Labels, labels)
	pod.Annotations = merged(pod.Annotations, opts.Annotations)
	pod.OwnerReferences = append(pod.OwnerReferences, metav1.OwnerReference{
		APIVersion: "v1", Kind: "Pod", Name: driver.Name, UID: driver.UID,
		Controller: &yes,
	})
	pod.Spec.Hostname = name
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	// Spark sets the executors' scheduler and node selector from its properties over the
	// template's; without them, the driver's stand in.
	if name, ok := sparkpod.SchedulerName(sparkpod.RoleExecutor, opts.Conf); ok {
		pod.Spec.SchedulerName = name
	} else if pod.Spec.SchedulerName == "" {
		pod.Spec.SchedulerName = driver.Spec.SchedulerName
	}
	if opts.Conf != nil {
		pod.Spec.NodeSelector = merged(pod.Spec.NodeSelector, sparkpod.NodeSelector(sparkpod.RoleExecutor, opts.Conf))
	} else {
		pod.Spec.NodeSelector = merged(pod.Spec.NodeSelector, driver.Spec.NodeSelector)
	}
	return pod
}

// executorContainer is pod's executor container (by name, else its first, else a new one),
// named as Spark names it.
func executorContainer(pod *corev1.Pod) *corev1.Container {
	idx := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == v1beta2.SparkExecutorContainerName })
	if idx < 0 && len(pod.Spec.Containers) > 0 {
		idx = 0
	}
	if idx < 0 {
		pod.Spec.Containers = []corev1.Container{{}}
		idx = 0
	}
	c := &pod.Spec.Containers[idx]
	c.Name = v1beta2.SparkExecutorContainerName
	return c
}

// driverImage is the image of driver's Spark container.
func driverImage(driver *corev1.Pod) string {
	image := ""
	for _, c := range driver.Spec.Containers {
		if c.Name == v1beta2.SparkDriverContainerName || image == "" {
			image = c.Image
		}
	}
	return image
}

// executorEnv is the environment Spark gives executor id of driver's application.
func executorEnv(driver *corev1.Pod, id, cores, memMiB int) []corev1.EnvVar {
	driverHost := driver.Status.PodIP
	if driverHost == "" {
		driverHost = fmt.Sprintf("%s-svc.%s.svc", driver.Name, driver.Namespace)
	}
	appID := driver.Labels[v1beta2.SparkAppSelectorLabel]
	memory := fmt.Sprintf("%dm", memMiB)
	return []corev1.EnvVar{
		{Name: "SPARK_USER", Value: "spark"},
		{Name: "SPARK_DRIVER_URL", Value: fmt.Sprintf("spark://CoarseGrainedScheduler@%s:%d", driverHost, driverPort)},
		{Name: "SPARK_EXECUTOR_CORES", Value: strconv.Itoa(cores)},
		{Name: "SPARK_EXECUTOR_MEMORY", Value: memory},
		{Name: "SPARK_APPLICATION_ID", Value: appID},
		{Name: "SPARK_CONF_DIR", Value: "/opt/spark/conf"},
		{Name: "SPARK_EXECUTOR_ID", Value: strconv.Itoa(id)},
		{Name: "SPARK_RESOURCE_PROFILE_ID", Value: "0"},
		{Name: "SPARK_EXECUTOR_POD_IP", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"},
		}},
		{Name: "SPARK_EXECUTOR_POD_NAME", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"},
		}},
	}
}

func merged[M ~map[K]V, K comparable, V any](dst, src M) M {
	if dst == nil && len(src) > 0 {
		dst = make(M, len(src))
	}
	maps.Copy(dst, src)
	return dst
}

// Create creates count executors of driver's application with IDs from opts.FirstID, owned
// by the driver as Spark's are, so that deleting the driver removes them. It stops at the
// first error and returns the pods created so far with it.
func Create(ctx context.Context, c client.Client, driver *corev1.Pod, count int, opts Options) ([]*corev1.Pod, error) {
	if count < 0 {
		return nil, fmt.Errorf("negative executor count %d", count)
	}
	first := opts.FirstID
	if first <= 0 {
		first = 1
	}
	var pods []*corev1.Pod
	for id := first; id < first+count; id++ {
		pod, err := Build(driver, id, opts)
		if err != nil {
			return pods, err
		}
		if err := c.Create(ctx, pod); err != nil {
			return pods, fmt.Errorf("creating executor %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		pods = append(pods, pod)
	}
	return pods, nil
}

// Delete deletes pods; ones already gone are not an error.
func Delete(ctx context.Context, c client.Client, pods ...*corev1.Pod) error {
	var errs []error
	for _, p := range pods {
		if p == nil {
			continue
		}
		if err := c.Delete(ctx, p); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting executor %s/%s: %w", p.Namespace, p.Name, err))
		}
	}
	return errors.Join(errs...)
}

// failTimeout bounds how long Fail waits for kwok to act on the annotations.
const failTimeout = 30 * time.Second

// Fail makes a running executor fail with exitCode, as if its JVM had exited, and waits until
// its phase is Failed. It sets the kwok annotations, which kwok honours on running pods; run
// seconds "0" ends a pod that had a run time set at once too. pod is updated to the state
// read last.
func Fail(ctx context.Context, c client.Client, pod *corev1.Pod, exitCode int32) error {
	if pod == nil {
		return errors.New("no pod")
	}
	if exitCode == 0 {
		return errors.New("exit code 0 is a success, not a failure")
	}
	patch := client.MergeFrom(pod.DeepCopy())
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[AnnotationExitCode] = strconv.Itoa(int(exitCode))
	pod.Annotations[AnnotationRunSeconds] = "0"
	if err := c.Patch(ctx, pod, patch); err != nil {
		return fmt.Errorf("annotating executor %s/%s to fail: %w", pod.Namespace, pod.Name, err)
	}
	return WaitForPhase(ctx, c, pod, corev1.PodFailed, failTimeout)
}

// WaitForPhase polls pod until its phase is phase, for at most timeout. pod is updated to
// the state read last.
func WaitForPhase(ctx context.Context, c client.Client, pod *corev1.Pod, phase corev1.PodPhase, timeout time.Duration) error {
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, pod); err != nil {
			return false, err
		}
		return pod.Status.Phase == phase, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for pod %s to be %s (is %q): %w", key, phase, pod.Status.Phase, err)
	}
	return nil
}
