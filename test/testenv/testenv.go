// Package testenv decides what a test does when something it needs from outside the
// repository is missing (the reference material or third-party source beside it, a tool):
// on a developer's clone it skips, saying what is missing and how to get it; under CI
// (CI=true, as .ci/run runs) it fails, so that no run passes by not running.
package testenv

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

// InCI reports whether the tests run under CI: the CI variable set to a true value, as CI
// systems (and this project's CI) set it.
func InCI() bool {
	ci, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && ci
}

// Missing stops the test because a prerequisite is missing: a skip on a developer's clone, a
// failure under CI. The message says what is missing and how to provide it.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("%s (a failure, not a skip, under CI=true: CI must run every test)", msg)
		return
	}
	t.Skip(msg)
}
