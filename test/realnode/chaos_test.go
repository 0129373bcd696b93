package realnode

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	toolswatch "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// driverLedger records, from a watch of the namespace's pods, every driver pod ever made for
// each application, and any moment two of one application's drivers were alive together.
type driverLedger struct {
	mu      sync.Mutex
	made    map[string]map[string]bool // application → driver pod UIDs
	alive   map[string]map[string]bool // application → UIDs not yet ended
	doubled []string
}

func (e *env) watchDrivers() *driverLedger {
	e.t.Helper()
	l := &driverLedger{made: map[string]map[string]bool{}, alive: map[string]map[string]bool{}}
	sel := v1beta2.SparkRoleLabel + "=" + v1beta2.SparkRoleDriver
	list, err := e.cs.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		e.t.Fatal(err)
	}
	lw := cache.NewFilteredListWatchFromClient(e.cs.CoreV1().RESTClient(), "pods", e.ns,
		func(o *metav1.ListOptions) { o.LabelSelector = sel })
	w, err := toolswatch.NewRetryWatcherWithContext(e.ctx, list.ResourceVersion, lw)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok {
				l.see(ev.Type, pod)
			}
		}
	}()
	return l
}

func (l *driverLedger) see(t watch.EventType, pod *corev1.Pod) {
	l.mu.Lock()
	defer l.mu.Unlock()
	app, uid := pod.Labels[v1beta2.LabelAppName], string(pod.UID)
	if l.made[app] == nil {
		l.made[app], l.alive[app] = map[string]bool{}, map[string]bool{}
	}
	l.made[app][uid] = true
	ended := t == watch.Deleted || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	if ended {
		delete(l.alive[app], uid)
		return
	}
	l.alive[app][uid] = true
	if len(l.alive[app]) > 1 {
		l.doubled = append(l.doubled, fmt.Sprintf("%s: %d drivers alive", app, len(l.alive[app])))
	}
}

// TestOperatorKilled is a small kill storm: 20 real applications (SparkPi and pi.py, 512 MiB,
// four or five at a time by the gang scheduler), their operator killed with SIGKILL once while
// they are being submitted and three times while they run, and started again each time. None is
// lost, none is submitted twice, one application never has two drivers alive, and all complete
// with their answer in the log.
func TestOperatorKilled(t *testing.T) {
	// The room a Reservation plans for executors is kept until they come, however long JVMs
	// take to start on a busy machine (by default 5 minutes).
	e := newEnv(t, "--gang-reservation-timeout=1h")
	ledger := e.watchDrivers()
	var names []string
	for i := range 20 {
		name := fmt.Sprintf("storm-%02d", i)
		app := e.sparkPi(name, 1)
		if i%2 == 1 {
			app = e.pythonPi(name, 1)
		}
		app.Spec.Arguments = []string{"4"}
		// Spark's least: a JVM heap of 450 MiB.
		app.Spec.Driver.Memory, app.Spec.Executor.Memory = ptr.To("512m"), ptr.To("512m")
		// Twenty JVMs on 2 cores: Spark's Kubernetes clients wait longer than sparkPi's 60 s.
		for k, v := range app.Spec.SparkConf {
			if v == "60000" {
				app.Spec.SparkConf[k] = "300000"
			}
		}
		app.Spec.Driver.CoreRequest, app.Spec.Executor.CoreRequest = ptr.To("200m"), ptr.To("200m")
		e.create(app)
		names = append(names, name)
	}
	count := func(states ...v1beta2.ApplicationStateType) int {
		n := 0
		for _, name := range names {
			for _, s := range states {
				if e.get(name).Status.AppState.State == s {
					n++
				}
			}
		}
		return n
	}
	kills := []struct {
		when string
		now  func() bool
	}{
		{"during submissions", func() bool { return count(v1beta2.ApplicationStateSubmitted, v1beta2.ApplicationStateRunning) > 0 }},
		{"while they run", func() bool { return count(v1beta2.ApplicationStateRunning) > 0 }},
		{"with 5 completed", func() bool { return count(v1beta2.ApplicationStateCompleted) >= 5 }},
		{"with 10 completed", func() bool { return count(v1beta2.ApplicationStateCompleted) >= 10 }},
	}
	for _, k := range kills {
		cluster.Eventually(t, 2*appTimeout, "the moment to kill the operator "+k.when, func() (bool, error) { return k.now(), nil })
		e.op.Kill()
		t.Logf("operator killed %s", k.when)
		e.op = cluster.StartOperator(t, "operator", e.opArgs...)
	}
	cluster.Eventually(t, 3*appTimeout, "all 20 applications to complete", func() (bool, error) {
		for _, name := range names {
			if s := e.get(name).Status.AppState.State; s == v1beta2.ApplicationStateFailed {
				return false, fmt.Errorf("%s FAILED: %s", name, e.get(name).Status.AppState.ErrorMessage)
			}
		}
		return count(v1beta2.ApplicationStateCompleted) == len(names), nil
	})
	ledger.mu.Lock()
	defer ledger.mu.Unlock()
	if len(ledger.doubled) > 0 {
		t.Errorf("two drivers of one application alive together: %v", ledger.doubled)
	}
	for _, name := range names {
		app := e.get(name)
		if n := len(ledger.made[name]); n != 1 || app.Status.SubmissionAttempts != 1 {
			t.Errorf("%s: %d driver pods made, %d submission attempts; want 1 each", name, n, app.Status.SubmissionAttempts)
		}
		if log := e.driverLog(app); !strings.Contains(log, "Pi is roughly 3.1") {
			t.Errorf("%s: no answer in the driver's log:\n%s", name, cluster.Tail(log, 10))
		}
	}
}
