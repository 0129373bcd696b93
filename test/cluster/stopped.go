package cluster

import (
	"bytes"
	"runtime/pprof"
	"testing"
	"time"
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
