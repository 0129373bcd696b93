/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package status

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
)

// TestReasonRefresh: held applications whose shown reason is out of date are woken, at most
// maxReasonWakes per ReasonRefreshPause however many cycles run in it: those showing nothing
// of a known kind first, then those whose reason's meaning changed, then the longest out of
// date, then queue order; woken ones go to the back of the line, so over cycles every one is
// refreshed however long the queue and however often the front changes. An application woken
// is not woken again for a change of meaning within meaningRefreshEvery, nor for its numbers
// within numbersRefreshEvery, and a cycle is asked for when the next one is due.
func TestReasonRefresh(t *testing.T) {
	key := func(name string) core.Key {
		return scheduler.ApplicationKey(types.NamespacedName{Namespace: "ns", Name: name})
	}
	behind := func(n int) core.Reason {
		return core.Reason{Message: fmt.Sprintf("behind %d applications in queue q; needs 1 cpu", n), Kind: core.ReasonKind{Is: core.KindBehind, Queue: "q"}}
	}
	noFit := core.Reason{Message: "no node fits: driver needs 1 cpu; no node has it free", Kind: core.ReasonKind{Is: core.KindNoNodeFits}}
	overQuota := core.Reason{Message: "over quota in queue q: needs 1 cpu, 0 free (quota 4 cpu, 4 cpu in use)", Kind: core.ReasonKind{Is: core.KindOverQuota, Queue: "q"}}
	out := core.Outcome{
		Order:   map[string][]core.Key{"q": {key("a"), key("b"), key("c")}},
		Waiting: map[core.Key]core.Reason{key("a"): noFit, key("b"): behind(1), key("c"): behind(2)},
	}
	// fromStatus is a reason read back from a status written before: its message only.
	fromStatus := func(r core.Reason) core.Reason { return core.Reason{Message: r.Message} }
	const later = time.Millisecond // the next cycle's
	tests := []struct {
		name      string
		shown     map[core.Key]core.Reason
		want      []core.Key
		wantNext  time.Duration
		wantAfter []core.Key // the next cycle's, nothing having been refreshed
		// wantNextAfter is when the next cycle asks for another.
		wantNextAfter time.Duration
	}{{
		name:  "every shown reason current: nothing to wake",
		shown: map[core.Key]core.Reason{key("a"): noFit, key("b"): behind(1), key("c"): behind(2)},
	}, {
		name:  "every shown reason current, as read back from the status: nothing to wake",
		shown: map[core.Key]core.Reason{key("a"): fromStatus(noFit), key("b"): fromStatus(behind(1)), key("c"): fromStatus(behind(2))},
	}, {
		name:  "meaning changes come before numbers that changed; woken, both wait before they are woken again",
		shown: map[core.Key]core.Reason{key("a"): noFit, key("b"): behind(2), key("c"): overQuota},
		want:  []core.Key{key("c"), key("b")},
		// c's meaning waits meaningRefreshEvery, b's numbers numbersRefreshEvery.
		wantNextAfter: meaningRefreshEvery - later,
	}, {
		name:  "a shown reason of unknown kind (read back from the status) comes first, and again",
		shown: map[core.Key]core.Reason{key("a"): noFit, key("b"): behind(2), key("c"): fromStatus(behind(1))},
		want:  []core.Key{key("c"), key("b")},
		// c again, nothing of a known kind shown; b's numbers wait.
		wantAfter:     []core.Key{key("c")},
		wantNextAfter: numbersRefreshEvery - later,
	}, {
		name:  "a shown reason of unknown kind comes before a meaning change",
		shown: map[core.Key]core.Reason{key("a"): overQuota, key("b"): behind(1), key("c"): fromStatus(behind(1))},
		want:  []core.Key{key("c"), key("a")},
		// c again; a's meaning waits.
		wantAfter:     []core.Key{key("c")},
		wantNextAfter: meaningRefreshEvery - later,
	}, {
		name:  "no cycle's verdict shown yet (held before a cycle judged it) comes before a meaning change, and again",
		shown: map[core.Key]core.Reason{key("a"): overQuota, key("b"): behind(1), key("c"): core.PlainReason(NotJudgedYet)},
		want:  []core.Key{key("c"), key("a")},
		// c again, no verdict shown; a's meaning waits.
		wantAfter:     []core.Key{key("c")},
		wantNextAfter: meaningRefreshEvery - later,
	}, {
		name:      "nothing known to be shown (a new operator, no condition): all, queue order",
		want:      []core.Key{key("a"), key("b"), key("c")},
		wantAfter: []core.Key{key("a"), key("b"), key("c")},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r ReasonRefresh
			now := time.Now()
			got, next := r.Pick(now, out, tt.shown)
			if diff := cmp.Diff(tt.want, got); diff != "" || next != tt.wantNext {
				t.Errorf("woken (-want +got):\n%s\nnext cycle in %v, want %v", diff, next, tt.wantNext)
			}
			got, next = r.Pick(now.Add(later), out, tt.shown)
			if diff := cmp.Diff(tt.wantAfter, got); diff != "" || next != tt.wantNextAfter {
				t.Errorf("woken the next cycle (-want +got):\n%s\nnext cycle in %v, want %v", diff, next, tt.wantNextAfter)
			}
		})
	}

	t.Run("a reason that changes its kind with every cycle is written once per meaningRefreshEvery", func(t *testing.T) {
		one := core.Outcome{Order: map[string][]core.Key{"q": {key("a")}}}
		var r ReasonRefresh
		shown := map[core.Key]core.Reason{}
		start := time.Now()
		var woken []time.Duration
		const cycles = 60 // one a second
		for i := range cycles {
			now := start.Add(time.Duration(i) * time.Second)
			// Its queue's room comes and goes with the runs that end and start.
			one.Waiting = map[core.Key]core.Reason{key("a"): overQuota}
			if i%2 == 1 {
				one.Waiting[key("a")] = noFit
			}
			got, next := r.Pick(now, one, shown)
			if len(got) > 0 {
				woken = append(woken, now.Sub(start))
				shown[key("a")] = one.Waiting[key("a")] // the pool writes it
			} else if shown[key("a")] != one.Waiting[key("a")] && next <= 0 {
				t.Fatalf("at %v: out of date, not woken, and no cycle asked for", now.Sub(start))
			}
		}
		if len(woken) < 2 || len(woken) > 1+cycles/int(meaningRefreshEvery/time.Second) {
			t.Fatalf("woken at %v: want once first, then at most once per %v", woken, meaningRefreshEvery)
		}
		for i := 1; i < len(woken); i++ {
			if woken[i]-woken[i-1] < meaningRefreshEvery {
				t.Errorf("woken at %v and again at %v", woken[i-1], woken[i])
			}
		}
	})

	t.Run("a long queue is refreshed in rotation, a bounded number per cycle, each at most once per numbersRefreshEvery", func(t *testing.T) {
		const n = 2*maxReasonWakes + maxReasonWakes/2
		long := core.Outcome{Order: map[string][]core.Key{}, Waiting: map[core.Key]core.Reason{}}
		shown := map[core.Key]core.Reason{}
		for i := range n {
			k := key(fmt.Sprintf("app-%04d", i))
			long.Order["q"] = append(long.Order["q"], k)
			long.Waiting[k] = behind(i)
			shown[k] = behind(i + 1) // everyone moved up one place
		}
		var r ReasonRefresh
		seen := map[core.Key]int{}
		now := time.Now()
		wantWoken := []int{maxReasonWakes, maxReasonWakes, n - 2*maxReasonWakes}
		wantNext := []time.Duration{ReasonRefreshPause, ReasonRefreshPause, numbersRefreshEvery - 2*ReasonRefreshPause}
		for cycle := range 3 {
			if cycle > 0 {
				// Cycles follow each other within the pause: none wakes more.
				if got, _ := r.Pick(now.Add(ReasonRefreshPause/2), long, shown); len(got) != 0 {
					t.Fatalf("a cycle within the pause woke %d, want none", len(got))
				}
				now = now.Add(ReasonRefreshPause)
			}
			got, next := r.Pick(now, long, shown)
			if len(got) != wantWoken[cycle] {
				t.Fatalf("cycle %d woke %d, want %d", cycle, len(got), wantWoken[cycle])
			}
			// The next cycle: after the pause while some were not woken; once all were, when
			// the first woken's numbers are due again.
			if want := wantNext[cycle]; next != want {
				t.Errorf("cycle %d: next cycle in %v, want %v", cycle, next, want)
			}
			for _, k := range got {
				seen[k]++
			}
			if cycle == 0 && got[0] != long.Order["q"][0] {
				t.Errorf("cycle 0 began with %s, want the queue's first", got[0])
			}
		}
		if len(seen) != n {
			t.Errorf("%d of %d woken within 3 cycles", len(seen), n)
		}
		// Not refreshed by the pool (a lost wake-up), their numbers are woken again once
		// numbersRefreshEvery has passed, and not before.
		if got, _ := r.Pick(now.Add(ReasonRefreshPause), long, shown); len(got) != 0 {
			t.Errorf("woken again before numbersRefreshEvery: %d", len(got))
		}
		if got, _ := r.Pick(now.Add(numbersRefreshEvery), long, shown); len(got) == 0 {
			t.Error("not woken again after numbersRefreshEvery")
		}
		// Refreshed, they are no longer out of date.
		for k := range seen {
			shown[k] = long.Waiting[k]
		}
		if got, next := r.Pick(now.Add(2*numbersRefreshEvery), long, shown); len(got) != 0 || next != 0 {
			t.Errorf("woken after all were refreshed: %v (next cycle in %v)", got, next)
		}
	})
}

