package cluster

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// GraceFinalizer holds a deleted pod in the API server until TerminationGrace lets it go.
const GraceFinalizer = "test.sparkop.dev/grace"

// TerminationGrace models a kubelet's termination grace period, which kwok lacks (it removes a
// deleted pod at once): a pod of namespace ns carrying GraceFinalizer loses it grace after its
// deletion starts, so it stays terminating for that long, as a real pod does while its
// containers stop. When the test ends every pod still carrying it is let go, so that the
// namespace can go.
func TerminationGrace(t *testing.T, c client.Client, ns string, grace time.Duration) {
	t.Helper()
	ctx := context.Background()
	release := func(pod *corev1.Pod) {
		patch := client.MergeFrom(pod.DeepCopy())
		pod.Finalizers = slices.DeleteFunc(pod.Finalizers, func(f string) bool { return f == GraceFinalizer })
		if err := c.Patch(ctx, pod, patch); client.IgnoreNotFound(err) != nil {
			t.Errorf("removing the finalizer of %s: %v", pod.Name, err)
		}
	}
	w, err := kubernetes.NewForConfigOrDie(Config(t)).CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var timers sync.WaitGroup
	done := make(chan struct{})
	go func() {
		defer close(done)
		seen := map[types.UID]bool{}
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok || pod.DeletionTimestamp == nil || !slices.Contains(pod.Finalizers, GraceFinalizer) || seen[pod.UID] {
				continue
			}
			seen[pod.UID] = true
			timers.Go(func() {
				time.Sleep(grace) // the grace period being modelled, not a wait for a condition
				release(pod)
			})
		}
	}()
	t.Cleanup(func() {
		w.Stop()
		<-done
		timers.Wait()
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace(ns)); err != nil {
			t.Errorf("listing pods to release: %v", err)
			return
		}
		for i := range pods.Items {
			if slices.Contains(pods.Items[i].Finalizers, GraceFinalizer) {
				release(&pods.Items[i])
			}
		}
	})
}
