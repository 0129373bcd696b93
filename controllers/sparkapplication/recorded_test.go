/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/submission"
	"github.com/sparkop/spark-operator/test/cluster"
)

func TestRecordedRuns(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	app := newApp("ns", "pi")
	app.Status.SubmissionID = "sub-1"
	key := types.NamespacedName{Namespace: "ns", Name: "pi"}
	tests := []struct {
		name  string
		put   bool
		takes []time.Duration // after the put, each take's time
		want  []bool          // whether each take hands the application on
	}{
		{"taken at once", true, []time.Duration{0}, []bool{true}},
		{"taken just in time", true, []time.Duration{recordedFreshFor - time.Millisecond}, []bool{true}},
		{"taken late: read afresh", true, []time.Duration{recordedFreshFor}, []bool{false}},
		{"taken once only", true, []time.Duration{0, time.Millisecond}, []bool{true, false}},
		{"a late take forgets it", true, []time.Duration{time.Hour, 0}, []bool{false, false}},
		{"a clock gone back", true, []time.Duration{-time.Second}, []bool{false}},
		{"nothing put", false, []time.Duration{0}, []bool{false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r recordedRuns
			if tt.put {
				r.put(app, at)
				app.Status.SubmissionID = "changed after the put"
				defer func() { app.Status.SubmissionID = "sub-1" }()
			}
			for i, after := range tt.takes {
				got := r.take(key, at.Add(after))
				if (got != nil) != tt.want[i] {
					t.Fatalf("take %d: got %v, want handed on %v", i, got, tt.want[i])
				}
				if got != nil && got.Status.SubmissionID != "sub-1" {
					t.Errorf("take %d: submission %q: the object kept must be a copy", i, got.Status.SubmissionID)
				}
			}
		})
	}
}

func TestRecordedRunsInHand(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	key := types.NamespacedName{Namespace: "ns", Name: "pi"}
	recorded := func(id string) *v1beta2.SparkApplication {
		app := newApp("ns", "pi")
		app.Status.SubmissionID = id
		return app
	}
	// Each step is one call at its time after the first: put (of the id), take, written (of
	// the id), done, or inHand (of the id); want is what inHand or done answers.
	type step struct {
		op, id string
		after  time.Duration
		want   bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"recorded, not yet taken", []step{{"put", "a", 0, false}, {"inHand", "a", time.Minute, true}}},
		{"another submission", []step{{"put", "a", 0, false}, {"inHand", "b", 0, false}, {"inHand", "", 0, false}}},
		{"taken", []step{{"put", "a", 0, false}, {"take", "", 0, false}, {"inHand", "a", time.Minute, true}}},
		{"done without an outcome", []step{{"put", "a", 0, false}, {"take", "", 0, false}, {"done", "", 0, false}, {"inHand", "a", 0, false}}},
		{"done says an offer was held back", []step{{"put", "a", 0, false}, {"take", "", 0, false}, {"inHand", "a", 0, true}, {"done", "", 0, true}}},
		{"its outcome written: in hand a while after done", []step{
			{"put", "a", 0, false}, {"take", "", 0, false}, {"written", "a", time.Second, false}, {"done", "", time.Second, false},
			{"inHand", "a", time.Second + recordedFreshFor - time.Millisecond, true}, {"inHand", "a", time.Second + recordedFreshFor, false},
		}},
		{"the outcome of another submission", []step{
			{"put", "a", 0, false}, {"take", "", 0, false}, {"written", "b", 0, false}, {"done", "", 0, false}, {"inHand", "a", 0, false},
		}},
		{"done before taking keeps a later recording", []step{{"done", "", 0, false}, {"put", "a", 0, false}, {"done", "", 0, false}, {"inHand", "a", 0, true}}},
		{"recorded again while in hand", []step{
			{"put", "a", 0, false}, {"take", "", 0, false}, {"put", "b", 0, false}, {"done", "", 0, false}, {"inHand", "b", 0, true}, {"inHand", "a", 0, false},
		}},
		{"recorded again after an outcome", []step{
			{"put", "a", 0, false}, {"take", "", 0, false}, {"written", "a", 0, false}, {"done", "", 0, false}, {"put", "b", 0, false},
			{"inHand", "a", 0, false}, {"inHand", "b", 0, true},
		}},
		{"nothing recorded", []step{{"inHand", "a", 0, false}, {"done", "", 0, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r recordedRuns
			for i, st := range tt.steps {
				now := at.Add(st.after)
				switch st.op {
				case "put":
					r.put(recorded(st.id), now)
				case "take":
					r.take(key, now)
				case "written":
					r.outcomeWritten(key, st.id, now)
				case "done":
					if got := r.done(key); got != st.want {
						t.Errorf("step %d: done says held back %v, want %v", i, got, st.want)
					}
				case "inHand":
					if got := r.inHand(key, st.id, now); got != st.want {
						t.Errorf("step %d: inHand(%q) = %v, want %v", i, st.id, got, st.want)
					}
				}
			}
		})
	}
}

