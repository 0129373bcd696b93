/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package equivalence proves that native submission creates what spark-submit creates: every
// example application is submitted both ways on the local cluster, and the driver pod, its
// ConfigMaps and its Service are read back and compared field by field. Only the differences
// in the allow-list below are accepted; docs/native-submission.md describes the test.
package equivalence

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/submission/native"
	"github.com/sparkop/spark-operator/submission/sparksubmit"
	"github.com/sparkop/spark-operator/test/cluster"
)

// allowed lists every accepted difference between the two submitters, by the path that
// TestNativeMatchesSparkSubmit prints (properties of spark.properties as Properties["key"]).
// Keep it as short as the truth allows: a real difference is fixed in submission/native, not
// listed here. An entry that no example exercises fails the test, so the list cannot go stale.
var allowed = []allowance{
	{
		path:            `Properties["spark.kubernetes.driver.podTemplateFile"]`,
		onlySparkSubmit: true,
		reason: "the spark-submit submitter passes the driver's customisations as a local pod " +
			"template file (a temporary path on the submitting host); the native submitter writes " +
			"them straight into the pod, so it has no template file to name",
	},
	{
		path:            `Properties["spark.kubernetes.driver.podTemplateContainerName"]`,
		onlySparkSubmit: true,
		reason:          "goes with spark.kubernetes.driver.podTemplateFile, above",
	},
	{
		path:       `Pod.ObjectMeta.Labels["sparkoperator.k8s.io/customised"]`,
		onlyNative: `"true"`,
		reason: "the native submitter writes the webhook's customisations into its driver pod and " +
			"so labels it, for the webhook's object selector to leave it out; the spark-submit " +
			"driver goes through the webhook",
	},
}

