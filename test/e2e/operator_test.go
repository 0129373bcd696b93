// Package e2e runs the operator binary against the local control plane, as a user would.
package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// startOperator runs the operator as its own process, watching namespace.
func startOperator(t *testing.T, namespace string, extraArgs ...string) *cluster.Operator {
	t.Helper()
	return cluster.StartOperator(t, "operator", append([]string{"--kubeconfig", cluster.Kubeconfig(t), "--namespaces", namespace,
		"--submission-workers", "8", "-logtostderr", "-v=1"}, extraArgs...)...)
}

// requireDriverVolumes fails the test if a ConfigMap the driver pod mounts does not exist: a
// driver whose submission was cut short must still get everything it needs to start.
func requireDriverVolumes(t *testing.T, c client.Client, ns, driver string) {
	t.Helper()
	var pod corev1.Pod
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: driver}, &pod); err != nil {
		t.Fatal(err)
	}
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap == nil || ptr.Deref(v.ConfigMap.Optional, false) {
			continue
		}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: v.ConfigMap.Name}, &corev1.ConfigMap{}); err != nil {
			t.Errorf("driver %s mounts ConfigMap %s: %v", driver, v.ConfigMap.Name, err)
		}
	}
}

// waitAllRunning waits until the namespace holds apps RUNNING applications.
func waitAllRunning(t *testing.T, c client.Client, ns string, apps int) {
	t.Helper()
	// A bound on liveness, not speed: make test runs other packages beside this one.
	cluster.Eventually(t, 4*time.Minute, "every application to be RUNNING", func() (bool, error) {
		var list v1beta2.SparkApplicationList
		if err := c.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		running := 0
		for _, app := range list.Items {
			if app.Status.AppState.State == v1beta2.ApplicationStateRunning {
				running++
			}
		}
		return running == apps, nil
	})
}

// requireCreatedOnce fails the test unless each of the applications app-00 … app-<apps-1>
// had its driver pod created exactly once, by the counts of a pod watch.
func requireCreatedOnce(t *testing.T, ns string, apps int, created map[string]int) {
	t.Helper()
	for i := range apps {
		name := cluster.SparkPi(ns, fmt.Sprintf("app-%02d", i)).DriverPodName()
		if created[name] != 1 {
			t.Errorf("%s: driver pod created %d times, want once", name, created[name])
		}
	}
}

// TestKilledMidSubmissionNeverSubmitsTwice kills the operator while submissions are in flight
// (drivers created, statuses not yet written), starts it again, and checks that every
// application ends up with exactly one driver pod, created once. The window is held open, not
// hit by luck: a ValidatingAdmissionPolicy refuses every status write that takes an application
// of the namespace past NEW, so each run's ID is recorded and its driver created, and nothing
// after; the operator is killed once every driver exists, and the policy goes before it starts
// again.
func TestKilledMidSubmissionNeverSubmitsTwice(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	cs := kubernetes.NewForConfigOrDie(cluster.Config(t))
	const apps = 40
	ns := cluster.Namespace(t, c, "e2e-kill")
	unhold := holdAtNew(t, c, ns)

	// Every driver pod creation in the namespace, counted from before the first app exists.
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: v1beta2.SparkRoleLabel + "=" + v1beta2.SparkRoleDriver})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created := map[string]int{}
	var mu sync.Mutex
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type == watch.Added {
				mu.Lock()
				created[ev.Object.(*corev1.Pod).Name]++
				mu.Unlock()
			}
		}
	}()

	op := startOperator(t, ns)
	for i := range apps {
		if err := c.Create(ctx, cluster.SparkPi(ns, fmt.Sprintf("app-%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	cluster.Eventually(t, 4*time.Minute, "every driver to be created, with no status past NEW", func() (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return len(created) == apps, nil
	})
	op.Kill()

	// What the killed operator left behind: every application's driver exists while its status
	// still says NEW, with the run's ID.
	var list v1beta2.SparkApplicationList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	caught := 0
	for _, app := range list.Items {
		if app.Status.AppState.State != v1beta2.ApplicationStateNew || app.Status.SubmissionID == "" {
			t.Errorf("%s: state %q, submission %q: the policy let its status past NEW, or no run was recorded", app.Name,
				app.Status.AppState.State, app.Status.SubmissionID)
			continue
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: app.DriverPodName()}, &corev1.Pod{}); err == nil {
			caught++
		}
	}
	if caught != apps {
		t.Fatalf("%d of %d applications were caught between driver creation and status write", caught, apps)
	}

	unhold()
	startOperator(t, ns)
	waitAllRunning(t, c, ns, apps)
	for i := range apps {
		requireDriverVolumes(t, c, ns, cluster.SparkPi(ns, fmt.Sprintf("app-%02d", i)).DriverPodName())
	}
	mu.Lock()
	defer mu.Unlock()
	requireCreatedOnce(t, ns, apps, created)
}

