/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package release holds the building blocks of releasing the gang scheduler's gated pods
// onto their planned nodes (the ungating loop, and the cycle, that use them are package gang's
// ungate.go).
//
// It owns the gang gate's name (release.go: Gate; package gang puts it on the pods it holds
// back), what releasing a pod changes (Ungate), the write that does it (Pod: one JSON patch
// whose test operations guard it against a cluster cache that lags, else the pod read from the
// API server and updated) and the record of the releases in flight (tracker.go: the pods being
// released and the node each was given, from the moment one is chosen until the cluster cache
// shows it released, so that none is released twice nor its node given away meanwhile).
//
// It must not decide anything: which pod goes onto which node, and when, are package gang's,
// from its Reservations and its cycle. It writes nothing but the pods it is given, and of them
// only what releasing changes: it removes the gang gate from spec.schedulingGates and, when a
// node is given, narrows spec.affinity's required node affinity to that node and records it in
// the metadata.annotations entry scheduling.sparkop.dev/node. Overlay changes only the
// caller's copies of pods. Package gang imports it, never the reverse.
package release
