/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package equivalence proves that native submission creates what spark-submit creates: every
// example application is submitted both ways on the local cluster, and the driver pod, its
// ConfigMaps and its Service are read back and compared field by field. Only the differences
// in podcompare.Allowed are accepted; docs/native-submission.md describes the test.
package equivalence

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/submission/native"
	"github.com/sparkop/spark-operator/submission/sparksubmit"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/podcompare"
)

// sparkSubmitSlots bounds the spark-submit JVMs running at once (each wants a core for its
// ~4 s). The subtests are parallel; an explicit `go test -parallel` bounds them as well.
const sparkSubmitSlots = 3

// TestMain lets sparkSubmitSlots subtests run at once unless -parallel is given: the default,
// GOMAXPROCS, is 2 on a two-core machine, and the subtests mostly wait on spark-submit.
func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", strconv.Itoa(sparkSubmitSlots))
	}
	os.Exit(m.Run())
}

// attemptID is the submission ID of every attempt: both submitters get the same attempt.
const attemptID = "eeeeeeee-0000-4000-8000-000000000001"

func TestNativeMatchesSparkSubmit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real spark-submit")
	}
	examples := append(loadExamples(t), generated()...)
	c := cluster.Client(t)
	kubeconfig := cluster.Kubeconfig(t)
	ss := &sparksubmit.Submitter{SparkHome: sparkHome(t), Kubeconfig: kubeconfig, Client: c, TempDir: t.TempDir()}
	// What spark-submit uses: the kubeconfig's server, and the user it runs as.
	nat := &native.Submitter{Client: c, Options: native.Options{
		Master:    "k8s://" + cluster.Config(t).Host,
		SparkUser: sparkUser(t),
	}}
	slots := make(chan struct{}, sparkSubmitSlots)
	used := &usage{seen: map[string]bool{}}

	t.Run("examples", func(t *testing.T) {
		for _, ex := range examples {
			t.Run(ex.file, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()

				got := map[string]*podcompare.Snapshot{}
				for _, side := range []struct {
					name   string
					submit func(context.Context, *v1beta2.SparkApplication, submission.Attempt) (submission.Result, error)
				}{
					{sideSparkSubmit, func(ctx context.Context, app *v1beta2.SparkApplication, a submission.Attempt) (submission.Result, error) {
						select {
						case slots <- struct{}{}:
						case <-ctx.Done():
							return submission.Result{}, ctx.Err()
						}
						defer func() { <-slots }()
						return ss.Submit(ctx, app, a)
					}},
					{sideNative, nat.Submit},
				} {
					got[side.name] = submitAndRead(ctx, t, c, ex.app, side.name, side.submit)
				}

				diffs := podcompare.Compare(got[sideSparkSubmit], got[sideNative])
				var bad []string
				for _, d := range diffs {
					if a, ok := d.AllowedBy(); ok {
						used.mark(a.Path)
						t.Logf("allowed: %s: %s (%s)", ex.file, d, a.Reason)
						continue
					}
					bad = append(bad, d.String())
				}
				if len(bad) > 0 {
					t.Errorf("%s: native submission differs from spark-submit in %d field(s) (not in the allow-list):\n  %s",
						ex.file, len(bad), strings.Join(bad, "\n  "))
				}
			})
		}
	})

	if !t.Failed() {
		for _, a := range podcompare.Allowed {
			if !used.seen[a.Path] {
				t.Errorf("allow-list entry %s matched no difference in any example: remove it", a.Path)
			}
		}
	}
}

type usage struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (u *usage) mark(path string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.seen[path] = true
}

const (
	sideSparkSubmit = "spark-submit"
	sideNative      = "native"
)

// example is one application to submit, named by its file.
type example struct {
	file string
	app  *v1beta2.SparkApplication
}

// loadExamples reads every SparkApplication in examples/; a ScheduledSparkApplication stands
// for the SparkApplication of its template, named after it.
func loadExamples(t *testing.T) []example {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []example
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(data, &tm); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		app := &v1beta2.SparkApplication{}
		switch tm.Kind {
		case "SparkApplication":
			if err := yaml.UnmarshalStrict(data, app); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		case "ScheduledSparkApplication":
			sched := &v1beta2.ScheduledSparkApplication{}
			if err := yaml.UnmarshalStrict(data, sched); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			app.Name = sched.Name
			app.Spec = *sched.Spec.Template.DeepCopy()
		default:
			continue
		}
		app.TypeMeta = metav1.TypeMeta{}
		out = append(out, example{file: filepath.Base(f), app: app})
	}
	if len(out) == 0 {
		t.Fatal("no SparkApplication examples found")
	}
	return out
}

