/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"cmp"
	"context"
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
	var sel selection
	var output *outputFlags
	cmd := &cobra.Command{
		Use:     "status [NAME|SUBMISSION-ID|PATTERN]... [-l SELECTOR]",
		Aliases: []string{"describe"},
		Short:   "Show the state of SparkApplications, their drivers and their executors",
		Long: `Show the state of SparkApplications, their drivers and their executors. Each argument is a
name, a submission ID, or a glob pattern over either ('nightly-*'), as spark-submit --status
takes; -l selects by label.`,
		Args:              sel.args,
		ValidArgsFunction: root.completeApps,
		RunE: func(cmd *cobra.Command, args []string) error {
			printer, err := output.printer()
			if err != nil {
				return err
			}
			c, err := root.clients()
			if err != nil {
				return err
			}
			apps, err := sel.apps(cmd.Context(), c, args)
			if err != nil {
				return err
			}
			if printer != nil {
				// The whole applications, status included, for scripts.
				if sel.single(args) {
					return printer.PrintObj(&apps[0], root.streams.Out)
				}
				return printList(printer, &v1beta2.SparkApplicationList{Items: apps}, root.streams.Out)
			}
			for i := range apps {
				if i > 0 {
					fmt.Fprintln(root.streams.Out)
				}
				if err := statusOf(cmd.Context(), c, &apps[i], root.streams.Out); err != nil {
					return err
				}
			}
			return nil
		},
	}
	sel.addFlags(cmd)
	output = newOutputFlags(cmd, false)
	return cmd
}

// statusOf writes the status of app. Executor IDs come from the pods' spark-exec-id labels
// where the pods still exist.
func statusOf(ctx context.Context, c *clients, app *v1beta2.SparkApplication, out io.Writer) error {
	pods, err := c.appPods(ctx, app)
	if err != nil {
		return err
	}
	ids := map[string]string{}
	for _, p := range pods {
		if id := p.Labels[v1beta2.SparkExecutorIDLabel]; id != "" {
			ids[p.Name] = id
		}
	}
	return printStatus(out, app, ids, time.Now())
}

// printStatus writes the status of app; ids maps executor pod names to executor IDs where
// known, and times are shown relative to now.
func printStatus(out io.Writer, app *v1beta2.SparkApplication, ids map[string]string, now time.Time) error {
	st := &app.Status
	t := newTable(out)
	field := func(name, value string) { t.row(name+":", value) }
	field("Name", app.Name)
	field("Namespace", app.Namespace)
	field("State", displayState(app))
	if why := app.Status.Summary.Waiting; why != "" {
		field("Waiting", why)
	} else if why, ok := queuedReason(app); ok {
		field("Waiting", why)
	}
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
