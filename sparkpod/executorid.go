/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

import (
	"strconv"
	"strings"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// ExecutorID is the id Spark gave an executor pod: its spark-exec-id label, or else the
// "-exec-<id>" suffix Spark puts on executor pod names. Spark numbers an application's
// executors from 1 in the order it asks for them. false when neither reads as a positive
// number.
func ExecutorID(podName string, labels map[string]string) (int, bool) {
	if id, err := strconv.Atoi(labels[v1beta2.SparkExecutorIDLabel]); err == nil && id > 0 {
		return id, true
	}
	if i := strings.LastIndex(podName, "-exec-"); i >= 0 {
		if id, err := strconv.Atoi(podName[i+len("-exec-"):]); err == nil && id > 0 {
			return id, true
		}
	}
	return 0, false
}
