package testenv

import (
	"testing"
)

// recorder is a testing.TB that records how a test was stopped instead of stopping it.
type recorder struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recorder) Helper() {}
func (r *recorder) Skip(args ...any) {
	r.skipped, r.msg = true, args[0].(string)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = true
}

func TestMissing(t *testing.T) {
	for _, tc := range []struct {
		ci                 string
		wantSkip, wantFail bool
	}{
		{ci: "", wantSkip: true},
		{ci: "false", wantSkip: true},
		{ci: "no", wantSkip: true},
		{ci: "true", wantFail: true},
		{ci: "1", wantFail: true},
	} {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			r := &recorder{TB: t}
			Missing(r, "%s is missing", "the reference")
			if r.skipped != tc.wantSkip || r.failed != tc.wantFail {
				t.Errorf("skipped=%v failed=%v, want skipped=%v failed=%v", r.skipped, r.failed, tc.wantSkip, tc.wantFail)
			}
			if r.skipped && r.msg != "the reference is missing" {
				t.Errorf("skip message %q", r.msg)
			}
		})
	}
}
