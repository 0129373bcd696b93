package main

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
