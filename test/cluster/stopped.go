package cluster

import (
	"bytes"
	"context"
	"net/http"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// StopTimeout is how long Stopped waits for a manager to stop. A loaded machine has taken more
// than 30 s; a manager still running after this much has a runnable that does not end.
const StopTimeout = 5 * time.Minute

// Stopped waits for the result of a manager's Start, sent on done once its context is
// cancelled, and reports an error it returns to t. A manager that has not stopped within
// StopTimeout fails t with every goroutine's stack, which shows the runnable that does not
// end, instead of hanging the package until go test's own timeout.
func Stopped(t testing.TB, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	case <-time.After(StopTimeout):
		var stacks bytes.Buffer
		if err := pprof.Lookup("goroutine").WriteTo(&stacks, 2); err != nil {
			t.Logf("goroutine stacks: %v", err)
		}
		t.Fatalf("%s still running %s after it was told to stop; every goroutine:\n%s", what, StopTimeout, stacks.String())
	}
}

// StopSignal is a runnable in a manager's group of those that need no leader (caches of their
// own, cert-controller's rotator): it closes its channel when the manager tells that group to
// stop, so that a test can hold a request at the client until then.
type StopSignal chan struct{}

func (s StopSignal) Start(ctx context.Context) error {
	<-ctx.Done()
	close(s)
	return nil
}

func (StopSignal) NeedLeaderElection() bool { return false }

// HoldFirst returns a copy of cfg whose first request that match accepts waits at the client
// until release is closed, and a channel closed when that request comes: a test holds a
// component's first read until, say, its manager is told to stop (StopSignal).
func HoldFirst(cfg *rest.Config, match func(*http.Request) bool, release <-chan struct{}) (*rest.Config, <-chan struct{}) {
	held := make(chan struct{})
	var first sync.Once
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if match(req) {
				first.Do(func() {
					close(held)
					<-release
				})
			}
			return rt.RoundTrip(req)
		})
	})
	return cfg, held
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
