package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCase is a stream, testreport's arguments, and what it should print and return.
type runCase struct {
	name   string
	args   []string
	stdin  string
	stdout string
	status int
}

// verboseCases run with no -quiet or -summary-only flag.
var verboseCases = []runCase{{
	name:  "passing package",
	stdin: passingStream,
	stdout: passingEcho + `
slowest packages:
  1.2s  ` + config + `
packages: 1 ok, 0 failed; total 1.2s
tests: 1 passed, 0 failed, 1 skipped
`,
	status: 0,
}, {
	name:  "failing test",
	stdin: failingStream,
	stdout: failingEcho + `
slowest packages:
  12.5s  ` + controller + `
failed packages:
  ` + controller + `
packages: 0 ok, 1 failed; total 12.5s
tests: 1 passed, 1 failed, 0 skipped
`,
	status: 1,
}, {
	name:  "build failure",
	stdin: buildFailStream,
	stdout: buildFailEcho + `
slowest packages:
  0.0s  ` + webhook + `
failed packages:
  ` + webhook + ` (build failed)
packages: 0 ok, 1 failed; total 0.0s
tests: 0 passed, 0 failed, 0 skipped
`,
	status: 1,
}, {
	name:  "package with no test files",
	stdin: noTestsStream,
	stdout: noTestsEcho + `
slowest packages:
  (none finished)
packages: 0 ok, 0 failed, 1 without test files; total 0.0s
tests: 0 passed, 0 failed, 0 skipped
`,
	status: 0,
}, {
	name:  "truncated stream",
	stdin: truncatedStream,
	stdout: "=== RUN   TestGang\n" + truncatedStream[strings.LastIndex(truncatedStream, "\n")+1:] + `

slowest packages:
  (none finished)
did not finish:
  ` + gang + `
no package result seen: the stream was empty or cut short
packages: 0 ok, 0 failed, 1 did not finish; total 0.0s
tests: 0 passed, 0 failed, 0 skipped
`,
	status: 1,
}, {
	name:  "empty stream",
	stdin: "",
	stdout: `
slowest packages:
  (none finished)
no package result seen: the stream was empty or cut short
packages: 0 ok, 0 failed; total 0.0s
tests: 0 passed, 0 failed, 0 skipped
`,
	status: 1,
}, {
	name:  "whole run with a label",
	args:  []string{"-label", "main module"},
	stdin: noTestsStream + passingStream + failingStream + buildFailStream,
	stdout: noTestsEcho + passingEcho + failingEcho + buildFailEcho + `
slowest packages (main module):
  12.5s  ` + controller + `
   1.2s  ` + config + `
   0.0s  ` + webhook + `
failed packages:
  ` + controller + `
  ` + webhook + ` (build failed)
packages: 1 ok, 2 failed, 1 without test files; total 13.7s
tests: 2 passed, 1 failed, 1 skipped
`,
	status: 1,
}, {
	name:  "plain text lines are echoed",
	stdin: "go: downloading example.com/x v1.0.0\n" + passingStream + "not json {\n",
	stdout: "go: downloading example.com/x v1.0.0\n" + passingEcho + "not json {\n" + `
slowest packages:
  1.2s  ` + config + `
packages: 1 ok, 0 failed; total 1.2s
tests: 1 passed, 0 failed, 1 skipped
`,
	status: 0,
}, {
	name: "build failure cut short before the package result",
	stdin: `{"ImportPath":"` + webhook + `","Action":"build-output","Output":"# ` + webhook + `\n"}
{"ImportPath":"` + webhook + `","Action":"build-fail"}
` + passingStream,
	stdout: "# " + webhook + "\n" + passingEcho + `
slowest packages:
  1.2s  ` + config + `
failed packages:
  ` + webhook + ` (build failed)
packages: 1 ok, 0 failed; total 1.2s
tests: 1 passed, 0 failed, 1 skipped
`,
	status: 1,
}, {
	name: "a test failure after its package passed",
	stdin: passingStream + `{"Action":"fail","Package":"` + config + `","Test":"TestLate","Elapsed":0}
`,
	stdout: passingEcho + `
slowest packages:
  1.2s  ` + config + `
packages: 1 ok, 0 failed; total 1.2s
tests: 1 passed, 1 failed, 1 skipped
`,
	status: 1,
}, {
	name: "output of a package that never ends",
	stdin: passingStream + `{"Action":"output","Package":"` + gang + `","Output":"still going\n"}
`,
	stdout: passingEcho + "still going\n" + `
slowest packages:
  1.2s  ` + config + `
did not finish:
  ` + gang + `
packages: 1 ok, 0 failed, 1 did not finish; total 1.2s
tests: 1 passed, 0 failed, 1 skipped
`,
	status: 1,
}, {
	name:  "subtests",
	stdin: subtestStream,
	stdout: `=== RUN   TestA
    a_test.go:10: setup
=== RUN   TestA/ok
    a_test.go:12: fine
=== PAUSE TestA/ok
=== RUN   TestA/bad
=== PAUSE TestA/bad
=== CONT  TestA/ok
=== CONT  TestA/bad
    a_test.go:15: boom
=== NAME  TestA/ok
    a_test.go:13: still fine
    --- PASS: TestA/ok (0.00s)
    --- FAIL: TestA/bad (0.00s)
--- FAIL: TestA (0.00s)
FAIL
FAIL	` + scheduler + `	0.512s

slowest packages:
  0.5s  ` + scheduler + `
failed packages:
  ` + scheduler + `
packages: 0 ok, 1 failed; total 0.5s
tests: 0 passed, 1 failed, 0 skipped
`,
	status: 1,
}}

