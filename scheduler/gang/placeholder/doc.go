/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package placeholder holds the building blocks of the gang scheduler's placeholders
// enforcement (--gang-enforcement=placeholders; the enforcement itself is package gang's
// placeholders.go): placeholder pods, which hold the room planned for an admitted run's members
// until their own pods take it.
//
// It owns what a placeholder pod looks like (pod.go: its name, labels, owner, node affinity and
// requests; the node groups a run's executors share one placeholder by; what its conditions
// say of its room), its PriorityClass (class.go: the workload's priority value, never
// preempting, created when first needed) and the book of swaps between placeholders and
// members (book.go: placeholders created, deleted or swapped that the cluster cache may not
// show yet, and the swaps running onto each node).
//
// It must not decide anything: which placeholders a run wants, when a member takes its
// placeholder's place and whether room counts as taken are package gang's, from its
// Reservations and its cycle. It writes no Reservation and knows nothing of the cycle loop; the
// only object it writes is the placeholders' PriorityClass. Package gang imports it, never the
// reverse.
package placeholder
