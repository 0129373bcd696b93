package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/test/cluster"
)

// TestWebhookRestartRefusesNothing replaces the webhook process three times, as a Deployment's
// rolling update with maxUnavailable 0 does (the new replica started, the old one stopped once
// the new one is ready), while a loop creates SparkApplications with the webhook registered
// with failure policy Fail: no creation may fail. Each replica listens on a port of its own and
// registers the configurations by URL, so the API server turns to the new one exactly when it
// registers them: a replica must not do so, nor report ready, before it answers TLS with the
// certificate already in the Secret.
func TestWebhookRestartRefusesNothing(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "e2e-webhook-restart")
	configName := webhookConfigFor(t, c, "e2e-webhook-restart-"+ns)
	start := func(i int) *cluster.Operator {
		return startWebhookProcess(t, i, ns, configName, strconv.Itoa(cluster.FreePort(t)), t.TempDir())
	}
	current := start(0)
	waitWebhookCalled(t, c, ns)

	stop := make(chan struct{})
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		created  int
		failures []string
	)
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			app := cluster.SparkPi(ns, fmt.Sprintf("app-%05d", i))
			app.Spec.Suspend = ptr.To(true)
			err := c.Create(ctx, app)
			mu.Lock()
			if err != nil {
				failures = append(failures, fmt.Sprintf("%s at %s: %v", app.Name, time.Now().Format("15:04:05.000"), err))
			} else {
				created++
			}
			mu.Unlock()
			time.Sleep(10 * time.Millisecond) // the pace of the loop, not a wait for a condition
		}
	})
	stopLoop := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopLoop() // also when the test fails before the end
	for i := 1; i <= 3; i++ {
		next := start(i)
		current.Stop()
		current = next
		t.Logf("restart %d done at %s", i, time.Now().Format("15:04:05.000"))
	}
	// Creations against the last replica alone, its predecessor stopped.
	waitMore(t, &mu, "creations after the last restart", func() int { return created + len(failures) })
	stopLoop()
	t.Logf("%d applications created, %d refused", created, len(failures))
	if created == 0 {
		t.Fatal("no application was created")
	}
	for _, f := range failures {
		t.Errorf("creation failed: %s", f)
	}
}

// TestWebhookProcessRestartedServesAtOnce stops the one webhook process and starts it again on
// the same port, as a single replica restarted in place is, while a loop creates
// SparkApplications with failure policy Fail. While no process runs, creations are refused
// (nothing answers: that is what one replica means); from the moment the new process is ready,
// none may be, and none is ever refused for want of a serving certificate: the one in the Secret
// is served at once.
func TestWebhookProcessRestartedServesAtOnce(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "e2e-webhook-inplace")
	configName := webhookConfigFor(t, c, "e2e-webhook-inplace-"+ns)
	port := strconv.Itoa(cluster.FreePort(t))
	certDir := t.TempDir()
	start := func(i int) *cluster.Operator {
		return startWebhookProcess(t, i, ns, configName, port, certDir)
	}
	current := start(0)
	waitWebhookCalled(t, c, ns)

	var (
		mu      sync.Mutex
		ready   bool // the new process is ready: from now on nothing may fail
		epoch   int  // counts the changes of ready: a request that spans one saw a stop begin
		created int
		down    int // refused while no process ran
		served  int // requests sent and answered while the new process was ready throughout
		bad     []string
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			app := cluster.SparkPi(ns, fmt.Sprintf("app-%05d", i))
			app.Spec.Suspend = ptr.To(true)
			mu.Lock()
			readyWhenSent, sent := ready, epoch
			mu.Unlock()
			err := c.Create(ctx, app)
			mu.Lock()
			// Only a request that started and ended while the new process was ready, no stop
			// begun in between, must succeed.
			readyThroughout := readyWhenSent && epoch == sent
			if readyThroughout {
				served++
			}
			switch {
			case err == nil:
				created++
			case strings.Contains(err.Error(), "serving certificate"), readyThroughout:
				bad = append(bad, fmt.Sprintf("%s at %s: %v", app.Name, time.Now().Format("15:04:05.000"), err))
			default:
				down++
			}
			mu.Unlock()
			time.Sleep(10 * time.Millisecond) // the pace of the loop, not a wait for a condition
		}
	})
	stopLoop := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopLoop() // also when the test fails before the end
	for i := 1; i <= 2; i++ {
		current.Stop()
		current = start(i)
		mu.Lock()
		ready = true
		epoch++
		mu.Unlock()
		waitMore(t, &mu, fmt.Sprintf("creations against restarted process %d", i), func() int { return served })
		mu.Lock()
		ready = false
		epoch++
		mu.Unlock()
	}
	stopLoop()
	t.Logf("%d applications created, %d refused while no process ran", created, down)
	if created == 0 {
		t.Fatal("no application was created")
	}
	for _, b := range bad {
		t.Errorf("creation failed with the webhook process up, or for a certificate: %s", b)
	}
}

// afterRestart is how many creations a restart test sends to a restarted webhook process before
// it goes on.
const afterRestart = 20

// waitMore waits until count, read under mu, has grown by afterRestart from what it is now:
// the creation loop has sent that many more requests (at its own pace).
func waitMore(t *testing.T, mu *sync.Mutex, what string, count func() int) {
	t.Helper()
	mu.Lock()
	from := count()
	mu.Unlock()
	cluster.Eventually(t, time.Minute, fmt.Sprintf("%d %s", afterRestart, what), func() (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return count() >= from+afterRestart, nil
	})
}

// webhookConfigFor names the webhook configurations a test's webhook processes register, and
// removes them when the test ends.
func webhookConfigFor(t *testing.T, c client.Client, name string) string {
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}})
		_ = c.Delete(context.Background(), &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	return name
}

// startWebhookProcess starts the i-th webhook-only operator process for namespace ns, failure
// policy Fail, registering configName by URL on port, its certificates kept in certDir.
func startWebhookProcess(t *testing.T, i int, ns, configName, port, certDir string) *cluster.Operator {
	return cluster.StartOperator(t, fmt.Sprintf("webhook-%d", i), "--kubeconfig", cluster.Kubeconfig(t), "--namespaces", ns,
		"--enable-controller=false", "--enable-webhook", "--webhook-failure-policy=Fail",
		"--webhook-url-host", "localhost", "--webhook-port", port,
		"--webhook-secret-namespace", ns, "--webhook-config-name", configName, "--webhook-cert-dir", certDir,
		"-logtostderr", "-v=1")
}

// waitWebhookCalled waits until the API server calls the webhook for ns: an application it
// refuses is refused.
func waitWebhookCalled(t *testing.T, c client.Client, ns string) {
	cluster.Eventually(t, 30*time.Second, "the API server to call the webhook", func() (bool, error) {
		bad := cluster.SparkPi(ns, "probe")
		bad.Spec.SparkConf = map[string]string{"spark.master": "local"}
		err := c.Create(context.Background(), bad, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "spark.master"), nil
	})
}
