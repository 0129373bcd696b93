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

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

func TestStaleReasons(t *testing.T) {
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	out := Outcome{
		Order:   map[string][]types.NamespacedName{"q": {key("a"), key("b"), key("c")}},
		Waiting: map[types.NamespacedName]string{key("a"): "no node fits", key("b"): "behind 1 application", key("c"): "behind 2 applications"},
	}
	long := Outcome{Order: map[string][]types.NamespacedName{}, Waiting: map[types.NamespacedName]string{}}
	var first []types.NamespacedName
	for i := range maxReasonWakes + 5 {
		k := key(fmt.Sprintf("app-%02d", i))
		long.Order["q"] = append(long.Order["q"], k)
		long.Waiting[k] = "behind"
		if i < maxReasonWakes {
			first = append(first, k)
		}
	}
	tests := []struct {
		name     string
		out      Outcome
		reported map[types.NamespacedName]string
		want     []types.NamespacedName
	}{{
		name:     "reasons handed out are current: nothing to refresh",
		out:      out,
		reported: map[types.NamespacedName]string{key("a"): "no node fits", key("b"): "behind 1 application", key("c"): "behind 2 applications"},
	}, {
		name:     "a changed reason is refreshed",
		out:      out,
		reported: map[types.NamespacedName]string{key("a"): "no node fits", key("b"): "behind 1 application", key("c"): "no node fits"},
		want:     []types.NamespacedName{key("c")},
	}, {
		name: "after a restart nothing was handed out by this process: every shown reason may be stale",
		out:  out,
		want: []types.NamespacedName{key("a"), key("b"), key("c")},
	}, {
		name: "a few per cycle, in queue order",
		out:  long,
		want: first,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, staleReasons(tc.out, tc.reported)); diff != "" {
				t.Errorf("staleReasons (-want +got):\n%s", diff)
			}
		})
	}
}
