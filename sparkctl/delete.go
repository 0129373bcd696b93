/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spf13/cobra"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

func newDeleteCommand(root *rootOptions) *cobra.Command {
	var sel selection
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete [NAME|SUBMISSION-ID|PATTERN]... [-l SELECTOR]",
		Short: "Delete SparkApplications",
		Long: `Delete SparkApplications. Each argument is a name, a submission ID, or a glob pattern over
either ('nightly-*'), as spark-submit --kill takes; -l selects by label. Unless one application
is named, the matching ones are listed and deleted only after confirmation (or with --yes).
Their driver and executor pods, Services and ConfigMaps are owned by them and removed by the
cluster's garbage collector.`,
		Args:              sel.args,
		ValidArgsFunction: root.completeApps,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := root.clients()
			if err != nil {
				return err
			}
			apps, err := sel.apps(cmd.Context(), c, args)
			if err != nil {
				return err
			}
			if !sel.single(args) && !yes {
				ok, err := confirm(root.streams, apps, c.namespace)
				if err != nil || !ok {
					return err
				}
			}
			for i := range apps {
				app := &apps[i]
				if err := c.ctrl.Delete(cmd.Context(), app, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
					return objectError(err, "sparkapplication", c.namespace, app.Name)
				}
				fmt.Fprintf(root.streams.Out, "sparkapplication %q deleted\n", app.Name)
			}
			return nil
		},
	}
	sel.addFlags(cmd)
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete what matches without asking")
	return cmd
}

// confirm lists apps and asks whether to delete them; only "y" or "yes" agrees.
func confirm(streams IOStreams, apps []v1beta2.SparkApplication, namespace string) (bool, error) {
	fmt.Fprintf(streams.Out, "These sparkapplications in namespace %q match:\n", namespace)
	if err := printAppTable(streams.Out, apps, false, false, time.Now()); err != nil {
		return false, err
	}
	fmt.Fprintf(streams.Out, "Delete these %d sparkapplications? [y/N]: ", len(apps))
	answer, err := bufio.NewReader(streams.In).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true, nil
	}
	fmt.Fprintln(streams.Out, "Nothing deleted.")
	return false, nil
}
