// Command testreport owns the summary at the end of `make test`: it reads the event stream of
// `go test -json` (cmd/test2json's format) on standard input, echoes every event's Output text
// to standard output as it arrives, and at the end of the stream prints the ten slowest
// packages, the failed packages and the counts of packages and tests. The summary's last two
// lines are
//
//	packages: N ok, N failed[, N did not finish][, N without test files]; total X.Xs
//	tests: N passed, N failed, N skipped
//
// `go test -json` always runs the tests verbosely, so the echo is what `go test -v` prints.
// With -quiet it is what plain `go test` prints instead: a test's output is held back until the
// test ends, written if it failed and dropped if it passed or was skipped; the === RUN, PAUSE,
// CONT and NAME lines are dropped. Package-level output (PASS, FAIL, the ok line, a panic
// outside any test), build output and lines that are not events are echoed as they come. The
// output held for tests that never ended (a test binary that timed out or was killed, a stream
// cut short) is written, under a "--- NOT FINISHED:" line per test, when their package's final
// PASS or FAIL line arrives, or at the end of the stream before the summary. A failing
// subtest's output is written when it fails, before its parent's. What one test holds is
// bounded: past 4 MiB its oldest output is dropped, and a note says how much. (Benchmark
// results count as a passing test's output: -quiet is not for -bench.)
//
// With -summary-only nothing is echoed, only the summary is printed, e.g. one summary over
// several saved streams:
//
//	cat .cache/unit.json .cache/e2e.json | go run ./hack/testreport -summary-only -label all
//
// With -slowest-tests N the summary also lists the N slowest top-level tests that ended, after
// the packages.
//
// Test counts are of top-level tests only: a subtest's failure also fails its parent, and
// table-driven tests would otherwise swamp the figures.
//
// It exits 1 if a package or test failed, a build failed, a package started but never finished,
// or no package result was seen at all (an empty or cut-short stream is not a success).
//
//	go test -json ./... | go run ./hack/testreport -quiet -label "main module" -json-out .cache/test.json
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// slowestShown is how many of the slowest packages the summary lists.
const slowestShown = 10

// Package results, from the package-level pass, fail and skip events.
const (
	resultNone    = ""        // no package-level result yet: the package did not finish
	resultOK      = "ok"      // pass
	resultFail    = "FAIL"    // fail, a failed build included
	resultNoTests = "skipped" // skip: no test files
)

// event is the part of a test2json event that testreport reads.
type event struct {
	Action      string
	Package     string
	ImportPath  string // build-output and build-fail events name the package built here
	Test        string
	Elapsed     float64
	Output      string
	FailedBuild string
}

// testTime is how long one top-level test ran, to its pass or failure.
type testTime struct {
	pkg, name string
	elapsed   float64
}

// pkg is what the stream said about one package.
type pkg struct {
	name                    string
	result                  string
	elapsed                 float64
	failedBuild             string
	passed, failed, skipped int // top-level tests
}

// report gathers the events of one stream.
type report struct {
	pkgs       map[string]*pkg
	order      []string // package names in the order they first appeared
	buildFails []string // ImportPath of every build-fail event
	tests      []testTime
	readErr    error
}

func main() {
	os.Exit(run(os.Stdin, os.Stdout, os.Stderr, os.Args[1:]))
}

// run reads a test2json stream from stdin, echoes its output and prints the summary to stdout,
// and returns the exit status.
func run(stdin io.Reader, stdout, stderr io.Writer, args []string) int {
	flags := flag.NewFlagSet("testreport", flag.ContinueOnError)
	flags.SetOutput(stderr)
	label := flags.String("label", "", "name of the run, printed in the summary header (e.g. \"main module\")")
	jsonOut := flags.String("json-out", "", "also append the raw input lines to this `file`")
	quiet := flags.Bool("quiet", false, "echo what plain go test prints: a test's output only if it fails")
	summaryOnly := flags.Bool("summary-only", false, "echo nothing, print only the summary")
	slowestTests := flags.Int("slowest-tests", 0, "also list the `N` slowest top-level tests in the summary")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "testreport: unexpected arguments %q\n", flags.Args())
		return 2
	}
	var raw *bufio.Writer
	if *jsonOut != "" {
		f, err := os.OpenFile(*jsonOut, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintln(stderr, "testreport:", err)
			return 2
		}
		defer f.Close()
		raw = bufio.NewWriter(f)
	}

	out := &trackingWriter{w: bufio.NewWriter(stdout), endsLine: true}
	var echo echoer = verboseEcho{out}
	switch {
	case *summaryOnly:
		echo = noEcho{}
	case *quiet:
		echo = newQuietEcho(out)
	}
	r := &report{pkgs: map[string]*pkg{}}
	r.consume(bufio.NewReader(stdin), echo, out, raw)
	echo.end()
	if !out.endsLine {
		out.WriteString("\n")
	}
	r.writeSummary(out, *label, *slowestTests)

	status := r.exitStatus()
	if r.readErr != nil {
		fmt.Fprintln(stderr, "testreport: reading the stream:", r.readErr)
		status = 1
	}
	if err := out.w.Flush(); err != nil {
		fmt.Fprintln(stderr, "testreport: writing the output:", err)
		status = 1
	}
	if raw != nil {
		if err := raw.Flush(); err != nil {
			fmt.Fprintln(stderr, "testreport: writing", *jsonOut+":", err)
			status = 1
		}
	}
	return status
}