// sparkHome installs (once) and returns the Spark distribution hack/install-spark.sh provides.
func sparkHome(t *testing.T) string {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(root, "hack", "install-spark.sh")).Output()
	if err != nil {
		t.Fatalf("hack/install-spark.sh: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// sparkUser is what spark-submit puts into SPARK_USER (Utils.getCurrentUserName): $SPARK_USER,
// else Hadoop's current user, which is $HADOOP_USER_NAME or the OS user.
func sparkUser(t *testing.T) string {
	t.Helper()
	for _, env := range []string{"SPARK_USER", "HADOOP_USER_NAME"} {
		if v := os.Getenv(env); v != "" {
			return v
		}
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}

// submitAndRead submits app in a namespace of its own and reads back what was created.
func submitAndRead(ctx context.Context, t *testing.T, c client.Client, example *v1beta2.SparkApplication, side string,
	submit func(context.Context, *v1beta2.SparkApplication, submission.Attempt) (submission.Result, error)) *podcompare.Snapshot {
	t.Helper()
	ns := cluster.Namespace(t, c, "equiv-"+side)
	// The pods name their service accounts; admission rejects them if missing. Nothing else
	// the examples refer to (ConfigMaps and Secrets as volumes or optional env sources) is
	// needed to create a pod.
	for _, sa := range serviceAccounts(example) {
		if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}}); err != nil {
			t.Fatalf("%s: creating service account %s: %v", side, sa, err)
		}
	}
	app := example.DeepCopy()
	app.Namespace = ns
	if err := c.Create(ctx, app); err != nil {
		t.Fatalf("%s: creating the SparkApplication: %v", side, err)
	}
	defaulted := app.DeepCopy()
	v1beta2.SetSparkApplicationDefaults(defaulted)
	attempt := submission.Attempt{SubmissionID: attemptID, DriverPodName: defaulted.DriverPodName()}

	start := time.Now()
	res, err := submit(ctx, defaulted, attempt)
	if err != nil {
		t.Fatalf("%s submission: %v", side, err)
	}
	t.Logf("%s submission took %s", side, time.Since(start).Round(time.Millisecond))

	pod, cms, svcs, err := podcompare.Read(ctx, c, ns, attempt.DriverPodName)
	if err != nil {
		t.Fatalf("%s: %v", side, err)
	}
	if side == sideSparkSubmit {
		// As the operator's mutating webhook leaves a driver spark-submit created; the native
		// submitter does the same itself (the user's env after Spark's, for one).
		if err := sparkpod.Customise(pod, defaulted, sparkpod.RoleDriver); err != nil {
			t.Fatalf("%s: %v", side, err)
		}
		defaultVolumes(pod)
	}
	if got := pod.Labels[v1beta2.SparkAppSelectorLabel]; got != res.SparkApplicationID || res.DriverPodName != pod.Name {
		t.Errorf("%s: Submit reported %+v; the pod is %s with %s=%s", side, res, pod.Name, v1beta2.SparkAppSelectorLabel, got)
	}
	// Both submitters are given the same attempt, so its submission ID is no placeholder.
	snap, err := podcompare.New(pod, podcompare.Generated{AppUID: app.UID}, cms, svcs)
	if err != nil {
		t.Fatalf("%s: %v", side, err)
	}
	return snap
}

// defaultVolumes does to the volumes the webhook's pass added what the API server's defaulting
// does to a webhook's patch before the pod is stored: ConfigMap and Secret volumes get mode 0644.
func defaultVolumes(pod *corev1.Pod) {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i].VolumeSource
		switch {
		case v.ConfigMap != nil && v.ConfigMap.DefaultMode == nil:
			v.ConfigMap.DefaultMode = ptrTo(corev1.ConfigMapVolumeSourceDefaultMode)
		case v.Secret != nil && v.Secret.DefaultMode == nil:
			v.Secret.DefaultMode = ptrTo(corev1.SecretVolumeSourceDefaultMode)
		}
	}
}

func serviceAccounts(app *v1beta2.SparkApplication) []string {
	var out []string
	for _, sa := range []*string{app.Spec.Driver.ServiceAccount, app.Spec.Executor.ServiceAccount} {
		if sa != nil && *sa != "" && !slices.Contains(out, *sa) {
			out = append(out, *sa)
		}
	}
	return out
}

