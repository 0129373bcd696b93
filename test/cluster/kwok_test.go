package cluster_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/test/cluster"
)

// kwok deletes pods by name, where a kubelet deletes only its own pod (by UID): the local
// cluster lets kwok delete only a pod already being deleted, so that a delete kwok makes late
// cannot take a newer pod of the same name (an application's next driver).
func TestKwokDeletesOnlyPodsBeingDeleted(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	kwok, _ := cluster.Clients(t, filepath.Join(filepath.Dir(cluster.Kubeconfig(t)), "kwok.kubeconfig"))
	ns := cluster.Namespace(t, c, "kwok-delete")
	const hold = "sparkop.dev/test-hold"
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held", Finalizers: []string{hold}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/none"}}},
	}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		latest := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), latest); err != nil {
			return
		}
		patch := client.MergeFrom(latest.DeepCopy())
		latest.Finalizers = slices.DeleteFunc(latest.Finalizers, func(f string) bool { return f == hold })
		_ = c.Patch(ctx, latest, patch)
	})

	err := kwok.Delete(ctx, pod)
	if err == nil || !strings.Contains(err.Error(), "kwok deletes only a pod being deleted") {
		t.Fatalf("kwok's delete of a pod not being deleted: %v, want the policy's refusal", err)
	}
	latest := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), latest); err != nil || latest.DeletionTimestamp != nil {
		t.Fatalf("the pod after kwok's refused delete: deletion %v, err %v; want it untouched", latest.DeletionTimestamp, err)
	}

	// Being deleted (the finalizer holds it), it is kwok's to delete, as a kubelet's would be.
	if err := c.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if err := kwok.Delete(ctx, pod); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("kwok's delete of a pod being deleted: %v, want it allowed", err)
	}
}
