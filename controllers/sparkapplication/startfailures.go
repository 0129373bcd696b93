/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// This file holds what the operator says about pods that are on a node but whose containers
// cannot start: an image the kubelet cannot pull, a container the runtime cannot create (a
// ConfigMap or Secret key that is missing, for one). Such a pod stays Pending for good, and
// without this the application would read SUBMITTED with nothing said.

// startFailureReasons are the kubelet's reasons for a waiting container that will not start
// unless something changes, each with whether it can change at all for this pod (an invalid
// image name, or an image the pull policy forbids pulling, cannot).
var startFailureReasons = map[string]bool{
	"ErrImagePull":               false,
	"ImagePullBackOff":           false,
	"RegistryUnavailable":        false,
	"ImageInspectError":          false,
	"CreateContainerConfigError": false,
	"CreateContainerError":       false,
	"InvalidImageName":           true,
	"ErrImageNeverPull":          true,
}

// startFailure is one container of a pod that cannot start, in the kubelet's words.
type startFailure struct {
	container, reason, message string
	// permanent: waiting longer cannot help.
	permanent bool
}

// cannotStart returns the first container (init containers first) of a pod placed on a node
// that waits for a reason in startFailureReasons, or nil.
func cannotStart(pod *corev1.Pod) *startFailure {
	if pod == nil || pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil {
		return nil
	}
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range statuses {
			w := cs.State.Waiting
			if w == nil {
				continue
			}
			if permanent, ok := startFailureReasons[w.Reason]; ok {
				return &startFailure{container: cs.Name, reason: w.Reason, message: strings.TrimSpace(w.Message), permanent: permanent}
			}
		}
	}
	return nil
}

// cannotStartMarker is in every message that says a pod cannot start (and in no other the
// status carries): the conditions tell the two kinds of waiting driver apart by it.
const cannotStartMarker = " cannot start: "

// describe is how the status and events say that a pod cannot start.
func (f *startFailure) describe(role, pod string) string {
	msg := fmt.Sprintf("%s pod %s%scontainer %s %s", role, pod, cannotStartMarker, f.container, f.reason)
	if f.message != "" {
		msg += ": " + f.message
	}
	return msg
}

// placedAt is when a pod was bound to its node (its PodScheduled condition turned True), or,
// when that is not known, when it was created: the time a start failure is counted from.
func placedAt(pod *corev1.Pod) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return pod.CreationTimestamp.Time
}

// driverCannotStart keeps a driver that is placed but cannot start SUBMITTED and says why in the
// status and, once per kind of failure, in an event. A failure that waiting cannot mend ends the
// run at once; any other after Options.DriverStartTimeout (if set) from the driver's placement.
// Either way the driver pod is deleted, so that it cannot start after the run is said to have
// failed, and the restart policy decides whether the application runs again.
func (s *step) driverCannotStart(ctx context.Context, driver *corev1.Pod, f *startFailure) error {
	st := &s.app.Status
	msg := f.describe("driver", driver.Name)
	if timeout := s.r.Options.DriverStartTimeout; f.permanent || timeout > 0 {
		var wait time.Duration
		if !f.permanent {
			wait = placedAt(driver).Add(timeout).Sub(s.now)
		}
		if wait <= 0 {
			if err := s.deletePod(ctx, driver); err != nil {
				return err
			}
			if !f.permanent {
				msg += fmt.Sprintf(" (for more than %s)", timeout)
			}
			s.end(false, msg)
			s.warning("DriverCannotStart", "Monitor", st.AppState.ErrorMessage)
			return nil
		}
		s.requeue(wait)
	}
	if st.AppState.State != v1beta2.ApplicationStateSubmitted || st.AppState.ErrorMessage != msg {
		// ErrImagePull and ImagePullBackOff take turns while the kubelet retries: one event
		// per container that cannot start, not one per turn.
		if !strings.Contains(st.AppState.ErrorMessage, cannotStartMarker+"container "+f.container+" ") {
			s.warning("DriverCannotStart", "Monitor", msg)
		}
		s.moveTo(v1beta2.ApplicationStateSubmitted, msg)
	}
	return nil
}

// executorsCannotStart says which executors of the submission are placed but cannot start: the
// first one's failure, and how many more there are. Spark keeps asking for executors while the
// run goes on; the status says why none come. The first is the one whose pod name sorts first,
// so the message does not change with the order the cache lists pods in. Empty when every
// executor can start.
func executorsCannotStart(pods []corev1.Pod, submissionID string) string {
	var first *corev1.Pod
	var failure *startFailure
	count := 0
	for i := range pods {
		pod := &pods[i]
		if pod.Labels[v1beta2.SparkRoleLabel] != v1beta2.SparkRoleExecutor || !ofSubmission(pod, submissionID) {
			continue
		}
		if f := cannotStart(pod); f != nil {
			count++
			if first == nil || pod.Name < first.Name {
				first, failure = pod, f
			}
		}
	}
	if first == nil {
		return ""
	}
	msg := failure.describe("executor", first.Name)
	if count > 1 {
		msg += fmt.Sprintf(" (and %d more executor pods)", count-1)
	}
	return msg
}