// holdAtNew makes a ValidatingAdmissionPolicy, bound to namespace ns, that refuses every write
// of a SparkApplication's status past NEW, and waits until the API server enforces it (a probe
// application's write is refused). The returned function removes it and waits until writes
// pass again; the test's end removes it too.
func holdAtNew(t *testing.T, c client.Client, ns string) func() {
	t.Helper()
	ctx := context.Background()
	name := "hold-at-new-" + ns
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{v1beta2.GroupVersion.Group}, APIVersions: []string{"*"},
						Resources: []string{"sparkapplications/status"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "!has(object.status) || !has(object.status.applicationState) || !has(object.status.applicationState.state) || " +
					"object.status.applicationState.state in ['', 'NEW']",
				Message: "held at NEW by the test",
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}},
		},
	}
	for _, o := range []client.Object{policy, binding} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	remove := func() {
		_ = c.Delete(context.Background(), binding)
		_ = c.Delete(context.Background(), policy)
	}
	t.Cleanup(remove)

	probe := cluster.SparkPi(ns, "probe")
	if err := c.Create(ctx, probe); err != nil {
		t.Fatal(err)
	}
	// The probe's status write: refused while the policy holds, and the probe deleted after.
	write := func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(probe), probe); err != nil {
			return err
		}
		probe.Status.AppState.State = v1beta2.ApplicationStateSubmitted
		return c.Status().Update(ctx, probe)
	}
	cluster.Eventually(t, time.Minute, "the policy to refuse a status past NEW", func() (bool, error) {
		err := write()
		return err != nil && strings.Contains(err.Error(), "held at NEW"), nil
	})
	if err := c.Delete(ctx, probe); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		remove()
		probe = cluster.SparkPi(ns, "probe-after")
		if err := c.Create(ctx, probe); err != nil {
			t.Fatal(err)
		}
		cluster.Eventually(t, time.Minute, "the policy to be gone", func() (bool, error) {
			return write() == nil, nil
		})
		if err := c.Delete(ctx, probe); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOperatorServesItsWebhooks starts the operator with its webhooks registered by URL, as