// quietCases run with -quiet.
var quietCases = []runCase{{
	name:  "passing package",
	stdin: passingStream,
	stdout: "PASS\nok  \t" + config + "\t1.234s\n" + `
slowest packages:
  1.2s  ` + config + `
packages: 1 ok, 0 failed; total 1.2s
tests: 1 passed, 0 failed, 1 skipped
`,
	status: 0,
}, {
	name:  "failing test",
	stdin: failingStream,
	stdout: "    f_test.go:4: boom\n--- FAIL: TestBad (0.00s)\nFAIL\n" +
		"FAIL\t" + controller + "\t12.503s\n" + `
slowest packages:
  12.5s  ` + controller + `
failed packages:
  ` + controller + `
packages: 0 ok, 1 failed; total 12.5s
tests: 1 passed, 1 failed, 0 skipped
`,
	status: 1,
}, {
	name:  "build failure",
	stdin: buildFailStream,
	stdout: buildFailEcho + `
slowest packages:
  0.0s  ` + webhook + `
failed packages:
  ` + webhook + ` (build failed)
packages: 0 ok, 1 failed; total 0.0s
tests: 0 passed, 0 failed, 0 skipped
`,
	status: 1,
}, {
	name:  "failing subtest",
	stdin: subtestStream,
	stdout: subtestQuietEcho + `
slowest packages:
  0.5s  ` + scheduler + `
failed packages:
  ` + scheduler + `
packages: 0 ok, 1 failed; total 0.5s
tests: 0 passed, 1 failed, 0 skipped
`,
	status: 1,
}, {
	name:  "test binary timed out",
	stdin: timeoutStream,
	stdout: timeoutQuietEcho + `
slowest packages:
  2400.0s  ` + gang + `
failed packages:
  ` + gang + `
packages: 0 ok, 1 failed; total 2400.0s
tests: 0 passed, 0 failed, 0 skipped
`,
	status: 1,
}, {
	name:  "truncated stream",
	stdin: truncatedStream,
	stdout: truncatedStream[strings.LastIndex(truncatedStream, "\n")+1:] + `
--- NOT FINISHED: TestGang in ` + gang + `

slowest packages:
  (none finished)
did not finish:
  ` + gang + `
no package result seen: the stream was empty or cut short
packages: 0 ok, 0 failed, 1 did not finish; total 0.0s
tests: 0 passed, 0 failed, 0 skipped
`,
	status: 1,
}, {
	name:  "stream cut short while tests run, after a passing package",
	stdin: passingStream + hangingStream,
	stdout: "PASS\nok  \t" + config + "\t1.234s\n" + hangingQuietEcho + `
slowest packages:
  1.2s  ` + config + `
did not finish:
  ` + gang + `
packages: 1 ok, 0 failed, 1 did not finish; total 1.2s
tests: 1 passed, 0 failed, 1 skipped
`,
	status: 1,
}, {
	name:  "whole run, plain text lines",
	args:  []string{"-label", "main module"},
	stdin: "go: downloading example.com/x v1.0.0\n" + noTestsStream + passingStream + failingStream + buildFailStream,
	stdout: "go: downloading example.com/x v1.0.0\n" + noTestsEcho +
		"PASS\nok  \t" + config + "\t1.234s\n" +
		"    f_test.go:4: boom\n--- FAIL: TestBad (0.00s)\nFAIL\nFAIL\t" + controller + "\t12.503s\n" +
		buildFailEcho + `
slowest packages (main module):
  12.5s  ` + controller + `
   1.2s  ` + config + `
   0.0s  ` + webhook + `
failed packages:
  ` + controller + `
  ` + webhook + ` (build failed)
packages: 1 ok, 2 failed, 1 without test files; total 13.7s
tests: 2 passed, 1 failed, 1 skipped
`,
	status: 1,
}}

