package cluster_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/test/cluster"
)

// TestLocalClusterLifecycle starts a cluster of its own (not the shared one), checks what the
// rest of the test suite relies on, and takes it down again.
func TestLocalClusterLifecycle(t *testing.T) {
	ctx := context.Background()
	state := filepath.Join(t.TempDir(), "cluster")
	kubeconfig, err := cluster.Up(ctx, state, "--nodes", "2", "--node-cpu", "8", "--node-memory", "32Gi")
	if err != nil {
		t.Fatal(err)
	}
	downed := false
	t.Cleanup(func() {
		if !downed {
			_ = cluster.Down(context.Background(), state)
		}
	})
	c, clientset := cluster.Clients(t, kubeconfig)

	t.Run("nodes are ready with the requested size", func(t *testing.T) {
		var nodes corev1.NodeList
		if err := c.List(ctx, &nodes); err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) != 2 {
			t.Fatalf("want 2 nodes, got %d", len(nodes.Items))
		}
		for _, n := range nodes.Items {
			if !nodeReady(&n) {
				t.Errorf("node %s is not Ready: %+v", n.Name, n.Status.Conditions)
			}
			if got := n.Status.Allocatable[corev1.ResourceCPU]; got.Cmp(resource.MustParse("8")) != 0 {
				t.Errorf("node %s allocatable cpu = %s, want 8", n.Name, got.String())
			}
			if got := n.Status.Allocatable[corev1.ResourceMemory]; got.Cmp(resource.MustParse("32Gi")) != 0 {
				t.Errorf("node %s allocatable memory = %s, want 32Gi", n.Name, got.String())
			}
			for _, taint := range n.Spec.Taints {
				t.Errorf("node %s has taint %s; Spark pods without tolerations could not run", n.Name, taint.Key)
			}
			// Without a renewed lease the node controller marks the node NotReady after its
			// grace period, and pods stop being scheduled there.
			var lease coordinationv1.Lease
			if err := c.Get(ctx, client.ObjectKey{Namespace: corev1.NamespaceNodeLease, Name: n.Name}, &lease); err != nil {
				t.Errorf("node %s has no heartbeat lease: %v", n.Name, err)
			}
		}
	})

	t.Run("our CRDs are installed", func(t *testing.T) {
		for _, name := range []string{"sparkapplications.sparkoperator.k8s.io", "scheduledsparkapplications.sparkoperator.k8s.io"} {
			crd := &unstructured.Unstructured{}
			crd.SetAPIVersion("apiextensions.k8s.io/v1")
			crd.SetKind("CustomResourceDefinition")
			if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				t.Errorf("CRD %s: %v", name, err)
			}
		}
	})

	ns := cluster.Namespace(t, c, "lifecycle")

	t.Run("a pod with run-seconds goes Pending, Running, Succeeded", func(t *testing.T) {
		pod := samplePod(ns, "runs-and-succeeds", map[string]string{"kwok.sparkop.dev/run-seconds": "2"})
		phases := watchPhases(t, ctx, clientset, pod, corev1.PodSucceeded, corev1.PodFailed)
		want := []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded}
		if !slices.Equal(phases, want) {
			t.Fatalf("phases = %v, want %v", phases, want)
		}
		got := getPod(t, c, pod)
		if got.Spec.NodeName == "" {
			t.Error("pod was never bound to a node")
		}
		if code := exitCode(got); code != 0 {
			t.Errorf("exit code = %d, want 0", code)
		}
	})

	t.Run("a pod with an exit code fails with it", func(t *testing.T) {
		pod := samplePod(ns, "runs-and-fails", map[string]string{
			"kwok.sparkop.dev/run-seconds": "1",
			"kwok.sparkop.dev/exit-code":   "3",
		})
		phases := watchPhases(t, ctx, clientset, pod, corev1.PodSucceeded, corev1.PodFailed)
		if last := phases[len(phases)-1]; last != corev1.PodFailed {
			t.Fatalf("phases = %v, want to end Failed", phases)
		}
		if code := exitCode(getPod(t, c, pod)); code != 3 {
			t.Errorf("exit code = %d, want 3", code)
		}
	})

	t.Run("a pod without annotations keeps running; logs answer", func(t *testing.T) {
		pod := samplePod(ns, "keeps-running", nil)
		if err := c.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		cluster.Eventually(t, 30*time.Second, "pod to run", func() (bool, error) {
			return getPod(t, c, pod).Status.Phase == corev1.PodRunning, nil
		})
		stream, err := clientset.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "main"}).Stream(ctx)
		if err != nil {
			t.Fatalf("kubectl logs equivalent failed: %v", err)
		}
		defer stream.Close()
		text, err := io.ReadAll(stream)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(text), "kwok: this container is simulated") {
			t.Errorf("logs = %q, want the simulated container log", text)
		}
		// A pod started after it with run-seconds ends: kwok has played its stages on pods
		// running since, and none ended the one without annotations.
		timed := samplePod(ns, "runs-beside", map[string]string{"kwok.sparkop.dev/run-seconds": "2"})
		if phases := watchPhases(t, ctx, clientset, timed, corev1.PodSucceeded, corev1.PodFailed); phases[len(phases)-1] != corev1.PodSucceeded {
			t.Fatalf("the pod with run-seconds went through %v, want it to end Succeeded", phases)
		}
		if phase := getPod(t, c, pod).Status.Phase; phase != corev1.PodRunning {
			t.Errorf("pod without run-seconds is %s once a pod started after it with run-seconds ended, want it still Running", phase)
		}
		if err := c.Delete(ctx, pod); err != nil {
			t.Fatal(err)
		}
		cluster.Eventually(t, 30*time.Second, "deleted pod to disappear", func() (bool, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
			return err != nil, client.IgnoreNotFound(err)
		})
	})

	t.Run("without --workload-api there is no Workload API", func(t *testing.T) {
		if got := workloadResources(t, clientset); len(got) != 0 {
			t.Errorf("scheduling.k8s.io/v1beta1 serves %v, want nothing", got)
		}
		if args := cmdline(t, state, "kube-scheduler"); slices.Contains(args, workloadGate) {
			t.Errorf("kube-scheduler runs with %s: %v", workloadGate, args)
		}
	})

	t.Run("up --workload-api refuses to change the running cluster", func(t *testing.T) {
		before := readPids(t, state)
		_, err := cluster.Up(ctx, state, "--workload-api")
		if err == nil || !strings.Contains(err.Error(), "started without --workload-api") {
			t.Errorf("up --workload-api on a cluster without it: err = %v, want it refused", err)
		}
		if after := readPids(t, state); !slices.Equal(before, after) {
			t.Errorf("up --workload-api restarted components: pids %v -> %v", before, after)
		}
	})

	t.Run("up --spark-scheduler refuses to change the running cluster", func(t *testing.T) {
		before := readPids(t, state)
		_, err := cluster.Up(ctx, state, "--spark-scheduler")
		if err == nil || !strings.Contains(err.Error(), "started without --spark-scheduler") {
			t.Errorf("up --spark-scheduler on a cluster without it: err = %v, want it refused", err)
		}
		if after := readPids(t, state); !slices.Equal(before, after) {
			t.Errorf("up --spark-scheduler restarted components: pids %v -> %v", before, after)
		}
	})

	t.Run("up again reuses the running cluster", func(t *testing.T) {
		before := readPids(t, state)
		again, err := cluster.Up(ctx, state)
		if err != nil {
			t.Fatal(err)
		}
		if again != kubeconfig {
			t.Errorf("second up printed kubeconfig %s, want %s", again, kubeconfig)
		}
		if after := readPids(t, state); !slices.Equal(before, after) {
			t.Errorf("second up restarted components: pids %v -> %v", before, after)
		}
	})

	t.Run("down leaves no process behind", func(t *testing.T) {
		pids := readPids(t, state)
		if len(pids) != 5 {
			t.Fatalf("want 5 component pids, got %v", pids)
		}
		downed = true
		if err := cluster.Down(ctx, state); err != nil {
			t.Fatal(err)
		}
		for _, pid := range pids {
			if cluster.ProcessRunning(pid) {
				t.Errorf("process %d still runs after down", pid)
			}
		}
		if _, err := os.Stat(state); !os.IsNotExist(err) {
			t.Errorf("state folder %s still exists after down", state)
		}
	})
}

