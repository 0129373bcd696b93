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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/internal/ssa"
)

// metricsConfigMap is the ConfigMap for the monitoring configuration app gives inline, or nil
// when it gives none (no monitoring, or only files inside the image).
func metricsConfigMap(app *v1beta2.SparkApplication) *corev1.ConfigMap {
	data := app.InlineMetricsConfig()
	if len(data) == 0 {
		return nil
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: app.Namespace,
			Name:      app.MetricsConfigMapName(),
			Labels: map[string]string{
				v1beta2.LabelAppName:            app.Name,
				v1beta2.LabelLaunchedByOperator: "true",
			},
		},
		Data: data,
	}
}

// ensureMetricsConfigMap writes the application's inline monitoring configuration before its
// pods are created, since they mount it. It belongs to the application, not to one run, so a
// rerun finds it in place and only a changed configuration is written again. It is written
// with server-side apply (internal/ssa), so what others add to it stays.
func (r *Reconciler) ensureMetricsConfigMap(ctx context.Context, app *v1beta2.SparkApplication) error {
	want := metricsConfigMap(app)
	if want == nil {
		return nil
	}
	if err := controllerutil.SetControllerReference(app, want, r.Scheme); err != nil {
		return err
	}
	_, err := ssa.Apply(ctx, r.Client, r.APIReader, ssa.ConfigMap(want), &corev1.ConfigMap{}, ssa.ControlledBy(app, "SparkApplication"))
	if err != nil {
		return fmt.Errorf("the metrics ConfigMap: %w", err)
	}
	return nil
}