// halvesSummary is what one package's two halves, one failing, sum to in either order.
var halvesSummary = `
slowest packages:
  12.5s  ` + controller + `
failed packages:
  ` + controller + `
packages: 0 ok, 1 failed; total 12.5s
tests: 2 passed, 1 failed, 1 skipped
`

// summaryOnlyCases run with -summary-only.
var summaryOnlyCases = []runCase{{
	name: "over several streams",
	args: []string{"-label", "all"},
	stdin: "go: downloading example.com/x v1.0.0\n" + noTestsStream + passingStream + failingStream +
		buildFailStream + timeoutStream + subtestStream,
	stdout: `
slowest packages (all):
  2400.0s  ` + gang + `
    12.5s  ` + controller + `
     1.2s  ` + config + `
     0.5s  ` + scheduler + `
     0.0s  ` + webhook + `
failed packages:
  ` + controller + `
  ` + webhook + ` (build failed)
  ` + gang + `
  ` + scheduler + `
packages: 1 ok, 4 failed, 1 without test files; total 2414.3s
tests: 2 passed, 2 failed, 1 skipped
`,
	status: 1,
}, {
	// A package run in two processes (hack/test.sh's halves): one half's failure stands whichever
	// ends last, its time is the longer half's, and the tests of both are counted.
	name:   "one package in two halves, one failing",
	stdin:  failingStream + strings.ReplaceAll(passingStream, config, controller),
	stdout: halvesSummary,
	status: 1,
}, {
	name:   "one package in two halves, the failing one last",
	stdin:  strings.ReplaceAll(passingStream, config, controller) + failingStream,
	stdout: halvesSummary,
	status: 1,
}, {
	name:  "with the slowest tests",
	args:  []string{"-slowest-tests", "2"},
	stdin: passingStream + failingStream,
	stdout: `
slowest packages:
  12.5s  ` + controller + `
   1.2s  ` + config + `
slowest tests:
  0.0s  TestA (` + config + `)
  0.0s  TestOK (` + controller + `)
failed packages:
  ` + controller + `
packages: 1 ok, 1 failed; total 13.7s
tests: 2 passed, 1 failed, 1 skipped
`,
	status: 1,
}, {
	name:  "passing, with -quiet too",
	args:  []string{"-quiet"},
	stdin: passingStream,
	stdout: `
slowest packages:
  1.2s  ` + config + `
packages: 1 ok, 0 failed; total 1.2s
tests: 1 passed, 0 failed, 1 skipped
`,
	status: 0,
}}

func TestRun(t *testing.T) {
	for _, mode := range []struct {
		flag  string
		cases []runCase
	}{{"", verboseCases}, {"-quiet", quietCases}, {"-summary-only", summaryOnlyCases}} {
		for _, tt := range mode.cases {
			args := tt.args
			name := tt.name
			if mode.flag != "" {
				args = append([]string{mode.flag}, args...)
				name = mode.flag[1:] + "/" + name
			}
			t.Run(name, func(t *testing.T) {
				stdout, stderr, status := runString(tt.stdin, args...)
				if stdout != tt.stdout {
					t.Errorf("stdout:\n%s\nwant:\n%s", stdout, tt.stdout)
				}
				if status != tt.status {
					t.Errorf("exit status %d, want %d (stderr %q)", status, tt.status, stderr)
				}
			})
		}
	}
}

// TestSlowestTen checks that the summary lists only the ten slowest packages, slowest first,
// their seconds aligned on the right.
func TestSlowestTen(t *testing.T) {
	var stdin strings.Builder
	for i := range 12 {
		fmt.Fprintf(&stdin, `{"Action":"pass","Package":"p%02d","Elapsed":%d.04}`+"\n", i, i*i*10)
	}
	stdout, _, status := runString(stdin.String())
	want := `
slowest packages:
  1210.0s  p11
  1000.0s  p10
   810.0s  p09
   640.0s  p08
   490.0s  p07
   360.0s  p06
   250.0s  p05
   160.0s  p04
    90.0s  p03
    40.0s  p02
packages: 12 ok, 0 failed; total 5060.5s
tests: 0 passed, 0 failed, 0 skipped
`
	if stdout != want || status != 0 {
		t.Errorf("status %d, stdout:\n%s\nwant:\n%s", status, stdout, want)
	}
}

