package main

import (
	"fmt"
	"sort"
	"strings"
)

// heldMax is how many bytes of output quiet mode holds for one test; past it the oldest output
// is dropped (the last piece is kept whatever its length).
const heldMax = 4 << 20

// echoer writes what the run shows of the stream, line by line as it arrives.
type echoer interface {
	text(line []byte) // a line that is not an event
	event(ev *event)  // an event
	end()             // the end of the stream, before the summary
}

// verboseEcho writes everything: what `go test -v` prints.
type verboseEcho struct{ out *trackingWriter }

func (e verboseEcho) text(line []byte) { e.out.Write(line) }
func (e verboseEcho) event(ev *event)  { e.out.WriteString(ev.Output) }
func (e verboseEcho) end()             {}

// noEcho writes nothing: -summary-only.
type noEcho struct{}

func (noEcho) text([]byte)  {}
func (noEcho) event(*event) {}
func (noEcho) end()         {}

// testKey names one test of one package.
type testKey struct{ pkg, test string }

// held is the output held back for a test that has not ended.
type held struct {
	seq     int      // order of the test's first event, so tests are written in order
	chunks  []string // the newest heldMax bytes, or the last chunk if longer
	size    int      // bytes in chunks
	dropped int      // bytes dropped from the front
}

func (h *held) add(s string) {
	h.chunks = append(h.chunks, s)
	h.size += len(s)
	for h.size > heldMax && len(h.chunks) > 1 {
		h.size -= len(h.chunks[0])
		h.dropped += len(h.chunks[0])
		h.chunks[0] = ""
		h.chunks = h.chunks[1:]
	}
}

// quietEcho writes what plain `go test` prints: see the package comment.
type quietEcho struct {
	out  *trackingWriter
	held map[testKey]*held // the tests that have started and not ended
	seq  int
}

func newQuietEcho(out *trackingWriter) *quietEcho {
	return &quietEcho{out: out, held: map[testKey]*held{}}
}

func (q *quietEcho) text(line []byte) { q.out.Write(line) }

func (q *quietEcho) event(ev *event) {
	if ev.Test == "" {
		// A package's final line (the PASS or FAIL before its ok or FAIL line, or go test's
		// FAIL line after a timeout or crash) or its result: a test still held never ended.
		if isFinalLine(ev.Output) || ev.Action == "pass" || ev.Action == "fail" || ev.Action == "skip" {
			q.writeUnfinished(func(k testKey) bool { return k.pkg == ev.Package })
		}
		q.out.WriteString(ev.Output)
		return
	}
	k := testKey{ev.Package, ev.Test}
	h := q.held[k]
	if h == nil {
		q.seq++
		h = &held{seq: q.seq}
		q.held[k] = h
	}
	switch ev.Action {
	case "output":
		if !isFramingLine(ev.Output) {
			h.add(ev.Output)
		}
	case "fail":
		q.write(h)
		delete(q.held, k)
	case "pass", "skip":
		delete(q.held, k)
	}
}

// end writes the output held for the tests that never ended.
func (q *quietEcho) end() {
	q.writeUnfinished(func(testKey) bool { return true })
}

// writeUnfinished writes, in the order the tests started, the output held for the tests that
// match, each under a line that names it, and forgets them.
func (q *quietEcho) writeUnfinished(match func(testKey) bool) {
	var keys []testKey
	for k := range q.held {
		if match(k) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return q.held[keys[i]].seq < q.held[keys[j]].seq })
	for _, k := range keys {
		if !q.out.endsLine {
			q.out.WriteString("\n")
		}
		q.out.WriteString(fmt.Sprintf("--- NOT FINISHED: %s in %s\n", k.test, k.pkg))
		q.write(q.held[k])
		delete(q.held, k)
	}
}

// write writes a test's held output.
func (q *quietEcho) write(h *held) {
	if h.dropped > 0 {
		if !q.out.endsLine {
			q.out.WriteString("\n")
		}
		q.out.WriteString(fmt.Sprintf("    [testreport: %d bytes of earlier output dropped]\n", h.dropped))
	}
	for _, s := range h.chunks {
		q.out.WriteString(s)
	}
}

// isFramingLine reports whether a test's output is one of the lines only `go test -v` prints.
func isFramingLine(s string) bool {
	for _, prefix := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// isFinalLine reports whether package-level output is a line test2json takes for the end of a
// test binary's output: PASS, FAIL, or go test's "FAIL\tpkg\t...".
func isFinalLine(s string) bool {
	line := strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r")
	return line == "PASS" || line == "FAIL" || strings.HasPrefix(s, "FAIL\t")
}