// generated are applications that set what no example sets: every spec field and Spark
// property that shapes the driver pod, its ConfigMaps or its Service.
func generated() []example {
	app := func(name string, typ v1beta2.SparkApplicationType, file string) *v1beta2.SparkApplication {
		return &v1beta2.SparkApplication{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "data"}},
			Spec: v1beta2.SparkApplicationSpec{
				Type: typ, SparkVersion: "4.0.4", Mode: v1beta2.DeployModeCluster,
				Image: ptrTo("docker.io/apache/spark:4.0.4"), MainApplicationFile: file,
				RestartPolicy: v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyNever},
			},
		}
	}
	all := app("generated-every-field", v1beta2.SparkApplicationTypeScala, "local:///opt/spark/examples/jars/spark-examples.jar")
	s := &all.Spec
	s.MainClass, s.Arguments = ptrTo("org.apache.spark.examples.SparkPi"), []string{"10", "x y"}
	s.ImagePullPolicy, s.ImagePullSecrets = ptrTo("Always"), []string{"registry-a", "registry-b"}
	s.MemoryOverheadFactor = ptrTo("0.25")
	s.NodeSelector = map[string]string{"zone": "a"}
	s.SparkConf = map[string]string{
		"spark.driver.resource.gpu.amount": "1", "spark.driver.resource.gpu.vendor": "nvidia.com",
		"spark.driver.minMemoryOverhead": "500m", "spark.driver.port": "7100", "spark.driver.blockManager.port": "7101",
		"spark.ui.port": "4100", "spark.kubernetes.driver.service.ipFamilyPolicy": "SingleStack",
		"spark.kubernetes.local.dirs.tmpfs": "true",
	}
	s.Volumes = []corev1.Volume{
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp"}}},
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
	}
	d := &s.Driver
	d.Cores, d.CoreRequest, d.CoreLimit = ptrTo(int32(2)), ptrTo("1500m"), ptrTo("3")
	d.Memory, d.MemoryOverhead = ptrTo("1500m"), ptrTo("300m")
	d.Image, d.ServiceAccount = ptrTo("docker.io/apache/spark:4.0.4"), ptrTo("spark-driver")
	d.Labels, d.Annotations = map[string]string{"role": "drv"}, map[string]string{"note": "x"}
	d.ServiceLabels, d.ServiceAnnotations = map[string]string{"svc": "1"}, map[string]string{"svc-note": "y"}
	d.Secrets = []v1beta2.SecretInfo{{Name: "plain", Path: "/mnt/plain", Type: v1beta2.SecretTypeGeneric}, {Name: "gcp", Path: "/mnt/gcp", Type: v1beta2.SecretTypeGCPServiceAccount}}
	d.Env = []corev1.EnvVar{{Name: "USER_VAR", Value: "$(SPARK_USER)"}}
	d.EnvVars = map[string]string{"OLD_STYLE": "1"}
	d.EnvSecretKeyRefs = map[string]v1beta2.NameKey{"PASSWORD": {Name: "creds", Key: "pw"}}
	d.NodeSelector = map[string]string{"disk": "ssd"}
	d.Ports = []v1beta2.Port{{Name: "extra", ContainerPort: 9000, Protocol: corev1.ProtocolTCP}}
	d.VolumeMounts = []corev1.VolumeMount{{Name: "host", MountPath: "/host"}, {Name: "cfg", MountPath: "/cfg"}}
	d.MemoryLimit, d.GPU = ptrTo("4Gi"), &v1beta2.GPUSpec{Name: "nvidia.com/gpu", Quantity: 1}
	d.JavaOptions = ptrTo("-Dx=y")

	py := app("generated-python", v1beta2.SparkApplicationTypePython, "local:///opt/spark/examples/src/main/python/pi.py")
	py.Spec.PythonVersion = ptrTo("3")
	py.Spec.Deps.PyFiles = []string{"local:///opt/spark/python/lib/extra.zip"}
	py.Spec.SparkConf = map[string]string{"spark.pyspark.python": "python3", "spark.pyspark.driver.python": "python3", "spark.executor.pyspark.memory": "512m"}
	py.Spec.Driver.Memory = ptrTo("2g")

	r := app("generated-r", v1beta2.SparkApplicationTypeR, "local:///opt/spark/examples/src/main/r/dataframe.R")
	r.Spec.Driver.MemoryOverhead = ptrTo("1g")

	// The schedulers and the Hadoop configuration Spark takes from properties: the role's
	// scheduler key over the global one, and spec.hadoopConfigMap, which reaches Spark as
	// spark.kubernetes.hadoop.configMapName.
	fromConf := app("generated-scheduler-hadoop-conf", v1beta2.SparkApplicationTypeScala, all.Spec.MainApplicationFile)
	fromConf.Spec.MainClass = all.Spec.MainClass
	fromConf.Spec.HadoopConfigMap = ptrTo("hadoop-conf")
	fromConf.Spec.SparkConf = map[string]string{
		"spark.kubernetes.scheduler.name": "everyone-sched", "spark.kubernetes.driver.scheduler.name": "driver-sched",
	}
	// spec.driver.schedulerName over both keys; the Hadoop ConfigMap named in sparkConf alone.
	fromSpec := app("generated-scheduler-hadoop-spec", v1beta2.SparkApplicationTypeScala, all.Spec.MainApplicationFile)
	fromSpec.Spec.MainClass = all.Spec.MainClass
	fromSpec.Spec.SparkConf = map[string]string{
		"spark.kubernetes.hadoop.configMapName": "hadoop-from-conf",
		"spark.kubernetes.scheduler.name":       "everyone-sched", "spark.kubernetes.driver.scheduler.name": "driver-sched",
	}
	fromSpec.Spec.Driver.SchedulerName = ptrTo("spec-sched")
	// The global key alone.
	global := app("generated-scheduler-global", v1beta2.SparkApplicationTypeScala, all.Spec.MainApplicationFile)
	global.Spec.MainClass = all.Spec.MainClass
	global.Spec.SparkConf = map[string]string{"spark.kubernetes.scheduler.name": "everyone-sched"}

	return []example{{file: "generated-every-field", app: all}, {file: "generated-python", app: py}, {file: "generated-r", app: r},
		{file: fromConf.Name, app: fromConf}, {file: fromSpec.Name, app: fromSpec}, {file: global.Name, app: global}}
}

func ptrTo[T any](v T) *T { return &v }