// TestSlowestTests checks that -slowest-tests lists that many top-level tests that ended,
// passed or failed, slowest first, whatever their package; skipped tests and subtests are not
// listed.
func TestSlowestTests(t *testing.T) {
	stdin := `{"Action":"pass","Package":"p1","Test":"TestFast","Elapsed":1.5}
{"Action":"pass","Package":"p1","Test":"TestSlow/sub","Elapsed":900}
{"Action":"fail","Package":"p2","Test":"TestSlower","Elapsed":120.25}
{"Action":"skip","Package":"p2","Test":"TestSkipped","Elapsed":500}
{"Action":"pass","Package":"p1","Test":"TestSlow","Elapsed":30}
{"Action":"pass","Package":"p1","Elapsed":32}
{"Action":"fail","Package":"p2","Elapsed":121}
`
	stdout, _, _ := runString(stdin, "-summary-only", "-slowest-tests", "2")
	want := `slowest tests:
  120.2s  TestSlower (p2)
   30.0s  TestSlow (p1)
failed packages:`
	if !strings.Contains(stdout, want) {
		t.Errorf("stdout:\n%s\nwant it to contain:\n%s", stdout, want)
	}
}

// TestLongLine feeds an event far longer than bufio.Scanner's default limit.
func TestLongLine(t *testing.T) {
	long := strings.Repeat("x", 2<<20)
	stdin := `{"Action":"output","Package":"p","Test":"TestLong","Output":"` + long + `\n"}` + "\n" +
		`{"Action":"pass","Package":"p","Elapsed":1}` + "\n"
	stdout, _, status := runString(stdin)
	if !strings.HasPrefix(stdout, long+"\n\nslowest packages:\n") || status != 0 {
		t.Errorf("status %d, stdout does not start with the long output (length %d)", status, len(stdout))
	}
}

// TestQuietHeldMax checks that quiet mode holds at most heldMax bytes of a test's output, the
// newest, says how much it dropped, and keeps a last piece of output longer than that whole.
func TestQuietHeldMax(t *testing.T) {
	var stdin strings.Builder
	emit := func(action, test, output string) {
		line, err := json.Marshal(map[string]string{"Action": action, "Package": "p", "Test": test, "Output": output})
		if err != nil {
			t.Fatal(err)
		}
		stdin.Write(append(line, '\n'))
	}
	piece := func(c string) string { return strings.Repeat(c, heldMax/2) + "\n" } // a bit over half
	for _, c := range []string{"a", "b", "c"} {
		emit("output", "TestBig", piece(c))
		emit("output", "TestQuiet", piece(c)) // passes: all dropped
	}
	emit("output", "TestBig", "--- FAIL: TestBig (0.00s)\n")
	emit("fail", "TestBig", "")
	emit("pass", "TestQuiet", "")
	huge := strings.Repeat("h", heldMax+1) + "\n"
	emit("output", "TestHuge", huge)
	emit("fail", "TestHuge", "")
	emit("output", "", "FAIL\n")

	stdout, _, _ := runString(stdin.String(), "-quiet")
	want := fmt.Sprintf("    [testreport: %d bytes of earlier output dropped]\n", 2*len(piece("a"))) +
		piece("c") + "--- FAIL: TestBig (0.00s)\n" + huge + "FAIL\n\nslowest packages:\n"
	if !strings.HasPrefix(stdout, want) {
		t.Errorf("stdout (%d bytes) does not start with the newest output of TestBig, then TestHuge's, then FAIL", len(stdout))
	}
}

func TestJSONOut(t *testing.T) {
	file := filepath.Join(t.TempDir(), "test.json")
	for range 2 {
		if _, stderr, status := runString(passingStream, "-json-out", file); status != 0 {
			t.Fatalf("exit status %d: %s", status, stderr)
		}
	}
	_, _, _ = runString(truncatedStream, "-json-out", file)
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if want := passingStream + passingStream + truncatedStream + "\n"; string(got) != want {
		t.Errorf("%s holds:\n%s\nwant:\n%s", file, got, want)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-no-such-flag"},
		{"extra"},
		{"-json-out", filepath.Join(t.TempDir(), "missing", "test.json")},
	} {
		if _, stderr, status := runString(passingStream, args...); status != 2 || stderr == "" {
			t.Errorf("%q: exit status %d, stderr %q; want 2 and a message", args, status, stderr)
		}
	}
}

func runString(stdin string, args ...string) (stdout, stderr string, status int) {
	var out, errOut strings.Builder
	status = run(strings.NewReader(stdin), &out, &errOut, args)
	return out.String(), errOut.String(), status
}
