/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// newSuspendCommand makes suspend (suspend true) or resume (false): they set spec.suspend.
func newSuspendCommand(root *rootOptions, suspend bool) *cobra.Command {
	use, short, done := "suspend NAME...", "Suspend SparkApplications: stop their run, keep them to resume", "suspended"
	if !suspend {
		use, short, done = "resume NAME...", "Resume suspended SparkApplications: submit them again", "resumed"
	}
	return &cobra.Command{
		Use:               use,
		Short:             short,
		Long:              short + ". It sets spec.suspend, which the operator acts on; sparkctl wait --for=suspended (or running) waits for it.",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: root.completeApps,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := root.clients()
			if err != nil {
				return err
			}
			for _, name := range args {
				if err := setSuspend(cmd.Context(), c, name, suspend); err != nil {
					return err
				}
				fmt.Fprintf(root.streams.Out, "sparkapplication/%s %s\n", name, done)
			}
			return nil
		},
	}
}

func setSuspend(ctx context.Context, c *clients, name string, suspend bool) error {
	patch := fmt.Appendf(nil, `{"spec":{"suspend":%t}}`, suspend)
	app := &v1beta2.SparkApplication{}
	app.Namespace, app.Name = c.namespace, name
	if err := c.ctrl.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return objectError(err, "sparkapplication", c.namespace, name)
	}
	return nil
}
