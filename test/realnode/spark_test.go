package realnode

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/podcompare"
)

var piLine = regexp.MustCompile(`Pi is roughly 3\.1[0-9]*`)

// SparkPi and pi.py, each submitted natively and by spark-submit, run to COMPLETED on the real
// node with executors their driver made, and print the answer in the driver's log. The same
// application is submitted both ways under one name, natively in one namespace and by
// spark-submit in the other, and the two driver pods, with the ConfigMaps and Services they
// own, are the same but for the differences test/equivalence accepts (podcompare.Allowed).
func TestSparkPi(t *testing.T) {
	e := newEnv(t)
	for _, a := range []struct {
		name   string
		python bool
	}{{name: "scala"}, {name: "python", python: true}} {
		t.Run(a.name, func(t *testing.T) {
			// Both submissions of one application at once (4 pods of a quarter CPU), the
			// native one in e.ns and the spark-submit one in e.twin.
			sides := []struct {
				submitter string
				e         *env
			}{{"native", e.withT(t)}, {"spark-submit", e.in(e.twin).withT(t)}}
			for _, side := range sides {
				app := side.e.sparkPi(a.name, 1)
				if a.python {
					app = side.e.pythonPi(a.name, 1)
				}
				app.Annotations = map[string]string{v1beta2.AnnotationSubmitter: side.submitter}
				side.e.create(app)
			}
			snaps := map[string]*podcompare.Snapshot{}
			for _, side := range sides {
				t.Run(side.submitter, func(t *testing.T) {
					snaps[side.submitter] = side.e.withT(t).checkPi(a.name)
				})
			}
			if snaps["native"] == nil || snaps["spark-submit"] == nil {
				return
			}
			t.Run("same driver pod", func(t *testing.T) {
				var bad []string
				for _, d := range podcompare.Compare(snaps["spark-submit"], snaps["native"]) {
					if al, ok := d.AllowedBy(); ok {
						t.Logf("allowed: %s (%s)", d, al.Reason)
						continue
					}
					bad = append(bad, d.String())
				}
				if len(bad) > 0 {
					t.Errorf("native submission differs from spark-submit in %d field(s) (not in podcompare.Allowed):\n  %s",
						len(bad), strings.Join(bad, "\n  "))
				}
			})
		})
	}
}

// checkPi waits for the Pi application name to complete, checks its answer, executor and node,
// and returns the snapshot of its driver pod and what the pod owns.
func (e *env) checkPi(name string) *podcompare.Snapshot {
	t := e.t
	t.Helper()
	app := e.waitState(name, v1beta2.ApplicationStateCompleted)
	log := e.driverLog(app)
	if !piLine.MatchString(log) {
		t.Errorf("the driver's log has no %q:\n%s", piLine, cluster.Tail(log, 30))
	}
	// The driver made its executor, on the real node, and it ran.
	if len(app.Status.ExecutorState) == 0 {
		t.Errorf("no executor in the status: %+v", app.Status)
	}
	pod, cms, svcs, err := podcompare.Read(e.ctx, e.c, e.ns, app.DriverPodName())
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeName != nodeName {
		t.Errorf("driver ran on %q, want %q", pod.Spec.NodeName, nodeName)
	}
	snap, err := podcompare.New(pod, podcompare.Generated{AppUID: app.UID, SubmissionID: app.Status.SubmissionID}, cms, svcs)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// checkScript is a PySpark job that reports what the webhook put into its driver and executors,
// as seen from inside the containers; with "fail N" it exits with N, with "sleep N" it sleeps,
// with "spread N" it runs N slow tasks and then idles.
const checkScript = `
import os, sys, time
from pyspark.sql import SparkSession

def archive():
    # Whether the JVM this Python process runs under maps the image's class-data archive.
    pid = os.getpid()
    while pid > 1:
        stat = open("/proc/%d/stat" % pid).read()
        if stat[stat.index("(") + 1:stat.rindex(")")] == "java":
            return "yes" if "/opt/spark/cds/spark.jsa" in open("/proc/%d/maps" % pid).read() else "no"
        pid = int(stat[stat.rindex(")") + 2:].split()[1])
    return "no JVM"

def seen(_):
    secret = open("/etc/check-secret/token").read().strip()
    limit = "none"
    for f in ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory.max"):
        if os.path.exists(f):
            limit = open(f).read().strip()
            break
    return "uid=%d env=%s secret=%s limit=%s archive=%s" % (os.getuid(), os.environ.get("CHECK_ENV", ""), secret, limit, archive())

mode = sys.argv[1] if len(sys.argv) > 1 else "check"
if mode == "fail":
    sys.exit(int(sys.argv[2]))
spark = SparkSession.builder.getOrCreate()
print("CHECK driver " + seen(None))
for line in spark.sparkContext.parallelize(range(2), 2).map(seen).collect():
    print("CHECK executor " + line)
if mode == "sleep":
    time.sleep(int(sys.argv[2]))
if mode == "spread":
    # Tasks that wait, so that Spark asks for more executors; then idle, so that it lets them go.
    n = int(sys.argv[2])
    spark.sparkContext.parallelize(range(n), n).foreach(lambda _: time.sleep(4))
    time.sleep(30)
spark.stop()
`

// checkApp runs checkScript from a ConfigMap, with a Secret and an environment variable on
// both driver and executors, as uid 185.
func (e *env) checkApp(name string, args ...string) *v1beta2.SparkApplication {
	e.t.Helper()
	for _, o := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "check-script"}, Data: map[string]string{"check.py": checkScript}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "check-secret"}, StringData: map[string]string{"token": "s3cret"}},
	} {
		if err := e.c.Create(e.ctx, o); err != nil && !strings.Contains(err.Error(), "already exists") {
			e.t.Fatal(err)
		}
	}
	app := e.pythonPi(name, 1)
	app.Spec.MainApplicationFile = "local:///etc/check-script/check.py"
	app.Spec.Arguments = args
	sc := &corev1.SecurityContext{RunAsUser: ptr.To[int64](185), RunAsGroup: ptr.To[int64](185), RunAsNonRoot: ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	for _, p := range []*v1beta2.SparkPodSpec{&app.Spec.Driver.SparkPodSpec, &app.Spec.Executor.SparkPodSpec} {
		p.Secrets = []v1beta2.SecretInfo{{Name: "check-secret", Path: "/etc/check-secret", Type: v1beta2.SecretTypeGeneric}}
		p.Env = []corev1.EnvVar{{Name: "CHECK_ENV", Value: "from-the-spec"}}
		p.SecurityContext = sc
	}
	app.Spec.Driver.ConfigMaps = []v1beta2.NamePath{{Name: "check-script", Path: "/etc/check-script"}}
	return app
}

