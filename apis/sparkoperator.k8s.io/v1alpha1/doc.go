/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package v1alpha1 holds the sparkoperator.k8s.io/v1alpha1 API: the SparkConnect custom
// resource, a long-running Spark Connect server with its executors.
//
// The wire format (group, version, kind, field names and types) is kept compatible with the
// Kubeflow Spark operator's v1alpha1 API (v2.5.2), so manifests and clients written for that
// operator work unchanged.
//
// +groupName=sparkoperator.k8s.io
// +kubebuilder:object:generate=true
package v1alpha1
