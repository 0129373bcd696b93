package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Streams recorded from `go test -json -count=1` (go1.26), trimmed and renamed.
const (
	passingStream = `{"Time":"2026-11-29T02:27:36.95824804Z","Action":"start","Package":"github.com/sparkop/spark-operator/internal/config"}
{"Time":"2026-11-29T02:27:36.962545409Z","Action":"run","Package":"github.com/sparkop/spark-operator/internal/config","Test":"TestA"}
{"Time":"2026-11-29T02:27:36.962572489Z","Action":"output","Package":"github.com/sparkop/spark-operator/internal/config","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Time":"2026-11-29T02:27:36.962602365Z","Action":"run","Package":"github.com/sparkop/spark-operator/internal/config","Test":"TestA/sub"}
{"Time":"2026-11-29T02:27:36.96260522Z","Action":"output","Package":"github.com/sparkop/spark-operator/internal/config","Test":"TestA/sub","Output":"=== RUN   TestA/sub\n"}
{"Time":"2026-11-29T02:27:36.962611562Z","Action":"output","Package":"github.com/sparkop/spark-operator/internal/config","Test":"TestA/sub","Output":"--- PASS: TestA/sub (0.00s)\n"}
{"Time":"2026-11-29T02:27:36.962731435Z","Action":"pass","Package":"github.com/sparkop/spark-operator/internal/config","Test":"TestA/sub","Elapsed":0}
{"Time":"2026-11-29T02:27:36.962742877Z","Action":"output","Package":"github.com/sparkop/spark-operator/internal/config","Test":"TestA","Output":"--- PASS: TestA (0.00s)\n"}
{"Time":"2026-11-29T02:27:36.962746633Z","Action":"pass","Package":"github.com/sparkop/spark-operator/internal/config","Test":"TestA","Elapsed":0}
{"Time":"2026-11-29T02:27:36.962749699Z","Action":"run","Package":"github.com/sparkop/spark-operator/internal/config","Test":"TestSkip"}
{"Time":"2026-11-29T02:27:36.962755039Z","Action":"output","Package":"github.com/sparkop/spark-operator/internal/config","Test":"TestSkip","Output":"    p_test.go:4: no\n"}
{"Time":"2026-11-29T02:27:36.962758486Z","Action":"output","Package":"github.com/sparkop/spark-operator/internal/config","Test":"TestSkip","Output":"--- SKIP: TestSkip (0.00s)\n"}
{"Time":"2026-11-29T02:27:36.962761641Z","Action":"skip","Package":"github.com/sparkop/spark-operator/internal/config","Test":"TestSkip","Elapsed":0}
{"Time":"2026-11-29T02:27:36.962764557Z","Action":"output","Package":"github.com/sparkop/spark-operator/internal/config","Output":"PASS\n"}
{"Time":"2026-11-29T02:27:36.963193226Z","Action":"output","Package":"github.com/sparkop/spark-operator/internal/config","Output":"ok  \tgithub.com/sparkop/spark-operator/internal/config\t1.234s\n"}
{"Time":"2026-11-29T02:27:36.963206991Z","Action":"pass","Package":"github.com/sparkop/spark-operator/internal/config","Elapsed":1.234}
`
	passingEcho = "=== RUN   TestA\n=== RUN   TestA/sub\n--- PASS: TestA/sub (0.00s)\n--- PASS: TestA (0.00s)\n" +
		"    p_test.go:4: no\n--- SKIP: TestSkip (0.00s)\nPASS\n" +
		"ok  \tgithub.com/sparkop/spark-operator/internal/config\t1.234s\n"

	failingStream = `{"Time":"2026-11-29T02:27:36.716416218Z","Action":"start","Package":"github.com/sparkop/spark-operator/internal/controller"}
{"Time":"2026-11-29T02:27:36.719003324Z","Action":"run","Package":"github.com/sparkop/spark-operator/internal/controller","Test":"TestOK"}
{"Time":"2026-11-29T02:27:36.719229205Z","Action":"pass","Package":"github.com/sparkop/spark-operator/internal/controller","Test":"TestOK","Elapsed":0}
{"Time":"2026-11-29T02:27:36.719234234Z","Action":"run","Package":"github.com/sparkop/spark-operator/internal/controller","Test":"TestBad"}
{"Time":"2026-11-29T02:27:36.71923722Z","Action":"output","Package":"github.com/sparkop/spark-operator/internal/controller","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Time":"2026-11-29T02:27:36.719240145Z","Action":"output","Package":"github.com/sparkop/spark-operator/internal/controller","Test":"TestBad","Output":"    f_test.go:4: boom\n"}
{"Time":"2026-11-29T02:27:36.719243632Z","Action":"output","Package":"github.com/sparkop/spark-operator/internal/controller","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Time":"2026-11-29T02:27:36.719247589Z","Action":"fail","Package":"github.com/sparkop/spark-operator/internal/controller","Test":"TestBad","Elapsed":0}
{"Time":"2026-11-29T02:27:36.719251076Z","Action":"output","Package":"github.com/sparkop/spark-operator/internal/controller","Output":"FAIL\n"}
{"Time":"2026-11-29T02:27:36.719676179Z","Action":"output","Package":"github.com/sparkop/spark-operator/internal/controller","Output":"FAIL\tgithub.com/sparkop/spark-operator/internal/controller\t12.503s\n"}
{"Time":"2026-11-29T02:27:36.719690757Z","Action":"fail","Package":"github.com/sparkop/spark-operator/internal/controller","Elapsed":12.503}
`
	failingEcho = "=== RUN   TestBad\n    f_test.go:4: boom\n--- FAIL: TestBad (0.00s)\nFAIL\n" +
		"FAIL\tgithub.com/sparkop/spark-operator/internal/controller\t12.503s\n"

	buildFailStream = `{"ImportPath":"github.com/sparkop/spark-operator/internal/webhook [github.com/sparkop/spark-operator/internal/webhook.test]","Action":"build-output","Output":"# github.com/sparkop/spark-operator/internal/webhook [github.com/sparkop/spark-operator/internal/webhook.test]\n"}
{"ImportPath":"github.com/sparkop/spark-operator/internal/webhook [github.com/sparkop/spark-operator/internal/webhook.test]","Action":"build-output","Output":"internal/webhook/b_test.go:3:28: undefined: undefined\n"}
{"ImportPath":"github.com/sparkop/spark-operator/internal/webhook [github.com/sparkop/spark-operator/internal/webhook.test]","Action":"build-fail"}
{"Time":"2026-11-29T02:27:36.43122458Z","Action":"start","Package":"github.com/sparkop/spark-operator/internal/webhook"}
{"Time":"2026-11-29T02:27:36.431437567Z","Action":"output","Package":"github.com/sparkop/spark-operator/internal/webhook","Output":"FAIL\tgithub.com/sparkop/spark-operator/internal/webhook [build failed]\n"}
{"Time":"2026-11-29T02:27:36.431446363Z","Action":"fail","Package":"github.com/sparkop/spark-operator/internal/webhook","Elapsed":0,"FailedBuild":"github.com/sparkop/spark-operator/internal/webhook [github.com/sparkop/spark-operator/internal/webhook.test]"}
`
	buildFailEcho = "# github.com/sparkop/spark-operator/internal/webhook [github.com/sparkop/spark-operator/internal/webhook.test]\n" +
		"internal/webhook/b_test.go:3:28: undefined: undefined\n" +
		"FAIL\tgithub.com/sparkop/spark-operator/internal/webhook [build failed]\n"

	noTestsStream = `{"Time":"2026-11-29T02:27:36.733849492Z","Action":"start","Package":"github.com/sparkop/spark-operator/apis/v1beta2"}
{"Time":"2026-11-29T02:27:36.733871022Z","Action":"output","Package":"github.com/sparkop/spark-operator/apis/v1beta2","Output":"?   \tgithub.com/sparkop/spark-operator/apis/v1beta2\t[no test files]\n"}
{"Time":"2026-11-29T02:27:36.733878045Z","Action":"skip","Package":"github.com/sparkop/spark-operator/apis/v1beta2","Elapsed":0}
`
	noTestsEcho = "?   \tgithub.com/sparkop/spark-operator/apis/v1beta2\t[no test files]\n"

	// truncatedStream stops in the middle of an event, as when go test is killed.
	truncatedStream = `{"Time":"2026-11-29T02:28:00Z","Action":"start","Package":"github.com/sparkop/spark-operator/test/gang"}
{"Time":"2026-11-29T02:28:00Z","Action":"run","Package":"github.com/sparkop/spark-operator/test/gang","Test":"TestGang"}
{"Time":"2026-11-29T02:28:00Z","Action":"output","Package":"github.com/sparkop/spark-operator/test/gang","Test":"TestGang","Output":"=== RUN   TestGang\n"}
{"Time":"2026-11-29T02:28:09Z","Action":"output","Package":"github.com/sparkop/spark-operator/test/gang","Test":"TestGang","Outp`

	// Streams written by hand in test2json's format.

	// subtestStream has a failing parallel subtest and a passing one.
	subtestStream = `{"Action":"start","Package":"github.com/sparkop/spark-operator/internal/scheduler"}
{"Action":"run","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA","Output":"    a_test.go:10: setup\n"}
{"Action":"run","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/ok"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/ok","Output":"=== RUN   TestA/ok\n"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/ok","Output":"    a_test.go:12: fine\n"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/ok","Output":"=== PAUSE TestA/ok\n"}
{"Action":"pause","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/ok"}
{"Action":"run","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/bad"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/bad","Output":"=== RUN   TestA/bad\n"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/bad","Output":"=== PAUSE TestA/bad\n"}
{"Action":"pause","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/bad"}
{"Action":"cont","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/ok"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/ok","Output":"=== CONT  TestA/ok\n"}
{"Action":"cont","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/bad"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/bad","Output":"=== CONT  TestA/bad\n"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/bad","Output":"    a_test.go:15: boom\n"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/ok","Output":"=== NAME  TestA/ok\n"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/ok","Output":"    a_test.go:13: still fine\n"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/ok","Output":"    --- PASS: TestA/ok (0.00s)\n"}
{"Action":"pass","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/ok","Elapsed":0}
{"Action":"output","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/bad","Output":"    --- FAIL: TestA/bad (0.00s)\n"}
{"Action":"fail","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA/bad","Elapsed":0}
{"Action":"output","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA","Output":"--- FAIL: TestA (0.00s)\n"}
{"Action":"fail","Package":"github.com/sparkop/spark-operator/internal/scheduler","Test":"TestA","Elapsed":0}
{"Action":"output","Package":"github.com/sparkop/spark-operator/internal/scheduler","Output":"FAIL\n"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/internal/scheduler","Output":"FAIL\tgithub.com/sparkop/spark-operator/internal/scheduler\t0.512s\n"}
{"Action":"fail","Package":"github.com/sparkop/spark-operator/internal/scheduler","Elapsed":0.512}
`
	subtestQuietEcho = "    a_test.go:15: boom\n    --- FAIL: TestA/bad (0.00s)\n" +
		"    a_test.go:10: setup\n--- FAIL: TestA (0.00s)\n" +
		"FAIL\nFAIL\tgithub.com/sparkop/spark-operator/internal/scheduler\t0.512s\n"

	// timeoutStream is a test binary that hit go test's -timeout: its panic is attributed to the
	// running test, which never ends.
	timeoutStream = `{"Action":"start","Package":"github.com/sparkop/spark-operator/test/gang"}
{"Action":"run","Package":"github.com/sparkop/spark-operator/test/gang","Test":"TestGang"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/test/gang","Test":"TestGang","Output":"=== RUN   TestGang\n"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/test/gang","Test":"TestGang","Output":"    gang_test.go:42: waiting for the driver pod\n"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/test/gang","Test":"TestGang","Output":"panic: test timed out after 40m0s\n"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/test/gang","Test":"TestGang","Output":"\trunning tests:\n"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/test/gang","Test":"TestGang","Output":"\t\tTestGang (40m0s)\n"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/test/gang","Output":"FAIL\tgithub.com/sparkop/spark-operator/test/gang\t2400.012s\n"}
{"Action":"fail","Package":"github.com/sparkop/spark-operator/test/gang","Elapsed":2400.012}
`
	timeoutQuietEcho = "--- NOT FINISHED: TestGang in github.com/sparkop/spark-operator/test/gang\n" +
		"    gang_test.go:42: waiting for the driver pod\n" +
		"panic: test timed out after 40m0s\n\trunning tests:\n\t\tTestGang (40m0s)\n" +
		"FAIL\tgithub.com/sparkop/spark-operator/test/gang\t2400.012s\n"

	// hangingStream is cut short while a test and its subtest run.
	hangingStream = `{"Action":"start","Package":"github.com/sparkop/spark-operator/test/gang"}
{"Action":"run","Package":"github.com/sparkop/spark-operator/test/gang","Test":"TestGang"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/test/gang","Test":"TestGang","Output":"=== RUN   TestGang\n"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/test/gang","Test":"TestGang","Output":"    gang_test.go:42: waiting for the driver pod\n"}
{"Action":"run","Package":"github.com/sparkop/spark-operator/test/gang","Test":"TestGang/executors"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/test/gang","Test":"TestGang/executors","Output":"=== RUN   TestGang/executors\n"}
{"Action":"output","Package":"github.com/sparkop/spark-operator/test/gang","Test":"TestGang/executors","Output":"    gang_test.go:50: 0 of 2 executors running\n"}
{"Action":"output","Package":"github.com/sparkop/spark-opera`
	hangingQuietEcho = `{"Action":"output","Package":"github.com/sparkop/spark-opera
--- NOT FINISHED: TestGang in github.com/sparkop/spark-operator/test/gang
    gang_test.go:42: waiting for the driver pod
--- NOT FINISHED: TestGang/executors in github.com/sparkop/spark-operator/test/gang
    gang_test.go:50: 0 of 2 executors running
`
)

// Package names in the streams.
const (
	config     = "github.com/sparkop/spark-operator/internal/config"
	controller = "github.com/sparkop/spark-operator/internal/controller"
	webhook    = "github.com/sparkop/spark-operator/internal/webhook"
	gang       = "github.com/sparkop/spark-operator/test/gang"
	scheduler  = "github.com/sparkop/spark-operator/internal/scheduler"
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
