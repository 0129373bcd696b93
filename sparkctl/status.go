/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spf13/cobra"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

func newStatusCommand(root *rootOptions) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:               "status NAME",
		Short:             "Show the state of a SparkApplication, its driver and its executors",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: root.completeApps,
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != outputTable && output != outputJSON && output != outputYAML {
				return fmt.Errorf("unknown output format %q: use json or yaml", output)
			}
			c, err := root.clients()
			if err != nil {
				return err
			}
			app, err := c.getApp(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if output != outputTable {
				// The whole application, status included, for scripts.
				app.APIVersion, app.Kind = v1beta2.GroupVersion.String(), "SparkApplication"
				app.ManagedFields = nil
				return printObject(root.streams.Out, app, output)
			}
			// Executor IDs come from the pods' spark-exec-id labels where the pods still exist.
			pods, err := c.appPods(cmd.Context(), app)
			if err != nil {
				return err
			}
			ids := map[string]string{}
			for _, p := range pods {
				if id := p.Labels[v1beta2.SparkExecutorIDLabel]; id != "" {
					ids[p.Name] = id
				}
			}
			return printStatus(root.streams.Out, app, ids, time.Now())
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml (the whole application)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(
		[]cobra.Completion{outputJSON, outputYAML}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// printStatus writes the status of app; ids maps executor pod names to executor IDs where
// known, and times are shown relative to now.
func printStatus(out io.Writer, app *v1beta2.SparkApplication, ids map[string]string, now time.Time) error {
	st := &app.Status
	t := newTable(out)
	field := func(name, value string) { t.row(name+":", value) }
	field("Name", app.Name)
	field("Namespace", app.Namespace)
	field("State", stateString(st.AppState.State))
	field("Submission attempts", strconv.Itoa(int(st.SubmissionAttempts)))
	field("Execution attempts", strconv.Itoa(int(st.ExecutionAttempts)))
	field("Submitted", timeAndAge(st.LastSubmissionAttemptTime, now))
	field("Finished", timeAndAge(st.TerminationTime, now))
	field("Application ID", orNone(st.SparkApplicationID))
	field("Driver pod", orNone(st.DriverInfo.PodName))
	ui := orNone(st.DriverInfo.WebUIAddress)
	if st.DriverInfo.WebUIServiceName != "" {
		ui += " (service " + st.DriverInfo.WebUIServiceName + ")"
	}
	field("Spark UI", ui)
	if st.DriverInfo.WebUIIngressAddress != "" {
		field("Spark UI ingress", st.DriverInfo.WebUIIngressAddress)
	}
	if st.AppState.ErrorMessage != "" {
		field("Error", st.AppState.ErrorMessage)
	}
	if err := t.flush(); err != nil {
		return err
	}

	if len(st.ExecutorState) == 0 {
		_, err := fmt.Fprintln(out, "\nExecutors: <none>")
		return err
	}
	type executor struct{ id, pod, state string }
	var execs []executor
	for pod, state := range st.ExecutorState {
		id := ids[pod]
		if id == "" {
			id = executorIDFromPodName(pod)
		}
		execs = append(execs, executor{id, pod, string(state)})
	}
	slices.SortFunc(execs, func(a, b executor) int {
		ai, aerr := strconv.Atoi(a.id)
		bi, berr := strconv.Atoi(b.id)
		if aerr == nil && berr == nil && ai != bi {
			return cmp.Compare(ai, bi)
		}
		return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.pod, b.pod))
	})
	fmt.Fprintln(out, "\nExecutors:")
	t = newTable(out, "ID", "POD", "STATE")
	for _, e := range execs {
		t.row(orNone(e.id), e.pod, e.state)
	}
	return t.flush()
}

// executorIDFromPodName reads the ID out of Spark's executor pod name, "<prefix>-exec-<id>".
func executorIDFromPodName(pod string) string {
	i := strings.LastIndex(pod, "-exec-")
	if i < 0 {
		return ""
	}
	id := pod[i+len("-exec-"):]
	if _, err := strconv.Atoi(id); err != nil {
		return ""
	}
	return id
}

// timeAndAge shows a time in UTC and how long ago it was.
func timeAndAge(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return none
	}
	return t.UTC().Format(time.RFC3339) + " (" + age(t, now) + " ago)"
}
