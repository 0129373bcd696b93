/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package v1alpha1 holds the scheduling.sparkop.dev/v1alpha1 API: the cluster-scoped Queue
// from which the embedded gang scheduler (spec.batchScheduler: gang) admits applications,
// with a quota per resource, a priority, an optional parent queue and rules for borrowing the
// parent's unused quota.
//
// +groupName=scheduling.sparkop.dev
// +kubebuilder:object:generate=true
package v1alpha1
