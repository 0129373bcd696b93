// Package cluster gives Go tests a client for the local control plane that
// hack/local-cluster.sh runs (etcd, kube-apiserver, controller manager, scheduler and kwok
// nodes), starting it the first time a test asks for it in a `go test` run.
//
// The cluster is shared: it stays up after the tests so the next run starts in a second, and
// `make cluster-down` stops it. Tests must therefore use their own namespaces and names.
package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	schedulingv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

const modulePath = "github.com/sparkop/spark-operator"

// Scheme knows the built-in Kubernetes kinds and ours.
var Scheme = newScheme()

// Controllers started by tests log nowhere unless SPARKOP_TEST_LOG is set; without a logger at
// all, controller-runtime prints a stack trace to say so.
func init() {
	if os.Getenv("SPARKOP_TEST_LOG") == "" {
		ctrllog.SetLogger(logr.Discard())
		return
	}
	ctrllog.SetLogger(funcr.New(func(prefix, args string) {
		fmt.Fprintln(os.Stderr, prefix, args)
	}, funcr.Options{Verbosity: 1}))
}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := v1beta2.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := schedulingv1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

var shared struct {
	once       sync.Once
	slotOnce   sync.Once
	kubeconfig string
	err        error
}

// Kubeconfig returns the path of the shared cluster's kubeconfig, starting the cluster if it
// is not up. A cluster that cannot start fails the test: nothing is skipped.
func Kubeconfig(t testing.TB) string {
	t.Helper()
	shared.once.Do(func() {
		shared.kubeconfig, shared.err = Up(context.Background(), "")
	})
	if shared.err != nil {
		t.Fatalf("local cluster: %v", shared.err)
	}
	return shared.kubeconfig
}

// Config returns a REST config for the shared cluster.
func Config(t testing.TB) *rest.Config {
	t.Helper()
	cfg, err := RESTConfig(Kubeconfig(t))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Client returns a controller-runtime client for the shared cluster.
func Client(t testing.TB) client.Client {
	t.Helper()
	c, err := client.New(Config(t), client.Options{Scheme: Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// RESTConfig loads a kubeconfig file, with client rate limits raised for tests.
func RESTConfig(kubeconfig string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	return cfg, nil
}

// Up runs `hack/local-cluster.sh up` for the cluster kept in stateDir (the shared cluster's
// when empty) and returns its kubeconfig path. Extra arguments go to the script.
func Up(ctx context.Context, stateDir string, args ...string) (string, error) {
	out, err := Script(ctx, stateDir, append([]string{"up"}, args...)...)
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	kubeconfig := lines[len(lines)-1]
	if _, err := os.Stat(kubeconfig); err != nil {
		return "", fmt.Errorf("local-cluster.sh up printed %q as its kubeconfig: %w", kubeconfig, err)
	}
	return kubeconfig, nil
}

// Down stops the cluster kept in stateDir.
func Down(ctx context.Context, stateDir string) error {
	_, err := Script(ctx, stateDir, "down")
	return err
}

// Script runs hack/local-cluster.sh with the given arguments for the cluster kept in stateDir
// (the shared cluster's when empty: the script's default, or this process's slot, see SlotsEnv)
// and returns its standard output; on failure the error carries the end of its log output.
func Script(ctx context.Context, stateDir string, args ...string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	if stateDir == "" {
		if stateDir, err = sharedStateDir(); err != nil {
			return "", err
		}
	}
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "local-cluster.sh"), args...)
	cmd.Env = os.Environ()
	if stateDir != "" {
		cmd.Env = append(cmd.Env, "LOCAL_CLUSTER_DIR="+stateDir)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("hack/local-cluster.sh %s: %w\n%s", strings.Join(args, " "), err, Tail(stderr.String(), 40))
	}
	return stdout.String(), nil
}

// RepoRoot finds the repository root from the working directory of the test.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.HasPrefix(string(data), "module "+modulePath+"\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of module %s above the working directory", modulePath)
		}
		dir = parent
	}
}

// Namespace creates a namespace with a generated name for one test and deletes it when the
// test ends. It waits for the default service account, which pods need.
func Namespace(t testing.TB, c client.Client, prefix string) string {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ns) })
	Eventually(t, 30*time.Second, "default service account in "+ns.Name, func() (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, client.IgnoreNotFound(err)
	})
	return ns.Name
}

// Eventually polls cond until it returns true, failing the test when it returns an error or
// when timeout passes. what names the awaited condition in the failure. The polls come every
// 100 ms at first and then further apart (PollInterval).
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(PollInterval(time.Since(start)))
	}
}

// PollInterval is how long Eventually waits before its next poll, having waited for waited:
// 100 ms for the first second, for what comes at once; then a tenth of the time waited, up to a
// second. A condition met is seen within a tenth of the wait so far (and a second), and a wait
// of minutes, for a JVM on a busy machine, does not ask the API server ten times a second all
// along: on 2 cores those requests took CPU from what the tests waited for.
func PollInterval(waited time.Duration) time.Duration {
	const first, longest = 100 * time.Millisecond, time.Second
	return min(longest, max(first, waited/10))
}

// Tail is the last lines of s.
func Tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// StartManager runs mgr until the test ends, and fails the test if it stopped with an error.
func StartManager(t testing.TB, mgr manager.Manager) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		Stopped(t, done, "manager")
	})
}

// Clients connects to the cluster of kubeconfig: a controller-runtime client with the
// project's scheme, and a clientset for what it does not cover (discovery, raw paths).
func Clients(t testing.TB, kubeconfig string) (client.Client, kubernetes.Interface) {
	t.Helper()
	cfg, err := RESTConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: Scheme})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, cs
}

// InCache waits until cached, a controller's client reading its informers, holds obj as the API
// server stores it (the same resourceVersion), so that what the controller does next sees it.
func InCache(t testing.TB, c client.Client, cached client.Reader, obj client.Object) {
	t.Helper()
	key := client.ObjectKeyFromObject(obj)
	Eventually(t, 20*time.Second, "the controller's cache to have "+key.Name+" as stored", func() (bool, error) {
		stored, inCache := obj.DeepCopyObject().(client.Object), obj.DeepCopyObject().(client.Object)
		if err := c.Get(context.Background(), key, stored); err != nil {
			return false, err
		}
		if err := cached.Get(context.Background(), key, inCache); err != nil {
			return false, err
		}
		return inCache.GetResourceVersion() == stored.GetResourceVersion(), nil
	})
}
