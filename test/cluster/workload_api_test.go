package cluster_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/test/cluster"
)

// The feature gate that --workload-api turns on. In Kubernetes 1.37 it alone gates the
// Workload and PodGroup storage of the API server, the podgroup-protection controller of the
// controller manager and the GangScheduling plugin among the scheduler's defaults.
const workloadGate = "GenericWorkload=true"

// TestLocalClusterWorkloadAPI starts a cluster of its own with --workload-api and checks that
// the Workload API is served, that kube-scheduler gang-schedules a PodGroup, and that the state
// folder remembers the flag. One small cluster: it starts in about ten seconds.
func TestLocalClusterWorkloadAPI(t *testing.T) {
	ctx := context.Background()
	state := filepath.Join(t.TempDir(), "cluster")
	kubeconfig, err := cluster.Up(ctx, state, "--workload-api", "--nodes", "2", "--node-cpu", "8", "--node-memory", "32Gi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Down(context.Background(), state) })
	c, clientset := cluster.Clients(t, kubeconfig)

	t.Run("the API server serves workloads and podgroups", func(t *testing.T) {
		if got := workloadResources(t, clientset); !slices.Equal(got, []string{"podgroups", "workloads"}) {
			t.Errorf("scheduling.k8s.io/v1beta1 serves %v, want podgroups and workloads", got)
		}
	})

	t.Run("every component that needs it has the feature gate", func(t *testing.T) {
		for _, name := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
			if args := cmdline(t, state, name); !slices.Contains(args, workloadGate) {
				t.Errorf("%s runs without --feature-gates %s: %v", name, workloadGate, args)
			}
		}
		if args := cmdline(t, state, "kube-apiserver"); !slices.Contains(args, "scheduling.k8s.io/v1beta1=true") {
			t.Errorf("kube-apiserver runs without --runtime-config scheduling.k8s.io/v1beta1=true: %v", args)
		}
	})

	t.Run("the scheduler's profile has the GangScheduling plugin", func(t *testing.T) {
		if plugins := schedulerPlugins(t, state); !slices.Contains(plugins, "GangScheduling") {
			t.Errorf("kube-scheduler's multiPoint plugins are %v, without GangScheduling", plugins)
		}
	})

	ns := cluster.Namespace(t, c, "workload-api")

	t.Run("a Workload can be created", func(t *testing.T) {
		w := &schedulingv1beta1.Workload{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
			Spec: schedulingv1beta1.WorkloadSpec{PodGroupTemplates: []schedulingv1beta1.PodGroupTemplate{{
				Name:             "executors",
				SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: 2}},
			}}},
		}
		if err := c.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a gang of two PodGroup pods is scheduled only once both exist", func(t *testing.T) {
		pg := &schedulingv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gang"},
			Spec: schedulingv1beta1.PodGroupSpec{
				SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: 2}},
			},
		}
		if err := c.Create(ctx, pg); err != nil {
			t.Fatal(err)
		}
		member := func(name string) *corev1.Pod {
			pod := samplePod(ns, name, nil)
			pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To(pg.Name)}
			if err := c.Create(ctx, pod); err != nil {
				t.Fatal(err)
			}
			return pod
		}
		first := member("first")
		if got := getPod(t, c, first); got.Spec.SchedulingGroup == nil {
			t.Fatal("the API server dropped the pod's spec.schedulingGroup")
		}
		// A pod of no gang, created after it, is bound: the scheduler has taken the first in,
		// and held it back rather than bind it.
		probe := samplePod(ns, "probe", nil)
		probe.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
		if got := cluster.Probe(t, c, probe); got.Spec.NodeName == "" {
			t.Fatalf("the probe pod, which fits anywhere, was not bound: %+v", got.Status.Conditions)
		}
		if got := getPod(t, c, first); got.Spec.NodeName != "" || cluster.Unschedulable(got) {
			t.Fatalf("the first pod of a gang of 2 was tried on its own: bound to %q, conditions %+v", got.Spec.NodeName, got.Status.Conditions)
		}
		second := member("second")
		for _, pod := range []*corev1.Pod{first, second} {
			cluster.Eventually(t, 30*time.Second, pod.Name+" to be bound", func() (bool, error) {
				return getPod(t, c, pod).Spec.NodeName != "", nil
			})
		}
	})

	t.Run("up without the flag reuses the cluster and keeps the Workload API", func(t *testing.T) {
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
		if _, err := cluster.Up(ctx, state, "--workload-api"); err != nil {
			t.Errorf("up --workload-api on a cluster started with it: %v", err)
		}
		if got := workloadResources(t, clientset); len(got) != 2 {
			t.Errorf("after reuse, scheduling.k8s.io/v1beta1 serves %v", got)
		}
	})
}