// allowance is one accepted difference.
type allowance struct {
	path string
	// onlySparkSubmit accepts the difference only when the value is absent natively: the
	// native submitter must not have a value of its own there.
	onlySparkSubmit bool
	// onlyNative, when set, accepts the difference only when spark-submit has no value and
	// the native submitter this one (JSON).
	onlyNative string
	reason     string
}

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

				got := map[string]*snapshot{}
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

				diffs := compare(got[sideSparkSubmit], got[sideNative])
				var bad []string
				for _, d := range diffs {
					if a, ok := d.allowedBy(); ok {
						used.mark(a.path)
						t.Logf("allowed: %s: %s (%s)", ex.file, d, a.reason)
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
		for _, a := range allowed {
			if !used.seen[a.path] {
				t.Errorf("allow-list entry %s matched no difference in any example: remove it", a.path)
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
	submit func(context.Context, *v1beta2.SparkApplication, submission.Attempt) (submission.Result, error)) *snapshot {
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

	pod := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: attempt.DriverPodName}, pod); err != nil {
		t.Fatalf("%s: reading the driver pod: %v", side, err)
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
	var cms corev1.ConfigMapList
	if err := c.List(ctx, &cms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var svcs corev1.ServiceList
	if err := c.List(ctx, &svcs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	snap, err := newSnapshot(pod, app.UID, ownedBy(cms.Items, pod.UID), ownedBy(svcs.Items, pod.UID))
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

func ownedBy[T any, PT interface {
	*T
	metav1.Object
}](items []T, owner types.UID) []PT {
	var out []PT
	for i := range items {
		obj := PT(&items[i])
		for _, ref := range obj.GetOwnerReferences() {
			if ref.UID == owner {
				out = append(out, obj)
				break
			}
		}
	}
	return out
}

// snapshot is what one submission created, normalised (see newSnapshot). Objects are keyed by
// their normalised names.
type snapshot struct {
	Pod        *corev1.Pod
	Services   map[string]*corev1.Service
	ConfigMaps map[string]*corev1.ConfigMap
	// Properties is the driver's spark.properties, parsed; its ConfigMap entry is emptied.
	Properties map[string]string
	// ExecutorTemplate is the executor pod template, parsed; its ConfigMap entry is emptied.
	ExecutorTemplate *corev1.Pod
}

// Keys of the ConfigMaps spark-submit creates.
const (
	propertiesKey = "spark.properties"
	templateKey   = "podspec-configmap-key"
	parsedMarker  = "(parsed: see Properties / ExecutorTemplate)"
)

// Placeholders for what differs between any two submissions by design.
const (
	phNamespace  = "NAMESPACE"
	phAppUID     = "APP-UID"
	phPodUID     = "DRIVER-POD-UID"
	phAppID      = "SPARK-APP-ID"
	phSubmitTime = "SUBMIT-TIME"
	phConfCM     = "SPARK-CONF-CONFIGMAP"
	phTemplateCM = "EXECUTOR-TEMPLATE-CONFIGMAP"
	phService    = "DRIVER-SERVICE"
	phPrefix     = "RESOURCE-PREFIX"
)

var (
	// Spark's default local directory, /var/data/spark-<random UUID>.
	localDirRE = regexp.MustCompile(`/var/data/spark-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// The service-account token volume the API server's admission adds, with a random suffix.
	tokenVolumeRE = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}\b`)
)

// newSnapshot parses the properties file and the executor template, and normalises what differs
// between any two submissions by design: generated names and IDs are replaced by placeholders
// wherever they appear; the bookkeeping the API server, the scheduler and kwok add (UIDs,
// resource versions, timestamps, managed fields, node name, status) is removed.
func newSnapshot(pod *corev1.Pod, appUID types.UID, cms []*corev1.ConfigMap, svcs []*corev1.Service) (*snapshot, error) {
	s := &snapshot{Pod: pod.DeepCopy(), Services: map[string]*corev1.Service{}, ConfigMaps: map[string]*corev1.ConfigMap{}}
	replacer := []string{pod.Namespace, phNamespace, string(appUID), phAppUID, string(pod.UID), phPodUID}
	if id := pod.Labels[v1beta2.SparkAppSelectorLabel]; id != "" {
		replacer = append(replacer, id, phAppID)
	}

	var prefixes []string
	for _, svc := range svcs {
		svc = svc.DeepCopy()
		replacer = append(replacer, svc.Name, phService)
		if p, ok := strings.CutSuffix(svc.Name, "-driver-svc"); ok {
			prefixes = append(prefixes, p)
		}
		s.Services[svc.Name] = svc
	}
	for _, cm := range cms {
		cm = cm.DeepCopy()
		if text, ok := cm.Data[propertiesKey]; ok {
			if s.Properties != nil {
				return nil, fmt.Errorf("two ConfigMaps hold %s", propertiesKey)
			}
			props, err := native.ParseProperties(text)
			if err != nil {
				return nil, fmt.Errorf("ConfigMap %s: %s: %w", cm.Name, propertiesKey, err)
			}
			if _, ok := props["spark.app.submitTime"]; ok {
				props["spark.app.submitTime"] = phSubmitTime
			}
			s.Properties = props
			cm.Data[propertiesKey] = parsedMarker
			replacer = append(replacer, cm.Name, phConfCM)
		}
		if text, ok := cm.Data[templateKey]; ok {
			if s.ExecutorTemplate != nil {
				return nil, fmt.Errorf("two ConfigMaps hold %s", templateKey)
			}
			tmpl := &corev1.Pod{}
			if err := yaml.UnmarshalStrict([]byte(text), tmpl); err != nil {
				return nil, fmt.Errorf("ConfigMap %s: executor pod template: %w", cm.Name, err)
			}
			s.ExecutorTemplate = tmpl
			cm.Data[templateKey] = parsedMarker
			replacer = append(replacer, cm.Name, phTemplateCM)
			if p, ok := strings.CutSuffix(cm.Name, "-driver-podspec-conf-map"); ok {
				prefixes = append(prefixes, p)
			}
		}
		s.ConfigMaps[cm.Name] = cm
	}
	if p := s.Properties["spark.kubernetes.executor.podNamePrefix"]; p != "" {
		prefixes = append(prefixes, p)
	}
	for _, p := range prefixes {
		replacer = append(replacer, p, phPrefix)
	}

	clearServerFields(&s.Pod.ObjectMeta)
	s.Pod.Spec.NodeName = ""
	s.Pod.Status = corev1.PodStatus{}
	for _, o := range s.Services {
		clearServerFields(&o.ObjectMeta)
	}
	for _, o := range s.ConfigMaps {
		clearServerFields(&o.ObjectMeta)
	}

	// Replace the generated names wherever they occur: in names, labels, selectors, env,
	// volumes, properties. Longer ones first, so a name is not half-replaced by its prefix.
	data, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	text := replaceAll(string(data), replacer)
	text = localDirRE.ReplaceAllString(text, "/var/data/spark-LOCAL-DIR-UUID")
	text = tokenVolumeRE.ReplaceAllString(text, "kube-api-access-RANDOM")
	out := &snapshot{}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		return nil, err
	}
	// The API server's ServiceAccount admission appends the token volume to what the pod is
	// created with. A pod spark-submit created gets the webhook's settings only after that
	// (mutating webhooks run after the built-in admission); the native submitter writes them
	// before creating the pod. Where the token volume lands among the others is therefore no
	// difference between the submitters: it is put last on both sides.
	tokenLast := func(names func(i int) string, n int, move func(from int)) {
		for i := 0; i < n; i++ {
			if names(i) == "kube-api-access-RANDOM" {
				move(i)
				return
			}
		}
	}
	ps := &out.Pod.Spec
	tokenLast(func(i int) string { return ps.Volumes[i].Name }, len(ps.Volumes), func(i int) {
		ps.Volumes = append(slices.Delete(slices.Clone(ps.Volumes), i, i+1), ps.Volumes[i])
	})
	for c := range ps.Containers {
		ctr := &ps.Containers[c]
		tokenLast(func(i int) string { return ctr.VolumeMounts[i].Name }, len(ctr.VolumeMounts), func(i int) {
			ctr.VolumeMounts = append(slices.Delete(slices.Clone(ctr.VolumeMounts), i, i+1), ctr.VolumeMounts[i])
		})
	}
	// Key the objects by their normalised names.
	out.Services = rekey(out.Services)
	out.ConfigMaps = rekey(out.ConfigMaps)
	return out, nil
}

func clearServerFields(m *metav1.ObjectMeta) {
	m.UID = ""
	m.ResourceVersion = ""
	m.CreationTimestamp = metav1.Time{}
	m.ManagedFields = nil
}

// replaceAll replaces each old string of the old/new pairs, the longest first.
func replaceAll(s string, pairs []string) string {
	type pair struct{ old, new string }
	var ps []pair
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i] != "" {
			ps = append(ps, pair{pairs[i], pairs[i+1]})
		}
	}
	sort.SliceStable(ps, func(i, j int) bool { return len(ps[i].old) > len(ps[j].old) })
	for _, p := range ps {
		s = strings.ReplaceAll(s, p.old, p.new)
	}
	return s
}

func rekey[T any, PT interface {
	*T
	metav1.Object
}](m map[string]PT) map[string]PT {
	out := make(map[string]PT, len(m))
	for _, o := range m {
		out[o.GetName()] = o
	}
	return out
}

// difference is one field in which the two snapshots differ.
type difference struct {
	path                string
	sparkSubmit, native string // JSON of the values; "" when absent
}

func (d difference) String() string {
	return fmt.Sprintf("%s: spark-submit %s, native %s", d.path, orAbsent(d.sparkSubmit), orAbsent(d.native))
}

func orAbsent(v string) string {
	if v == "" {
		return "(absent)"
	}
	return v
}

func (d difference) allowedBy() (allowance, bool) {
	for _, a := range allowed {
		if a.path == d.path && (!a.onlySparkSubmit || d.native == "") &&
			(a.onlyNative == "" || d.sparkSubmit == "" && d.native == a.onlyNative) {
			return a, true
		}
	}
	return allowance{}, false
}

// compare returns every leaf in which the snapshots differ. Lists are compared in order:
// the order of env variables matters for $(VAR) references, that of containers and volumes
// is kept by the API server.
func compare(sparkSubmit, nat *snapshot) []difference {
	var r diffReporter
	cmp.Equal(sparkSubmit, nat, cmp.Reporter(&r))
	return r.diffs
}

// diffReporter collects the unequal leaves of a cmp comparison with readable paths.
type diffReporter struct {
	path  cmp.Path
	diffs []difference
}

func (r *diffReporter) PushStep(ps cmp.PathStep) { r.path = append(r.path, ps) }
func (r *diffReporter) PopStep()                 { r.path = r.path[:len(r.path)-1] }

func (r *diffReporter) Report(rs cmp.Result) {
	if rs.Equal() {
		return
	}
	vx, vy := r.path.Last().Values()
	r.diffs = append(r.diffs, difference{path: pathString(r.path), sparkSubmit: jsonOf(vx), native: jsonOf(vy)})
}

// pathString renders a cmp path as Go-like field access: Pod.Spec.Containers[0].Env[2].Value,
// Properties["spark.master"].
func pathString(p cmp.Path) string {
	var b strings.Builder
	for _, step := range p {
		switch s := step.(type) {
		case cmp.StructField:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Name())
		case cmp.SliceIndex:
			i := s.Key()
			if i < 0 {
				// An element only one side has: name its index on that side.
				x, y := s.SplitKeys()
				i = max(x, y)
			}
			b.WriteString("[" + strconv.Itoa(i) + "]")
		case cmp.MapIndex:
			if k := s.Key(); k.Kind() == reflect.String {
				b.WriteString("[" + strconv.Quote(k.String()) + "]")
			} else {
				fmt.Fprintf(&b, "[%v]", k)
			}
		}
	}
	return b.String()
}

func jsonOf(v reflect.Value) string {
	if !v.IsValid() || !v.CanInterface() {
		return ""
	}
	data, err := json.Marshal(v.Interface())
	if err != nil {
		return fmt.Sprintf("%v", v.Interface())
	}
	return string(data)
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
