/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package sparkpod is the one place that says what a SparkApplication's spec means for its
// driver and executor pods: what each pod asks the cluster for (its demand), how Spark sizes
// parse, and the settings written onto the pods. The native submitter, the spark-submit pod
// templates, the mutating webhook, quota validation and every batch scheduler read it here,
// so that what a scheduler admits is exactly what the pods request.
package sparkpod
