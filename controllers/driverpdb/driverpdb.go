/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package driverpdb keeps the PodDisruptionBudget that spec.driverPodDisruptionBudget asks for:
// minAvailable 1 over the running driver, so a voluntary eviction (a node drain) cannot take a
// driver down and with it hours of work. As in the Kubeflow operator it is named after the
// driver pod, labelled and controlled like the operator's other objects, exists while the
// driver runs, and goes with the run (or, through its owner reference, with the application).
package driverpdb

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// FieldOwner is the server-side apply field manager of the budgets.
const FieldOwner = "spark-operator"

// Wanted reports whether the application asks for a driver PodDisruptionBudget.
func Wanted(app *v1beta2.SparkApplication) bool {
	return app.Spec.DriverPodDisruptionBudget != nil && *app.Spec.DriverPodDisruptionBudget
}

func labels(app *v1beta2.SparkApplication) map[string]string {
	return map[string]string{
		v1beta2.LabelAppName:            app.Name,
		v1beta2.LabelLaunchedByOperator: "true",
	}
}

// Ensure makes the budget protecting driver, the running driver of app, exist. Its selector
// names the driver's submission, so it never holds a pod of another run.
func Ensure(ctx context.Context, c client.Client, app *v1beta2.SparkApplication, driver *corev1.Pod) error {
	existing := &policyv1.PodDisruptionBudget{}
	err := c.Get(ctx, client.ObjectKey{Namespace: driver.Namespace, Name: driver.Name}, existing)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("getting PodDisruptionBudget %s/%s: %w", driver.Namespace, driver.Name, err)
	default:
		if ref := metav1.GetControllerOfNoCopy(existing); ref == nil || ref.UID != app.UID {
			return fmt.Errorf("PodDisruptionBudget %s/%s exists and is not controlled by SparkApplication %s",
				driver.Namespace, driver.Name, app.Name)
		}
		// Nothing of a budget changes during a run: one that selects this run's driver is
		// left alone, so a steady run costs no API request.
		if sel := existing.Spec.Selector; sel != nil && existing.DeletionTimestamp.IsZero() &&
			sel.MatchLabels[v1beta2.LabelSubmissionID] == driver.Labels[v1beta2.LabelSubmissionID] {
			return nil
		}
	}
	pdb := policyv1ac.PodDisruptionBudget(driver.Name, driver.Namespace).
		WithLabels(labels(app)).
		WithOwnerReferences(metav1ac.OwnerReference().
			WithAPIVersion(v1beta2.GroupVersion.String()).
			WithKind("SparkApplication").
			WithName(app.Name).
			WithUID(app.UID).
			WithController(true).
			WithBlockOwnerDeletion(true)).
		WithSpec(policyv1ac.PodDisruptionBudgetSpec().
			WithMinAvailable(intstr.FromInt32(1)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{
				v1beta2.LabelAppName:      app.Name,
				v1beta2.LabelSubmissionID: driver.Labels[v1beta2.LabelSubmissionID],
				v1beta2.SparkRoleLabel:    v1beta2.SparkRoleDriver,
			})))
	if err := c.Apply(ctx, pdb, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying PodDisruptionBudget %s/%s: %w", driver.Namespace, driver.Name, err)
	}
	return nil
}

// Delete removes every budget app controls, found by label: the driver it protected may have
// had another name than the spec gives now.
func Delete(ctx context.Context, c client.Client, app *v1beta2.SparkApplication) error {
	list := &policyv1.PodDisruptionBudgetList{}
	if err := c.List(ctx, list, client.InNamespace(app.Namespace), client.MatchingLabels(labels(app))); err != nil {
		return fmt.Errorf("listing PodDisruptionBudgets: %w", err)
	}
	var errs []error
	for i := range list.Items {
		pdb := &list.Items[i]
		ref := metav1.GetControllerOfNoCopy(pdb)
		if ref == nil || ref.UID != app.UID || !pdb.DeletionTimestamp.IsZero() {
			continue
		}
		uid := pdb.UID
		if err := c.Delete(ctx, pdb, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("deleting PodDisruptionBudget %s/%s: %w", pdb.Namespace, pdb.Name, err))
		}
	}
	return errors.Join(errs...)
}
