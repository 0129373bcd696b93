/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

import corev1 "k8s.io/api/core/v1"

// addTerminationMessage makes the kubelet keep the end of the driver container's log as its
// termination message when it exits with an error (Spark writes no termination-log file), so
// that a failed application's status carries the driver's last words. A file the container
// does write still wins: FallbackToLogsOnError reads the log only when the file is empty.
func addTerminationMessage(t *target) error {
	if t.role != RoleDriver {
		return nil
	}
	if c := t.container(); c.TerminationMessagePolicy == "" || c.TerminationMessagePolicy == corev1.TerminationMessageReadFile {
		c.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	}
	return nil
}
