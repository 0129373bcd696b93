package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestDriverPodNameRaceFailsTheLater: with no webhook to refuse it, an application naming as
// its driver pod the default driver pod of an application created 10 ms before it races it for
// the name. Whichever submission comes first, the earlier application runs with its own
// driver, and the later one fails with a message naming the application holding the name.
func TestDriverPodNameRaceFailsTheLater(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "e2e-drivername")
	startOperator(t, ns)

	const pairs = 6
	for i := range pairs {
		first := cluster.SparkPi(ns, fmt.Sprintf("first-%d", i))
		second := cluster.SparkPi(ns, fmt.Sprintf("second-%d", i))
		second.Spec.Driver.PodName = ptr.To(first.DriverPodName())
		if err := c.Create(ctx, first); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond) // the gap of the reported race, not a wait for a condition
		if err := c.Create(ctx, second); err != nil {
			t.Fatal(err)
		}
	}
	for i := range pairs {
		first := client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("first-%d", i)}
		second := client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("second-%d", i)}
		var app v1beta2.SparkApplication
		cluster.Eventually(t, 60*time.Second, second.Name+" to fail", func() (bool, error) {
			if err := c.Get(ctx, second, &app); err != nil {
				return false, err
			}
			switch app.Status.AppState.State {
			case v1beta2.ApplicationStateFailed, v1beta2.ApplicationStateFailedSubmission:
				return true, nil
			case v1beta2.ApplicationStateRunning:
				return false, fmt.Errorf("%s runs with the driver pod name of %s", second.Name, first.Name)
			}
			return false, nil
		})
		if msg, want := app.Status.AppState.ErrorMessage, "SparkApplication "+first.Name; !strings.Contains(msg, want) {
			t.Errorf("%s failed with %q, want a message naming %q", second.Name, msg, want)
		}
		cluster.Eventually(t, 60*time.Second, first.Name+" to run", func() (bool, error) {
			if err := c.Get(ctx, first, &app); err != nil {
				return false, err
			}
			switch app.Status.AppState.State {
			case v1beta2.ApplicationStateRunning:
				return true, nil
			case v1beta2.ApplicationStateFailed, v1beta2.ApplicationStateFailedSubmission, v1beta2.ApplicationStateFailing:
				return false, fmt.Errorf("%s failed: %s", first.Name, app.Status.AppState.ErrorMessage)
			}
			return false, nil
		})
		var pod corev1.Pod
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: first.Name + "-driver"}, &pod); err != nil {
			t.Fatal(err)
		}
		if owner := pod.Labels[v1beta2.LabelAppName]; owner != first.Name {
			t.Errorf("driver pod %s is of application %q, want %s", pod.Name, owner, first.Name)
		}
	}
}
