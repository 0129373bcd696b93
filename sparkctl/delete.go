/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spf13/cobra"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

func newDeleteCommand(root *rootOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a SparkApplication",
		Long: `Delete a SparkApplication. Its driver and executor pods, Services and ConfigMaps are
owned by it and removed by the cluster's garbage collector.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: root.completeApps,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := root.clients()
			if err != nil {
				return err
			}
			app := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: c.namespace, Name: args[0]}}
			if err := c.ctrl.Delete(cmd.Context(), app, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
				return objectError(err, "sparkapplication", c.namespace, args[0])
			}
			fmt.Fprintf(root.streams.Out, "sparkapplication %q deleted\n", args[0])
			return nil
		},
	}
}