func TestRecordedRunsPrunesWhatIsNeverTaken(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	var r recordedRuns
	for i := range 10 * recordedPruneMin {
		// One new application every millisecond, none taken: only the last recordedFreshFor's stay.
		r.put(newApp("ns", fmt.Sprintf("app-%d", i)), at.Add(time.Duration(i)*time.Millisecond))
	}
	fresh := int(recordedFreshFor / time.Millisecond)
	if n := len(r.runs); n > 2*max(fresh, recordedPruneMin) {
		t.Errorf("%d kept, want at most %d: those never taken are dropped once stale", n, 2*max(fresh, recordedPruneMin))
	}
}

// readsCountingSubmitter notes, as it submits, how often the application had been read from
// the API server (reads, the reconciler's APIReader) by then.
type readsCountingSubmitter struct {
	*fakeSubmitter
	reads    *countingReader
	mu       sync.Mutex
	atSubmit map[string]int
}

func (s *readsCountingSubmitter) Submit(ctx context.Context, app *v1beta2.SparkApplication, a submission.Attempt) (submission.Result, error) {
	s.mu.Lock()
	s.atSubmit[app.Name] = s.reads.count(app.Name)
	s.mu.Unlock()
	return s.fakeSubmitter.Submit(ctx, app, a)
}

func (s *readsCountingSubmitter) readsBeforeSubmit(name string) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.atSubmit[name]
	return n, ok
}

// TestRecordedSubmissionIsNotReadAgain: from its creation to its driver, a new application is
// not read from the API server: the submission pool decides on the object the write that
// recorded its submission returned. The pool handles it once: the reconciles the recording
// and the driver bring do not offer it again while the pool has it in hand. The run then
// completes as ever.
func TestRecordedSubmissionIsNotReadAgain(t *testing.T) {
	c := cluster.Client(t)
	e := &env{c: c, ns: cluster.Namespace(t, c, "sparkapp-recorded"),
		sub: &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}, gate: &gate{}}}
	reads := &countingReader{gets: map[string]int{}}
	sub := &readsCountingSubmitter{fakeSubmitter: e.sub, reads: reads, atSubmit: map[string]int{}}
	var handled sync.Map // key → *atomic.Int32: the pool's calls
	startManagerWith(t, []string{e.ns}, e.sub, Options{}, func(r *Reconciler) {
		reads.Reader = r.APIReader
		r.APIReader = reads
		r.Submitters = map[submission.Mode]submission.Submitter{submission.ModeNative: sub}
		r.Pool = submission.NewPool(4, func(ctx context.Context, key types.NamespacedName) error {
			n, _ := handled.LoadOrStore(key, new(atomic.Int32))
			n.(*atomic.Int32).Add(1)
			return r.Submit(ctx, key)
		})
	})
	const apps = 5
	var keys []types.NamespacedName
	for i := range apps {
		keys = append(keys, e.create(t, newApp(e.ns, fmt.Sprintf("pi-%d", i), driverAnnotations(annRunSeconds, "1"))))
	}
	for _, key := range keys {
		app := e.waitState(t, key, v1beta2.ApplicationStateCompleted, 30*time.Second)
		n, ok := sub.readsBeforeSubmit(key.Name)
		switch {
		case !ok:
			t.Errorf("%s: never submitted", key)
		case n != 0:
			t.Errorf("%s: read %d times from the API server before its driver was created, want 0", key, n)
		}
		if e.sub.count(key) != 1 || app.Status.SubmissionAttempts != 1 {
			t.Errorf("%s: %d submitter calls, %d attempts; want 1 of each", key, e.sub.count(key), app.Status.SubmissionAttempts)
		}
	}
	total := 0
	for _, key := range keys {
		if n, ok := handled.Load(key); ok {
			total += int(n.(*atomic.Int32).Load())
		}
	}
	if total != apps {
		t.Errorf("the pool handled %d applications %d times, want %d", apps, total, apps)
	}
}