// What the webhook adds is really there inside the containers: the mounted ConfigMap (the job
// itself) and Secret, the environment, the memory limit, and uid 185 enforced by the runtime.
// And what the image adds: the driver's and executors' JVMs map its class-data archive.
func TestInsideTheContainers(t *testing.T) {
	e := newEnv(t)
	e.create(e.checkApp("check"))
	app := e.waitState("check", v1beta2.ApplicationStateCompleted)
	log := e.driverLog(app)
	driver := e.pod(app.DriverPodName())
	limit := driver.Spec.Containers[0].Resources.Limits.Memory().Value()
	want := fmt.Sprintf("uid=185 env=from-the-spec secret=s3cret limit=%d archive=yes", limit)
	if !strings.Contains(log, "CHECK driver "+want) {
		t.Errorf("the driver saw otherwise; want %q in:\n%s", want, cluster.Tail(log, 30))
	}
	executors := regexp.MustCompile(`CHECK executor uid=185 env=from-the-spec secret=s3cret limit=[0-9]+ archive=yes`).FindAllString(log, -1)
	if len(executors) != 2 {
		t.Errorf("want 2 executor tasks reporting uid 185, the env, the secret and the class-data archive, got %q in:\n%s", executors, cluster.Tail(log, 30))
	}
}

// A driver that exits non-zero is run again by the restart policy, and the status carries
// Spark's real exit code; a running driver that is deleted fails its run.
func TestDriverFailures(t *testing.T) {
	e := newEnv(t)
	t.Run("exit code and retry", func(t *testing.T) {
		app := e.checkApp("exits", "fail", "3")
		app.Spec.RestartPolicy = v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyOnFailure, OnFailureRetries: ptr.To[int32](1),
			OnFailureRetryInterval: ptr.To[int64](1)}
		e.create(app)
		cluster.Eventually(t, appTimeout, "exits to fail for good", func() (bool, error) {
			app = e.get("exits")
			return app.Status.AppState.State == v1beta2.ApplicationStateFailed, nil
		})
		if app.Status.ExecutionAttempts != 2 {
			t.Errorf("executionAttempts = %d, want 2 (one retry)", app.Status.ExecutionAttempts)
		}
		if msg := app.Status.AppState.ErrorMessage; !strings.Contains(msg, "exit code 3") {
			t.Errorf("errorMessage = %q, want Spark's exit code 3", msg)
		}
	})
	t.Run("deleted driver", func(t *testing.T) {
		e.create(e.checkApp("deleted", "sleep", "600"))
		app := e.waitState("deleted", v1beta2.ApplicationStateRunning)
		e.waitLog(app, "CHECK executor")
		if err := e.cs.CoreV1().Pods(e.ns).Delete(e.ctx, app.DriverPodName(), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitState("deleted", v1beta2.ApplicationStateFailed)
	})
}

func (e *env) pod(name string) *corev1.Pod {
	e.t.Helper()
	var pod corev1.Pod
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, &pod); err != nil {
		e.t.Fatal(err)
	}
	return &pod
}

// waitLog waits until the driver's log holds text.
func (e *env) waitLog(app *v1beta2.SparkApplication, text string) {
	e.t.Helper()
	cluster.Eventually(e.t, appTimeout, strconv.Quote(text)+" in the driver's log", func() (bool, error) {
		return strings.Contains(e.driverLog(app), text), nil
	})
}