// TestNumbersRefreshPace: an application whose numbers alone change is refreshed
// numbersRefreshEvery after its last wake-up, then after twice that, and so on up to
// numbersRefreshLongest; a change of meaning, or numbers that stood still through the wait,
// bring the pace back to numbersRefreshEvery. Cycles run every second; the pool writes what is
// woken at once.
func TestNumbersRefreshPace(t *testing.T) {
	k := scheduler.ApplicationKey(types.NamespacedName{Namespace: "ns", Name: "a"})
	behind := func(n int) core.Reason {
		return core.Reason{Message: fmt.Sprintf("behind %d applications in queue q", n), Kind: core.ReasonKind{Is: core.KindBehind, Queue: "q"}}
	}
	overQuota := core.Reason{Message: "over quota in queue q", Kind: core.ReasonKind{Is: core.KindOverQuota, Queue: "q"}}
	tests := []struct {
		name string
		// reason is the application's reason at second i.
		reason func(i int) core.Reason
		// want is the seconds it is woken at.
		want []int
	}{{
		name:   "a position moving every second: 30 s, then 60 s, then every 2 minutes",
		reason: func(i int) core.Reason { return behind(1000 - i) },
		want:   []int{0, 30, 90, 210, 330, 450, 570},
	}, {
		name: "a change of meaning brings the pace back",
		reason: func(i int) core.Reason {
			if i >= 100 && i < 105 {
				return overQuota
			}
			return behind(1000 - i)
		},
		// Over quota at 100 (10 s after the wake-up at 90); behind again at 105, 5 s after:
		// a new meaning again, woken meaningRefreshEvery after 100; then 30 s, 60 s, ...
		want: []int{0, 30, 90, 100, 110, 140, 200, 320, 440, 560},
	}, {
		name: "numbers that stood still through the wait bring the pace back",
		reason: func(i int) core.Reason {
			if i >= 90 && i < 250 {
				return behind(910) // the queue stalls from 90 to 250
			}
			return behind(1000 - i)
		},
		want: []int{0, 30, 90, 250, 280, 340, 460, 580},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r ReasonRefresh
			shown := map[core.Key]core.Reason{k: behind(1001)}
			start := time.Now()
			var got []int
			for i := range 600 {
				now := start.Add(time.Duration(i) * time.Second)
				out := core.Outcome{Order: map[string][]core.Key{"q": {k}}, Waiting: map[core.Key]core.Reason{k: tt.reason(i)}}
				if woken, _ := r.Pick(now, out, shown); len(woken) > 0 {
					got = append(got, i)
					shown[k] = out.Waiting[k]
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("woken at seconds (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("the bound on wake-ups does not reset the pace", func(t *testing.T) {
		// Twice as many moving positions as may be woken in a pause, and no cycle from 20 s to
		// 40 s (the loop busy elsewhere): all are due at 40 s, half of them wait a cycle for
		// the bound, and those still keep their pace.
		const n = 2 * maxReasonWakes
		var r ReasonRefresh
		shown := map[core.Key]core.Reason{}
		keys := make([]core.Key, n)
		for i := range keys {
			keys[i] = scheduler.ApplicationKey(types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("app-%04d", i)})
		}
		start := time.Now()
		last := map[core.Key]int{}
		gaps := map[core.Key][]int{}
		for sec := range 400 {
			if sec >= 20 && sec < 40 {
				continue
			}
			out := core.Outcome{Order: map[string][]core.Key{}, Waiting: map[core.Key]core.Reason{}}
			for i, key := range keys {
				out.Order["q"] = append(out.Order["q"], key)
				out.Waiting[key] = behind(1000 + i - sec)
				if _, ok := shown[key]; !ok {
					shown[key] = behind(1001 + i)
				}
			}
			woken, _ := r.Pick(start.Add(time.Duration(sec)*time.Second), out, shown)
			for _, key := range woken {
				if at, ok := last[key]; ok {
					gaps[key] = append(gaps[key], sec-at)
				}
				last[key] = sec
				shown[key] = out.Waiting[key]
			}
		}
		for _, key := range keys {
			g := gaps[key]
			if len(g) < 3 || g[0] < 30 || g[1] < 60 || g[2] < 120 || g[len(g)-1] > 121 {
				t.Fatalf("%s woken after gaps of %v s: want at least 30, 60, then 120 (a second late at most)", key.Name, g)
			}
		}
	})
}