// `make dev` does, and checks both through the API server: a SparkApplication setting a key
// the operator owns is refused, and a pod as Spark creates an executor gets the mutation that
// only the webhook makes for it (SPARK_CONF_DIR pointing at the application's Spark
// ConfigMap); the native submitter's driver, which has it already, is not sent to the webhook.
func TestOperatorServesItsWebhooks(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "e2e-webhook")
	configName := "e2e-webhook-" + ns
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configName}})
		_ = c.Delete(context.Background(), &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configName}})
	})
	startOperator(t, ns, "--enable-webhook", "--webhook-url-host", "localhost",
		"--webhook-port", strconv.Itoa(cluster.FreePort(t)), "--webhook-secret-namespace", ns,
		"--webhook-config-name", configName, "--webhook-cert-dir", t.TempDir())

	bad := cluster.SparkPi(ns, "owns-master")
	bad.Spec.SparkConf = map[string]string{"spark.master": "local[2]"}
	err := c.Create(ctx, bad)
	if err == nil || !strings.Contains(err.Error(), "spark.master") {
		t.Fatalf("creating an application that sets spark.master: err = %v, want a rejection naming spark.master", err)
	}

	app := cluster.SparkPi(ns, "with-conf")
	app.Spec.SparkConfigMap = ptr.To("my-spark-conf")
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	var driver corev1.Pod
	cluster.Eventually(t, 30*time.Second, "the driver pod", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: app.DriverPodName()}, &driver)
		return err == nil, client.IgnoreNotFound(err)
	})
	confDir := ""
	for _, ctr := range driver.Spec.Containers {
		if ctr.Name == v1beta2.SparkDriverContainerName {
			confDir = envValue(ctr.Env, "SPARK_CONF_DIR")
		}
	}
	if confDir != "/etc/spark/conf" {
		t.Errorf("driver SPARK_CONF_DIR = %q, want /etc/spark/conf", confDir)
	}
	// The native submitter's driver has its customisations written already, and is so
	// labelled that the webhook is not asked. Pods as Spark creates its executors are.
	if driver.Labels[v1beta2.LabelCustomised] != "true" {
		t.Errorf("driver labels %v: want %s=true from the native submitter", driver.Labels, v1beta2.LabelCustomised)
	}
	for _, tc := range []struct {
		name       string
		customised bool
		wantDir    string
	}{
		{name: "with-conf-exec-1", wantDir: "/etc/spark/conf"},
		{name: "with-conf-exec-2", customised: true}, // left out by the webhook's object selector
	} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.name, Labels: map[string]string{
				v1beta2.LabelAppName: app.Name, v1beta2.LabelLaunchedByOperator: "true", v1beta2.SparkRoleLabel: v1beta2.SparkRoleExecutor}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: v1beta2.SparkExecutorContainerName, Image: "spark"}}},
		}
		if tc.customised {
			pod.Labels[v1beta2.LabelCustomised] = "true"
		}
		if err := c.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		if got := envValue(pod.Spec.Containers[0].Env, "SPARK_CONF_DIR"); got != tc.wantDir {
			t.Errorf("%s (customised label %t): SPARK_CONF_DIR = %q, want %q", tc.name, tc.customised, got, tc.wantDir)
		}
	}
}

// envValue is the value of the last definition of name in env: the one a container sees.
func envValue(env []corev1.EnvVar, name string) string {
	value := ""
	for _, e := range env {
		if e.Name == name {
			value = e.Value
		}
	}
	return value
}

// TestUnreachableWebhookFailsSubmission registers a pod webhook that nothing serves, with
// failurePolicy Fail, for the test's namespace: the API server refuses the driver, and the
// operator reports that refusal as SUBMISSION_FAILED, retries per the restart policy, and then
// gives up with the message.
func TestUnreachableWebhookFailsSubmission(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "e2e-nowebhook")
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-unreachable-" + ns},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "pods.unreachable.sparkop.dev",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(fmt.Sprintf("https://127.0.0.1:%d/mutate", cluster.FreePort(t)))},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{v1beta2.LabelLaunchedByOperator: "true"}},
			TimeoutSeconds:          ptr.To[int32](2),
		}},
	}
	if err := c.Create(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), cfg) })
	startOperator(t, ns)

	app := cluster.SparkPi(ns, "refused")
	app.Spec.RestartPolicy = v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyOnFailure,
		OnSubmissionFailureRetries: ptr.To[int32](1), OnSubmissionFailureRetryInterval: ptr.To[int64](1)}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 60*time.Second, "the application to fail", func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return false, err
		}
		return app.Status.AppState.State == v1beta2.ApplicationStateFailed, nil
	})
	if msg := app.Status.AppState.ErrorMessage; !strings.Contains(msg, "pods.unreachable.sparkop.dev") {
		t.Errorf("error message %q does not name the webhook that refused the driver", msg)
	}
	if got := app.Status.SubmissionAttempts; got != 2 {
		t.Errorf("submissionAttempts = %d, want 2 (the first and one retry)", got)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 {
		t.Errorf("%d pods exist; a refused driver must leave none", len(pods.Items))
	}
}