// workloadResources lists the resources that the API server serves in scheduling.k8s.io/v1beta1
// (none when it does not serve that version), subresources left out, sorted.
func workloadResources(t *testing.T, cs kubernetes.Interface) []string {
	t.Helper()
	var names []string
	list, err := cs.Discovery().ServerResourcesForGroupVersion(schedulingv1beta1.SchemeGroupVersion.String())
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatalf("discovery of %s: %v", schedulingv1beta1.SchemeGroupVersion, err)
	}
	for _, r := range list.APIResources {
		if !strings.Contains(r.Name, "/") {
			names = append(names, r.Name)
		}
	}
	slices.Sort(names)
	return names
}

// cmdline returns the arguments of a component the cluster in state runs.
// TestLocalClusterSparkScheduler starts a cluster of its own with --spark-scheduler and checks
// that its scheduler is spark-scheduler with the SparkReservations plugin in its profile, and
// that the state folder remembers it.
func TestLocalClusterSparkScheduler(t *testing.T) {
	ctx := context.Background()
	state := filepath.Join(t.TempDir(), "cluster")
	if _, err := cluster.Up(ctx, state, "--spark-scheduler", "--nodes", "1"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Down(context.Background(), state) })
	if args := cmdline(t, state, "kube-scheduler"); filepath.Base(args[0]) != "spark-scheduler" {
		t.Errorf("the cluster's scheduler runs %s, want spark-scheduler", args[0])
	}
	if plugins := schedulerPlugins(t, state); !slices.Contains(plugins, "SparkReservations") {
		t.Errorf("the scheduler's multiPoint plugins are %v, without SparkReservations", plugins)
	}
	before := readPids(t, state)
	if _, err := cluster.Up(ctx, state); err != nil {
		t.Fatalf("up again: %v", err)
	}
	if after := readPids(t, state); !slices.Equal(before, after) {
		t.Errorf("up again restarted components: pids %v -> %v", before, after)
	}
	if args := cmdline(t, state, "kube-scheduler"); filepath.Base(args[0]) != "spark-scheduler" {
		t.Errorf("after up again the scheduler runs %s, want spark-scheduler", args[0])
	}
}

func cmdline(t *testing.T, state, component string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(state, "pids", component+".pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatalf("%s (pid %d) is not running: %v", component, pid, err)
	}
	return strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
}

// schedulerPlugins asks kube-scheduler's /configz for the multiPoint plugins of its first
// profile: the effective set, defaults and feature gates applied. It authenticates with the
// cluster's admin client certificate; the scheduler's serving certificate is self-signed.
func schedulerPlugins(t *testing.T, state string) []string {
	t.Helper()
	args := cmdline(t, state, "kube-scheduler")
	i := slices.Index(args, "--secure-port")
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("kube-scheduler has no --secure-port: %v", args)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(state, "pki", "admin.crt"), filepath.Join(state, "pki", "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		Certificates:       []tls.Certificate{cert},
		InsecureSkipVerify: true, //nolint:gosec // the scheduler's own self-signed serving certificate, on 127.0.0.1
	}}}
	// Just after its start the scheduler may not have read the cluster's client CA yet, and
	// takes the certificate for an anonymous user: asked again until it knows it.
	var body []byte
	cluster.Eventually(t, 30*time.Second, "kube-scheduler's /configz", func() (bool, error) {
		resp, err := hc.Get("https://127.0.0.1:" + args[i+1] + "/configz")
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		if body, err = io.ReadAll(resp.Body); err != nil {
			return false, err
		}
		switch resp.StatusCode {
		case http.StatusOK:
			return true, nil
		case http.StatusUnauthorized, http.StatusForbidden:
			return false, nil
		}
		return false, fmt.Errorf("kube-scheduler /configz: %s: %s", resp.Status, body)
	})
	var configz struct {
		ComponentConfig struct {
			Profiles []struct {
				Plugins struct {
					MultiPoint struct {
						Enabled []struct{ Name string } `json:"enabled"`
					} `json:"multiPoint"`
				} `json:"plugins"`
			} `json:"profiles"`
		} `json:"componentconfig"`
	}
	if err := json.Unmarshal(body, &configz); err != nil {
		t.Fatalf("kube-scheduler /configz: %v: %s", err, body)
	}
	if len(configz.ComponentConfig.Profiles) == 0 {
		t.Fatalf("kube-scheduler /configz has no profile: %s", body)
	}
	var names []string
	for _, p := range configz.ComponentConfig.Profiles[0].Plugins.MultiPoint.Enabled {
		names = append(names, p.Name)
	}
	return names
}
