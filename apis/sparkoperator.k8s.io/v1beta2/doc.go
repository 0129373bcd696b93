/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package v1beta2 holds the sparkoperator.k8s.io/v1beta2 API: the
// SparkApplication and ScheduledSparkApplication custom resources.
//
// The wire format (group, version, kinds, field names and types) is kept
// compatible with the Kubeflow Spark operator's v1beta2 API, so manifests
// written for that operator can be applied unchanged.
//
// +groupName=sparkoperator.k8s.io
// +kubebuilder:object:generate=true
package v1beta2