// consume reads the stream line by line to its end, passing every line to echo (whose output,
// out, is flushed whenever no more input is waiting, so the echo keeps pace with the tests) and
// appending every raw line to raw if set.
func (r *report) consume(in *bufio.Reader, echo echoer, out *trackingWriter, raw *bufio.Writer) {
	for {
		line, err := in.ReadBytes('\n') // no length limit: a line is as long as it is
		if len(line) > 0 {
			if raw != nil {
				raw.Write(line)
				if line[len(line)-1] != '\n' {
					raw.WriteString("\n")
				}
			}
			var ev event
			if json.Unmarshal(line, &ev) != nil || ev.Action == "" {
				echo.text(line) // not an event: go test printed it as plain text
			} else {
				echo.event(&ev)
				r.add(ev)
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				r.readErr = err
			}
			return
		}
		if in.Buffered() == 0 {
			out.w.Flush()
		}
	}
}

// add records one event.
func (r *report) add(ev event) {
	if ev.Action == "build-fail" {
		r.buildFails = append(r.buildFails, ev.ImportPath)
		return
	}
	if ev.Package == "" {
		return // build-output, or an event of no package
	}
	p := r.pkgs[ev.Package]
	if p == nil {
		p = &pkg{name: ev.Package}
		r.pkgs[ev.Package] = p
		r.order = append(r.order, ev.Package)
	}
	if ev.Test == "" {
		// A package may end twice, run in two processes (hack/test.sh's halves): a failure
		// stands, and its time is the longer run's.
		p.elapsed = max(p.elapsed, ev.Elapsed)
		switch {
		case ev.Action == "fail":
			p.result, p.failedBuild = resultFail, ev.FailedBuild
		case ev.Action == "pass" && p.result != resultFail:
			p.result = resultOK
		case ev.Action == "skip" && p.result == resultNone:
			p.result = resultNoTests
		}
		return
	}
	if strings.Contains(ev.Test, "/") {
		return // a subtest
	}
	switch ev.Action {
	case "pass":
		p.passed++
	case "fail":
		p.failed++
	case "skip":
		p.skipped++
	}
	if ev.Action == "pass" || ev.Action == "fail" {
		r.tests = append(r.tests, testTime{pkg: ev.Package, name: ev.Test, elapsed: ev.Elapsed})
	}
}

// totals are the counts of the summary's last two lines.
type totals struct {
	ok, failed, unfinished, noTests int
	passed, testsFailed, skipped    int
	seconds                         float64
}

func (r *report) totals() totals {
	var t totals
	for _, p := range r.pkgs {
		switch p.result {
		case resultOK:
			t.ok++
		case resultFail:
			t.failed++
		case resultNoTests:
			t.noTests++
		default:
			t.unfinished++
		}
		t.passed += p.passed
		t.testsFailed += p.failed
		t.skipped += p.skipped
		t.seconds += p.elapsed
	}
	return t
}

// exitStatus is 1 if anything failed or did not finish, or if no package result was seen.
func (r *report) exitStatus() int {
	t := r.totals()
	if t.failed > 0 || t.testsFailed > 0 || t.unfinished > 0 || len(r.buildFails) > 0 ||
		t.ok+t.failed+t.noTests == 0 {
		return 1
	}
	return 0
}

