package realnode

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestOperatorKilled is a small kill storm: 20 real applications (SparkPi and pi.py, 512 MiB,
// four or five at a time by the gang scheduler), their operator killed with SIGKILL once while
// they are being submitted and three times while they run, and started again each time. None is
// lost, none is submitted twice (each run of an application made one driver pod, from one
// submission attempt), one application never has two drivers alive, and all complete
// with their answer in the log. A driver that Spark fails (twenty JVMs on 2 cores can lose
// their connection to the API server) runs again under restartPolicy OnFailure, as a user's
// would; a rerun is a run of its own, with a driver pod of its own.
func TestOperatorKilled(t *testing.T) {
	// The room a Reservation plans for executors is kept until they come, however long JVMs
	// take to start on a busy machine (by default 5 minutes).
	e := newEnv(t, "--gang-reservation-timeout=1h")
	drivers := cluster.RecordDrivers(t, e.cs, e.ns)
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
		app.Spec.RestartPolicy = v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyOnFailure,
			OnFailureRetries: ptr.To[int32](2), OnFailureRetryInterval: ptr.To[int64](1)}
		e.create(app)
		names = append(names, name)
	}
	// One list a look, not a read of each application: the looks come every 100 ms for the
	// whole storm, on the API server the JVMs need.
	states := func() map[string]v1beta2.SparkApplicationStatus {
		var list v1beta2.SparkApplicationList
		if err := e.c.List(e.ctx, &list, client.InNamespace(e.ns)); err != nil {
			t.Fatal(err)
		}
		out := map[string]v1beta2.SparkApplicationStatus{}
		for _, a := range list.Items {
			out[a.Name] = a.Status
		}
		return out
	}
	count := func(want ...v1beta2.ApplicationStateType) int {
		n := 0
		for _, st := range states() {
			if slices.Contains(want, st.AppState.State) {
				n++
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
		completed := 0
		for name, st := range states() {
			switch st.AppState.State {
			case v1beta2.ApplicationStateFailed:
				return false, fmt.Errorf("%s FAILED: %s", name, st.AppState.ErrorMessage)
			case v1beta2.ApplicationStateCompleted:
				completed++
			}
		}
		return completed == len(names), nil
	})
	runs := map[string]int{}
	for _, name := range names {
		app := e.get(name)
		runs[name] = int(app.Status.ExecutionAttempts)
		// Each run counts its own submission attempts.
		if app.Status.SubmissionAttempts != 1 {
			t.Errorf("%s: %d submission attempts of its last run, want 1", name, app.Status.SubmissionAttempts)
		}
		if app.Status.ExecutionAttempts > 1 {
			t.Logf("%s ran %d times (Spark failed its driver before)", name, app.Status.ExecutionAttempts)
		}
		if log := e.driverLog(app); !strings.Contains(log, "Pi is roughly 3.1") {
			t.Errorf("%s: no answer in the driver's log:\n%s", name, cluster.Tail(log, 10))
		}
	}
	drivers.Require(t, runs)
}
