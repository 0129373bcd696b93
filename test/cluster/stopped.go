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
	"sigs.k8s.io/controller-runtime/pkg/manager"
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

// StartHeld starts mgr with ctx and waits for held, the request HoldFirst holds: at most 2
// minutes, else it cancels ctx, waits for mgr to stop and fails the test, saying that what (the
// held request, in words) never came. It returns the channel mgr's Start returns on, for Stopped.
func StartHeld(t testing.TB, ctx context.Context, cancel context.CancelFunc, mgr manager.Manager, held <-chan struct{}, what string) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	select {
	case <-held:
	case <-time.After(2 * time.Minute):
		cancel()
		Stopped(t, done, "manager")
		t.Fatalf("%s never came", what)
	}
	return done
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
