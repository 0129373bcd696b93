/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package key owns the name of a workload: its kind (application or session), namespace and
// name. It is a leaf: it imports no client, so that code which only decides (the gang
// scheduler's core) can name workloads without the batch-scheduler interface and its clients.
// Package scheduler re-exports these names for its callers.
package key

import "k8s.io/apimachinery/pkg/types"

// Kind is the kind of object a workload is.
type Kind string

// The kinds of workload a batch scheduler admits.
const (
	// KindApplication is a SparkApplication: its run is a submission (status.submissionID).
	KindApplication Kind = "SparkApplication"
	// KindSession is a SparkConnect session: its run is one server pod
	// (status.server.submissionID).
	KindSession Kind = "SparkConnect"
)

// Workload names a workload. The kind is part of it: a SparkApplication and a SparkConnect of
// the same name in the same namespace are two workloads.
type Workload struct {
	Kind Kind
	types.NamespacedName
}

// String is "namespace/name" for an application, "namespace/name (SparkConnect)" for a session.
func (k Workload) String() string {
	if k.Kind == KindApplication || k.Kind == "" {
		return k.NamespacedName.String()
	}
	return k.NamespacedName.String() + " (" + string(k.Kind) + ")"
}
