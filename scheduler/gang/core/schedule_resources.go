/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package core

import (
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// A cycle converts every quantity once into a dense vector of int64 (cpu in millicores, every
// other resource in its base unit), indexed by resource; the hot loops (quota checks, node fit)
// then never touch resource.Quantity.
type vec []int64

// unlimited marks a quota or capacity that does not limit a resource.
const unlimited = math.MaxInt64

// resources names the dimensions of a cycle's vectors: every resource that a node, a queue or
// a workload mentions, sorted so that the cycle (and its messages) are deterministic.
type resources struct {
	names []corev1.ResourceName
	index map[corev1.ResourceName]int
	pods  int // index of "pods": every member counts one
}

func newResources(seen map[corev1.ResourceName]bool) *resources {
	seen[corev1.ResourcePods] = true
	r := &resources{index: make(map[corev1.ResourceName]int, len(seen))}
	for name := range seen {
		r.names = append(r.names, name)
	}
	// cpu and memory first, as people read them; then the rest by name.
	rank := func(n corev1.ResourceName) int {
		switch n {
		case corev1.ResourceCPU:
			return 0
		case corev1.ResourceMemory:
			return 1
		}
		return 2
	}
	sort.Slice(r.names, func(i, j int) bool {
		a, b := r.names[i], r.names[j]
		if rank(a) != rank(b) {
			return rank(a) < rank(b)
		}
		return a < b
	})
	for i, n := range r.names {
		r.index[n] = i
	}
	r.pods = r.index[corev1.ResourcePods]
	return r
}

func collectNames(seen map[corev1.ResourceName]bool, l corev1.ResourceList) {
	for n := range l {
		seen[n] = true
	}
}

// amount is q in the cycle's unit for resource name: millicores for cpu, else the base unit
// rounded up (a request of 1.5 GPUs needs 2).
func amount(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// vector converts l; resources it does not list get absent (0 for requests and usage,
// unlimited for quotas).
func (r *resources) vector(l corev1.ResourceList, absent int64) vec {
	v := make(vec, len(r.names))
	for i := range v {
		v[i] = absent
	}
	for name, q := range l {
		v[r.index[name]] = amount(name, q)
	}
	return v
}

func (r *resources) zero() vec { return make(vec, len(r.names)) }

func (v vec) add(o vec, times int64) {
	for i, x := range o {
		if x != 0 {
			v[i] += x * times
		}
	}
}

func (v vec) sub(o vec, times int64) { v.add(o, -times) }

func (v vec) clone() vec { return append(vec(nil), v...) }

// list converts v back into a ResourceList, leaving out zeros.
func (r *resources) list(v vec) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i, x := range v {
		if x != 0 {
			l[r.names[i]] = r.quantity(i, x)
		}
	}
	return l
}

func (r *resources) quantity(i int, x int64) resource.Quantity {
	switch r.names[i] {
	case corev1.ResourceCPU:
		return *resource.NewMilliQuantity(x, resource.DecimalSI)
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return *resource.NewQuantity(x, resource.BinarySI)
	}
	return *resource.NewQuantity(x, resource.DecimalSI)
}

// one formats a single amount the way people write it: "1 cpu", "500m cpu", "1408Mi",
// "2 nvidia.com/gpu".
func (r *resources) one(i int, x int64) string {
	if x == unlimited {
		return "unlimited " + string(r.names[i])
	}
	q := r.quantity(i, x)
	if r.names[i] == corev1.ResourceMemory {
		return q.String()
	}
	return q.String() + " " + string(r.names[i])
}

// format lists v's non-zero amounts, leaving out the pod count: "1 cpu, 1408Mi".
func (r *resources) format(v vec) string {
	var parts []string
	for i, x := range v {
		if x != 0 && i != r.pods {
			parts = append(parts, r.one(i, x))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
