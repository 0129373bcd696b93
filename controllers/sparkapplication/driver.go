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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// This file holds the steps of a submitted run that follow its driver pod: SUBMITTED, RUNNING
// and UNKNOWN, decided by the pod's phase and what keeps it from running.

// followDriver moves the application along with its driver pod's phase.
func (s *step) followDriver(ctx context.Context) error {
	st := &s.app.Status
	driver := s.driver
	if driver == nil {
		pod, err := s.confirmDriverMissing(ctx)
		if err != nil || pod == nil && s.requeueAfter > 0 {
			return err
		}
		driver = pod
	}
	if driver == nil {
		name := st.DriverInfo.PodName
		if name == "" {
			name = "of submission " + st.SubmissionID
		}
		s.updateExecutors(v1beta2.DriverStateFailed)
		s.end(false, fmt.Sprintf("driver pod %s not found", name))
		s.warning(ReasonDriverNotFound, "Monitor", st.AppState.ErrorMessage)
		return nil
	}
	if id := sparkAppID(driver); id != "" {
		st.SparkApplicationID = id
	}
	st.DriverInfo.PodName = driver.Name
	if lost, wait := driverLost(driver, s.now, s.r.Options.DriverPodGracePeriod); lost != "" {
		s.updateExecutors(v1beta2.DriverStateFailed)
		s.end(false, lost)
		s.warning("DriverLost", "Monitor", lost)
		return nil
	} else if wait > 0 {
		s.requeue(wait)
	}
	if lost, err := s.driverNodeLost(ctx, driver); lost || err != nil {
		return err
	}
	ds := driverState(driver)
	s.updateExecutors(ds)
	if ds.IsTerminal() {
		s.releaseDriver(ctx)
	} else {
		s.ensureUI(ctx)
		s.protectDriver(ctx, driver)
	}
	switch ds {
	case v1beta2.DriverStatePending:
		return s.driverPending(ctx, driver)
	case v1beta2.DriverStateRunning:
		s.driverRunning(driver)
	case v1beta2.DriverStateCompleted:
		s.end(true, "")
		s.normal(ReasonDriverCompleted, "Monitor", fmt.Sprintf("driver pod %s completed", driver.Name))
	case v1beta2.DriverStateFailed:
		s.end(false, driverFailureMessage(driver))
		s.warning(ReasonDriverFailed, "Monitor", st.AppState.ErrorMessage)
	default:
		s.moveTo(v1beta2.ApplicationStateUnknown, fmt.Sprintf("driver pod %s is in phase %q", driver.Name, driver.Status.Phase))
	}
	return nil
}

// driverNodeLost ends the run when its driver's node has not been Ready for longer than
// Options.NodeLostTimeout, and deletes the driver pod. Its kubelet, away, cannot stop it, so
// the pod stays until the node comes back or is deleted or marked out of service; a retry
// waits for it to be gone, so that one application never has two drivers.
func (s *step) driverNodeLost(ctx context.Context, driver *corev1.Pod) (bool, error) {
	ready := func(node string, changed time.Time) *corev1.NodeCondition {
		return s.r.nodeReady.ready(ctx, s.r.APIReader, node, changed, s.now)
	}
	lost, wait := nodeLost(driver, ready, s.now, s.r.Options.NodeLostTimeout)
	if lost == "" {
		if wait > 0 {
			s.requeue(wait)
		}
		return false, nil
	}
	if err := s.deletePod(ctx, driver); err != nil {
		return false, err
	}
	s.updateExecutors(v1beta2.DriverStateFailed)
	s.end(false, lost)
	s.warning("DriverLost", "Monitor", lost)
	return true, nil
}

