/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
)

// TestReasonRefresh: held applications whose shown reason is out of date are woken, at most
// maxReasonWakes per reasonRefreshPause however many cycles run in it: those whose reason's
// meaning changed first, then the longest out of date, then queue order; woken ones go to the
// back of the line, so over cycles every one is refreshed however long the queue and however
// often the front changes.
func TestReasonRefresh(t *testing.T) {
	key := func(name string) Key {
		return scheduler.ApplicationKey(types.NamespacedName{Namespace: "ns", Name: name})
	}
	behind := func(n int) Reason {
		return Reason{Message: fmt.Sprintf("behind %d applications in queue q; needs 1 cpu", n), Kind: ReasonKind{Is: KindBehind, Queue: "q"}}
	}
	noFit := Reason{Message: "no node fits: driver needs 1 cpu; no node has it free", Kind: ReasonKind{Is: KindNoNodeFits}}
	overQuota := Reason{Message: "over quota in queue q: needs 1 cpu, 0 free (quota 4 cpu, 4 cpu in use)", Kind: ReasonKind{Is: KindOverQuota, Queue: "q"}}
	out := Outcome{
		Order:   map[string][]Key{"q": {key("a"), key("b"), key("c")}},
		Waiting: map[Key]Reason{key("a"): noFit, key("b"): behind(1), key("c"): behind(2)},
	}
	// fromStatus is a reason read back from a status written before: its message only.
	fromStatus := func(r Reason) Reason { return Reason{Message: r.Message} }
	tests := []struct {
		name      string
		shown     map[Key]Reason
		want      []Key
		wantLeft  int
		wantAfter []Key // the next cycle's, nothing having been refreshed
	}{{
		name:  "every shown reason current: nothing to wake",
		shown: map[Key]Reason{key("a"): noFit, key("b"): behind(1), key("c"): behind(2)},
	}, {
		name:  "every shown reason current, as read back from the status: nothing to wake",
		shown: map[Key]Reason{key("a"): fromStatus(noFit), key("b"): fromStatus(behind(1)), key("c"): fromStatus(behind(2))},
	}, {
		name:  "meaning changes come before numbers that changed; numbers alone wait before they are woken again",
		shown: map[Key]Reason{key("a"): noFit, key("b"): behind(2), key("c"): overQuota},
		want:  []Key{key("c"), key("b")},
		// c again, its meaning still not shown; b's numbers wait numbersRefreshEvery.
		wantAfter: []Key{key("c")},
	}, {
		name:      "a shown reason of unknown kind (read back from the status) counts as a meaning change",
		shown:     map[Key]Reason{key("a"): noFit, key("b"): behind(2), key("c"): fromStatus(behind(1))},
		want:      []Key{key("c"), key("b")},
		wantAfter: []Key{key("c")},
	}, {
		name:      "nothing known to be shown (a new operator, no condition): all, queue order",
		want:      []Key{key("a"), key("b"), key("c")},
		wantAfter: []Key{key("a"), key("b"), key("c")},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r reasonRefresh
			now := time.Now()
			got, left := r.pick(now, out, tt.shown)
			if diff := cmp.Diff(tt.want, got); diff != "" || left != tt.wantLeft {
				t.Errorf("woken (-want +got):\n%s\nleft %d, want %d", diff, left, tt.wantLeft)
			}
			got, _ = r.pick(now.Add(time.Millisecond), out, tt.shown)
			if diff := cmp.Diff(tt.wantAfter, got); diff != "" {
				t.Errorf("woken the next cycle (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("a long queue is refreshed in rotation, a bounded number per cycle, each at most once per numbersRefreshEvery", func(t *testing.T) {
		const n = 2*maxReasonWakes + maxReasonWakes/2
		long := Outcome{Order: map[string][]Key{}, Waiting: map[Key]Reason{}}
		shown := map[Key]Reason{}
		for i := range n {
			k := key(fmt.Sprintf("app-%04d", i))
			long.Order["q"] = append(long.Order["q"], k)
			long.Waiting[k] = behind(i)
			shown[k] = behind(i + 1) // everyone moved up one place
		}
		var r reasonRefresh
		seen := map[Key]int{}
		now := time.Now()
		wantWoken := []int{maxReasonWakes, maxReasonWakes, n - 2*maxReasonWakes}
		for cycle := range 3 {
			if cycle > 0 {
				// Cycles follow each other within the pause: none wakes more.
				if got, _ := r.pick(now.Add(reasonRefreshPause/2), long, shown); len(got) != 0 {
					t.Fatalf("a cycle within the pause woke %d, want none", len(got))
				}
				now = now.Add(reasonRefreshPause)
			}
			got, left := r.pick(now, long, shown)
			if len(got) != wantWoken[cycle] {
				t.Fatalf("cycle %d woke %d, want %d", cycle, len(got), wantWoken[cycle])
			}
			// Left: those not woken yet; the woken ones wait numbersRefreshEvery.
			if want := n - (cycle+1)*maxReasonWakes; left != max(want, 0) {
				t.Errorf("cycle %d: %d left, want %d", cycle, left, max(want, 0))
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
		if got, _ := r.pick(now.Add(reasonRefreshPause), long, shown); len(got) != 0 {
			t.Errorf("woken again before numbersRefreshEvery: %d", len(got))
		}
		if got, _ := r.pick(now.Add(numbersRefreshEvery), long, shown); len(got) == 0 {
			t.Error("not woken again after numbersRefreshEvery")
		}
		// Refreshed, they are no longer out of date.
		for k := range seen {
			shown[k] = long.Waiting[k]
		}
		if got, left := r.pick(now.Add(2*numbersRefreshEvery), long, shown); len(got) != 0 || left != 0 {
			t.Errorf("woken after all were refreshed: %v (%d left)", got, left)
		}
	})
}

// TestShownReasons: what this process handed out wins; otherwise the status tells (a restarted
// operator does not wake workloads whose shown reason still holds): an application's Queued
// condition, a session's ServerPodReady condition with reason Queued.
func TestShownReasons(t *testing.T) {
	queued := func(name, msg string, status metav1.ConditionStatus) object {
		a := app(name, "s1", v1beta2.ApplicationStateNew, 1, nil)
		a.Status.Conditions = []metav1.Condition{{Type: scheduler.ConditionQueued, Status: status, Message: msg}}
		return applicationObject(&a)
	}
	sessionShowing := func(name, reason, msg string) object {
		c := session(name, "s1", v1alpha1.SparkConnectStateProvisioning, "", nil)
		c.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionServerPodReady, Status: metav1.ConditionFalse, Reason: reason, Message: msg}}
		return sessionObject(c, fixedDemand(1))
	}
	plain := app("d", "s1", v1beta2.ApplicationStateNew, 1, nil)
	workloads := []object{queued("a", "written before", metav1.ConditionTrue),
		queued("b", "written before", metav1.ConditionTrue), queued("c", "no longer queued", metav1.ConditionFalse),
		applicationObject(&plain), sessionShowing("a", v1alpha1.ReasonQueued, "session written before"),
		sessionShowing("e", v1alpha1.ReasonServerPodNotReady, "Server pod created")}
	appKey := func(name string) Key {
		return scheduler.ApplicationKey(types.NamespacedName{Namespace: "ns", Name: name})
	}
	sessionKey := Key{Kind: scheduler.KindSession, NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}
	handedOut := Reason{Message: "handed out", Kind: ReasonKind{Is: KindBehind, Queue: "q"}}
	got := shownReasons(workloads, map[Key]Reason{appKey("b"): handedOut})
	want := map[Key]Reason{appKey("a"): {Message: "written before"}, appKey("b"): handedOut, sessionKey: {Message: "session written before"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shown reasons (-want +got):\n%s", diff)
	}
}