// slowest returns up to n packages that ran tests, slowest first.
func (r *report) slowest(n int) []*pkg {
	var ran []*pkg
	for _, name := range r.order {
		if p := r.pkgs[name]; p.result == resultOK || p.result == resultFail {
			ran = append(ran, p)
		}
	}
	sort.SliceStable(ran, func(i, j int) bool { return ran[i].elapsed > ran[j].elapsed })
	return ran[:min(n, len(ran))]
}

// slowestTests returns up to n top-level tests that ended, slowest first.
func (r *report) slowestTests(n int) []testTime {
	if n <= 0 {
		return nil
	}
	tests := append([]testTime(nil), r.tests...)
	sort.SliceStable(tests, func(i, j int) bool { return tests[i].elapsed > tests[j].elapsed })
	return tests[:min(n, len(tests))]
}

// failedNames lists the failed packages, then the failed builds no package result named.
func (r *report) failedNames() []string {
	var names []string
	reported := map[string]bool{}
	for _, name := range r.order {
		p := r.pkgs[name]
		if p.result != resultFail {
			continue
		}
		if p.failedBuild != "" {
			reported[p.failedBuild] = true
			name += " (build failed)"
		}
		names = append(names, name)
	}
	for _, path := range r.buildFails {
		if !reported[path] {
			reported[path] = true
			names = append(names, path+" (build failed)")
		}
	}
	return names
}

// writeSummary prints the summary that follows the echoed output; with tests > 0, that many of
// the slowest tests too.
func (r *report) writeSummary(w io.StringWriter, label string, tests int) {
	header := "slowest packages"
	if label != "" {
		header += " (" + label + ")"
	}
	w.WriteString("\n" + header + ":\n")
	var rows []timed
	for _, p := range r.slowest(slowestShown) {
		rows = append(rows, timed{p.elapsed, p.name})
	}
	writeTimed(w, rows)
	if len(rows) == 0 {
		w.WriteString("  (none finished)\n")
	}
	if slow := r.slowestTests(tests); len(slow) > 0 {
		w.WriteString("slowest tests:\n")
		rows = rows[:0]
		for _, t := range slow {
			rows = append(rows, timed{t.elapsed, t.name + " (" + t.pkg + ")"})
		}
		writeTimed(w, rows)
	}
	writeList(w, "failed packages:", r.failedNames())
	var unfinished []string
	for _, name := range r.order {
		if r.pkgs[name].result == resultNone {
			unfinished = append(unfinished, name)
		}
	}
	writeList(w, "did not finish:", unfinished)

	t := r.totals()
	if t.ok+t.failed+t.noTests == 0 {
		w.WriteString("no package result seen: the stream was empty or cut short\n")
	}
	counts := fmt.Sprintf("packages: %d ok, %d failed", t.ok, t.failed)
	if t.unfinished > 0 {
		counts += fmt.Sprintf(", %d did not finish", t.unfinished)
	}
	if t.noTests > 0 {
		counts += fmt.Sprintf(", %d without test files", t.noTests)
	}
	w.WriteString(fmt.Sprintf("%s; total %.1fs\n", counts, t.seconds))
	w.WriteString(fmt.Sprintf("tests: %d passed, %d failed, %d skipped\n", t.passed, t.testsFailed, t.skipped))
}

// timed is a line of the summary's lists: seconds, and what took them.
type timed struct {
	seconds float64
	what    string
}

// writeTimed prints rows, their seconds aligned.
func writeTimed(w io.StringWriter, rows []timed) {
	width := 0
	for _, r := range rows {
		width = max(width, len(fmt.Sprintf("%.1f", r.seconds)))
	}
	for _, r := range rows {
		w.WriteString(fmt.Sprintf("  %*.1fs  %s\n", width, r.seconds, r.what))
	}
}

// writeList prints a heading and its items, indented, if there are any.
func writeList(w io.StringWriter, heading string, items []string) {
	if len(items) == 0 {
		return
	}
	w.WriteString(heading + "\n")
	for _, item := range items {
		w.WriteString("  " + item + "\n")
	}
}

// trackingWriter remembers whether the text written so far ends a line, so the summary never
// starts in the middle of one.
type trackingWriter struct {
	w        *bufio.Writer
	endsLine bool
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	if len(b) > 0 {
		t.endsLine = b[len(b)-1] == '\n'
	}
	return t.w.Write(b)
}

func (t *trackingWriter) WriteString(s string) (int, error) {
	if len(s) > 0 {
		t.endsLine = s[len(s)-1] == '\n'
	}
	return t.w.WriteString(s)
}