// driverPending keeps a pending driver SUBMITTED and says in the status, and once in an
// event, why the scheduler cannot place it, and whether it asks for more than any node has
// (then it never will be placed). After Options.UnschedulableTimeout (if set) the run fails
// with that reason; its driver is deleted, so that it cannot start after all once the
// application is said to have failed. A driver no scheduler has looked at for
// Options.NotPickedUpAfter (it names a scheduler that does not run) is said to wait for it.
func (s *step) driverPending(ctx context.Context, driver *corev1.Pod) error {
	st := &s.app.Status
	if f := cannotStart(driver); f != nil {
		return s.driverCannotStart(ctx, driver, f)
	}
	c := unschedulable(driver)
	if c == nil {
		msg, wait := notPickedUp(driver, s.now, s.r.Options.NotPickedUpAfter)
		if wait > 0 {
			s.requeue(wait)
		}
		if msg != "" {
			if st.AppState.State != v1beta2.ApplicationStateSubmitted || st.AppState.ErrorMessage != msg {
				s.moveTo(v1beta2.ApplicationStateSubmitted, msg)
				s.warning("DriverNotPickedUp", "Monitor", msg)
			}
			return nil
		}
		if s.from == v1beta2.ApplicationStateUnknown || st.AppState.ErrorMessage != "" {
			s.moveTo(v1beta2.ApplicationStateSubmitted, "")
		}
		return nil
	}
	msg := unschedulableMessage(driver, c)
	if over := beyondEveryNode(driver, s.r.nodes.allocatable(ctx, s.r.APIReader, s.now)); over != "" {
		msg += "; " + over
	}
	if timeout := s.r.Options.UnschedulableTimeout; timeout > 0 {
		wait := c.LastTransitionTime.Add(timeout).Sub(s.now)
		if wait <= 0 {
			if err := s.deletePod(ctx, driver); err != nil {
				return err
			}
			s.end(false, fmt.Sprintf("%s for more than %s", msg, timeout))
			s.warning("DriverUnschedulable", "Monitor", st.AppState.ErrorMessage)
			return nil
		}
		s.requeue(wait)
	}
	if st.AppState.State != v1beta2.ApplicationStateSubmitted || st.AppState.ErrorMessage != msg {
		s.moveTo(v1beta2.ApplicationStateSubmitted, msg)
		s.warning("DriverUnschedulable", "Monitor", msg)
	}
	return nil
}

// driverRunning keeps the application RUNNING, saying in its status which executors cannot
// start (and, when that begins, in an event), as Spark keeps asking for them.
func (s *step) driverRunning(driver *corev1.Pod) {
	st := &s.app.Status
	msg := executorsCannotStart(s.executors, st.SubmissionID)
	if s.from == v1beta2.ApplicationStateRunning && st.AppState.ErrorMessage == msg {
		return
	}
	if s.from != v1beta2.ApplicationStateRunning {
		s.normal(ReasonDriverRunning, "Monitor", fmt.Sprintf("driver pod %s is running", driver.Name))
	}
	if msg != "" && !strings.Contains(st.AppState.ErrorMessage, cannotStartMarker) {
		s.warning("ExecutorCannotStart", "Monitor", msg)
	}
	s.moveTo(v1beta2.ApplicationStateRunning, msg)
}

// confirmDriverMissing decides about a driver pod the cache does not show. Within the grace
// period it waits (requeue set); after it, it asks the API server, so that a lagging cache
// cannot fail a healthy run. It returns the pod when the API server has it after all.
func (s *step) confirmDriverMissing(ctx context.Context) (*corev1.Pod, error) {
	since := s.now.Sub(s.app.Status.LastSubmissionAttemptTime.Time)
	if grace := s.r.Options.DriverPodGracePeriod; since < grace {
		s.requeue(grace - since)
		return nil, nil
	}
	pods := &corev1.PodList{}
	if err := s.r.APIReader.List(ctx, pods, client.InNamespace(s.app.Namespace), client.MatchingLabels{
		v1beta2.LabelAppName:      s.app.Name,
		v1beta2.LabelSubmissionID: s.app.Status.SubmissionID,
		v1beta2.SparkRoleLabel:    v1beta2.SparkRoleDriver,
	}); err != nil || len(pods.Items) == 0 {
		return nil, err
	}
	return &pods.Items[0], nil
}
