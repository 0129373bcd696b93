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
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
)

func init() { utilruntime.Must(v1alpha1.AddToScheme(scheme)) }

// newSessionCommand groups the commands on Spark Connect sessions (SparkConnects).
func newSessionCommand(root *rootOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "session",
		Aliases: []string{"sessions", "connect"},
		Short:   "List, show and delete Spark Connect sessions (SparkConnects)",
		Long: `Spark Connect sessions are SparkConnects (sparkoperator.k8s.io/v1alpha1): a long-running Spark
Connect server with its executors, which clients reach at sc://<service>.<namespace>.svc:15002.`,
	}
	cmd.AddCommand(newSessionListCommand(root), newSessionStatusCommand(root), newSessionDeleteCommand(root))
	return cmd
}

func newSessionListCommand(root *rootOptions) *cobra.Command {
	var allNamespaces bool
	var output *outputFlags
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List SparkConnects",
		Long:    "List the SparkConnects of the namespace, or of all namespaces with -A. EXECUTORS is running/all.",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			printer, err := output.printer()
			if err != nil {
				return err
			}
			c, err := root.clients()
			if err != nil {
				return err
			}
			var opts []client.ListOption
			if !allNamespaces {
				opts = append(opts, client.InNamespace(c.namespace))
			}
			var list v1alpha1.SparkConnectList
			if err := c.ctrl.List(cmd.Context(), &list, opts...); err != nil {
				return fmt.Errorf("listing sparkconnects: %s", apiMessage(err))
			}
			slices.SortFunc(list.Items, func(a, b v1alpha1.SparkConnect) int {
				return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
			})
			out := root.streams.Out
			if printer != nil {
				return printList(printer, &list, out)
			}
			if len(list.Items) == 0 {
				where := fmt.Sprintf(" in namespace %q", c.namespace)
				if allNamespaces {
					where = ""
				}
				fmt.Fprintf(root.streams.ErrOut, "No sparkconnects found%s.\n", where)
				return nil
			}
			return printSessionTable(out, list.Items, allNamespaces, time.Now())
		},
	}
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "list the sessions of all namespaces")
	output = newOutputFlags(cmd, false)
	return cmd
}

func printSessionTable(out io.Writer, sessions []v1alpha1.SparkConnect, allNamespaces bool, now time.Time) error {
	headers := []string{"NAME", "STATE", "SERVER", "SERVICE", "EXECUTORS", "AGE"}
	if allNamespaces {
		headers = append([]string{"NAMESPACE"}, headers...)
	}
	t := newTable(out, headers...)
	for _, s := range sessions {
		st := &s.Status
		row := []string{s.Name, sessionState(st), orNone(st.Server.PodName), orNone(st.Server.ServiceName),
			executorSummary(st.Executors), age(s.CreationTimestamp, now)}
		if allNamespaces {
			row = append([]string{s.Namespace}, row...)
		}
		t.row(row...)
	}
	return t.flush()
}

func newSessionStatusCommand(root *rootOptions) *cobra.Command {
	var output *outputFlags
	cmd := &cobra.Command{
		Use:               "status NAME",
		Short:             "Show the state of a SparkConnect, its server and its executors",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: root.completeSessions,
		RunE: func(cmd *cobra.Command, args []string) error {
			printer, err := output.printer()
			if err != nil {
				return err
			}
			c, err := root.clients()
			if err != nil {
				return err
			}
			s := &v1alpha1.SparkConnect{}
			if err := c.ctrl.Get(cmd.Context(), client.ObjectKey{Namespace: c.namespace, Name: args[0]}, s); err != nil {
				return objectError(err, "sparkconnect", c.namespace, args[0])
			}
			if printer != nil {
				return printer.PrintObj(s, root.streams.Out)
			}
			return printSessionStatus(root.streams.Out, s, time.Now())
		},
	}
	output = newOutputFlags(cmd, false)
	return cmd
}

// printSessionStatus writes the status of s, times relative to now.
func printSessionStatus(out io.Writer, s *v1alpha1.SparkConnect, now time.Time) error {
	st := &s.Status
	t := newTable(out)
	field := func(name, value string) { t.row(name+":", value) }
	field("Name", s.Name)
	field("Namespace", s.Namespace)
	field("State", sessionState(st))
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionServerPodReady); c != nil {
		field("Server ready", fmt.Sprintf("%s (%s: %s)", c.Status, c.Reason, c.Message))
	}
	field("Server pod", orNone(st.Server.PodName))
	field("Server IP", orNone(st.Server.PodIP))
	field("Service", orNone(st.Server.ServiceName))
	if st.Server.ServiceName != "" {
		field("Connect URL", fmt.Sprintf("sc://%s.%s.svc:15002", st.Server.ServiceName, s.Namespace))
	}
	field("Started", timeAndAge(st.StartTime, now))
	field("Last update", timeAndAge(st.LastUpdateTime, now))
	field("Executors", executorDetail(st.Executors))
	return t.flush()
}

// sessionState is the state to show: Queued while the operator's batch scheduler holds the
// server back (Provisioning, with the reason in ServerPodReady), else the state itself.
func sessionState(st *v1alpha1.SparkConnectStatus) string {
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionServerPodReady); c != nil &&
		c.Reason == v1alpha1.ReasonQueued && st.State == v1alpha1.SparkConnectStateProvisioning {
		return "Queued"
	}
	if st.State == v1alpha1.SparkConnectStateNew {
		return "New"
	}
	return string(st.State)
}

// executorSummary is running/all executor pods.
func executorSummary(counts map[string]int) string {
	all := 0
	for _, n := range counts {
		all += n
	}
	return fmt.Sprintf("%d/%d", counts["running"], all)
}

// executorDetail lists the executor counts by state: "running 2, failed 1".
func executorDetail(counts map[string]int) string {
	if len(counts) == 0 {
		return none
	}
	var parts []string
	for _, state := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, state+" "+strconv.Itoa(counts[state]))
	}
	return strings.Join(parts, ", ")
}

func newSessionDeleteCommand(root *rootOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a SparkConnect",
		Long: `Delete a SparkConnect. Its server pod, Service and ConfigMap are owned by it, and the
executors by the server pod: the cluster's garbage collector removes them all.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: root.completeSessions,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := root.clients()
			if err != nil {
				return err
			}
			s := &v1alpha1.SparkConnect{ObjectMeta: metav1.ObjectMeta{Namespace: c.namespace, Name: args[0]}}
			if err := c.ctrl.Delete(cmd.Context(), s, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
				return objectError(err, "sparkconnect", c.namespace, args[0])
			}
			fmt.Fprintf(root.streams.Out, "sparkconnect %q deleted\n", args[0])
			return nil
		},
	}
}

// completeSessions completes SparkConnect names in the selected namespace.
func (o *rootOptions) completeSessions(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return o.completeNames(cmd, &v1alpha1.SparkConnectList{}, toComplete)
}
