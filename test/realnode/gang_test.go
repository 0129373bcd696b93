package realnode

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// running lists the names of the pods of an application of role (driver or executor) that run
// and are not being deleted.
func (e *env) running(name, role string) []string {
	var names []string
	for _, p := range e.podsOf(name) {
		if p.Labels[v1beta2.SparkRoleLabel] == role && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			names = append(names, p.Name)
		}
	}
	return names
}

// unschedulable names a pod of the application the scheduler found no room for, if any.
func (e *env) unschedulable(name string) string {
	var pods corev1.PodList
	if err := e.c.List(e.ctx, &pods, client.InNamespace(e.ns), client.MatchingLabels{v1beta2.LabelAppName: name}); err != nil {
		e.t.Fatal(err)
	}
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			// Gated pods wait for the gang scheduler, not for room.
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				return p.Name + ": " + c.Message
			}
		}
	}
	return ""
}

// Two applications of 1.2 CPUs each on a node of 2: the gang scheduler starts one whole, and
// the other only once the first's executors are gone. No pod of either ever waits for room: a
// driver started beside the first whole gang would be a partial start, its executors pending.
func TestGangOnTheRealNode(t *testing.T) {
	e := newEnv(t)
	apps := []string{"first", "second"}
	for _, name := range apps {
		app := e.sparkPi(name, 2)
		app.Spec.Arguments = []string{"200"}
		app.Spec.Driver.CoreRequest = ptr.To("400m")
		app.Spec.Executor.CoreRequest = ptr.To("400m")
		e.create(app)
	}
	done := map[string]bool{}
	executors := map[string]int{}
	started := ""
	cluster.Eventually(t, 2*appTimeout, "both applications to complete", func() (bool, error) {
		for i, name := range apps {
			if pod := e.unschedulable(name); pod != "" {
				return false, fmt.Errorf("a pod of %s waits for room, a partial start: %s", name, pod)
			}
			other := apps[1-i]
			if len(e.running(name, v1beta2.SparkRoleDriver)) > 0 && started == "" {
				started = name
			}
			if started == other && len(e.running(name, v1beta2.SparkRoleDriver)) > 0 && len(e.running(other, v1beta2.SparkRoleExecutor)) > 0 {
				return false, fmt.Errorf("%s's driver runs while %s's executors still do", name, other)
			}
			app := e.get(name)
			switch s := app.Status.AppState.State; {
			case s == v1beta2.ApplicationStateCompleted:
				done[name] = true
			case terminal(s):
				return false, fmt.Errorf("%s ended %s: %s", name, s, app.Status.AppState.ErrorMessage)
			}
			executors[name] = max(executors[name], len(app.Status.ExecutorState))
		}
		return done["first"] && done["second"], nil
	})
	for name, n := range executors {
		if n != 2 {
			t.Errorf("%s ran %d executors, want its whole gang of 2", name, n)
		}
	}
}

// Dynamic allocation with shuffle tracking: the gang is the driver and minExecutors, Spark asks
// for more executors while tasks wait and lets the idle ones go.
func TestDynamicAllocation(t *testing.T) {
	e := newEnv(t)
	app := e.checkApp("dynamic", "spread", "6")
	app.Spec.Executor.Instances = nil
	app.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, InitialExecutors: ptr.To[int32](1),
		MinExecutors: ptr.To[int32](1), MaxExecutors: ptr.To[int32](3), ShuffleTrackingEnabled: ptr.To(true)}
	app.Spec.SparkConf["spark.dynamicAllocation.executorIdleTimeout"] = "3s"
	app.Spec.SparkConf["spark.dynamicAllocation.schedulerBacklogTimeout"] = "1s"
	e.create(app)
	e.waitState("dynamic", v1beta2.ApplicationStateRunning)

	var res schedulingv1alpha1.Reservation
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "dynamic"}, &res); err != nil {
		t.Fatalf("the run's Reservation: %v", err)
	}
	executors := 0
	for _, m := range res.Spec.Members {
		if m.Role == schedulingv1alpha1.MemberRoleExecutor {
			executors++
		}
	}
	if executors != 1 {
		t.Errorf("the Reservation holds %d executors, want minExecutors (1): %+v", executors, res.Spec.Members)
	}

	most := 0
	cluster.Eventually(t, appTimeout, "Spark to ask for more executors, then let the idle ones go", func() (bool, error) {
		n := len(e.running("dynamic", v1beta2.SparkRoleExecutor))
		most = max(most, n)
		return most >= 2 && n == 1, nil
	})
	e.waitState("dynamic", v1beta2.ApplicationStateCompleted)
}