func samplePod(ns, name string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name:  "main",
				Image: "registry.invalid/never-pulled:1",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("1"),
					corev1.ResourceMemory: resource.MustParse("1Gi"),
				}},
			}},
		},
	}
}

// watchPhases creates pod and returns the distinct phases it goes through until one of final.
func watchPhases(t *testing.T, ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, final ...corev1.PodPhase) []corev1.PodPhase {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	w, err := cs.CoreV1().Pods(pod.Namespace).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + pod.Name})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created, err := cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	phases := []corev1.PodPhase{created.Status.Phase}
	for ev := range w.ResultChan() {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			continue
		}
		if p.Status.Phase != "" && p.Status.Phase != phases[len(phases)-1] {
			phases = append(phases, p.Status.Phase)
		}
		if slices.Contains(final, p.Status.Phase) {
			return phases
		}
	}
	t.Fatalf("pod %s never reached %v; phases seen: %v", pod.Name, final, phases)
	return nil
}

func getPod(t *testing.T, c client.Client, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	var got corev1.Pod
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(pod), &got); err != nil {
		t.Fatal(err)
	}
	return &got
}

func exitCode(pod *corev1.Pod) int32 {
	for _, s := range pod.Status.ContainerStatuses {
		if s.State.Terminated != nil {
			return s.State.Terminated.ExitCode
		}
	}
	return -1
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func readPids(t *testing.T, state string) []int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(state, "pids", "*.pid"))
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	return pids
}

func TestPollInterval(t *testing.T) {
	for _, tc := range []struct{ waited, want time.Duration }{
		{0, 100 * time.Millisecond},
		{time.Second, 100 * time.Millisecond},
		{2 * time.Second, 200 * time.Millisecond},
		{5 * time.Second, 500 * time.Millisecond},
		{10 * time.Second, time.Second},
		{10 * time.Minute, time.Second},
	} {
		if got := cluster.PollInterval(tc.waited); got != tc.want {
			t.Errorf("PollInterval(%s) = %s, want %s", tc.waited, got, tc.want)
		}
	}
}
