/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// Output formats of list.
const (
	outputTable = ""
	outputWide  = "wide"
	outputJSON  = "json"
	outputYAML  = "yaml"
	outputName  = "name"
)

type listOptions struct {
	*rootOptions
	allNamespaces bool
	output        string
}

func newListCommand(root *rootOptions) *cobra.Command {
	o := &listOptions{rootOptions: root}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List SparkApplications",
		Long: `List the SparkApplications of the namespace, or of all namespaces with -A.

ATTEMPTS is submission attempts / execution attempts; SUBMITTED and FINISHED are how long ago the
last submission attempt and the end of the application were.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "list the applications of all namespaces")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "output format: wide, json, yaml or name")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(
		[]cobra.Completion{outputWide, outputJSON, outputYAML, outputName}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (o *listOptions) run(cmd *cobra.Command) error {
	switch o.output {
	case outputTable, outputWide, outputJSON, outputYAML, outputName:
	default:
		return fmt.Errorf("unknown output format %q: use wide, json, yaml or name", o.output)
	}
	c, err := o.clients()
	if err != nil {
		return err
	}
	var opts []client.ListOption
	if !o.allNamespaces {
		opts = append(opts, client.InNamespace(c.namespace))
	}
	var list v1beta2.SparkApplicationList
	if err := c.ctrl.List(cmd.Context(), &list, opts...); err != nil {
		return fmt.Errorf("listing sparkapplications: %s", apiMessage(err))
	}
	slices.SortFunc(list.Items, func(a, b v1beta2.SparkApplication) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})

	out := o.streams.Out
	switch o.output {
	case outputJSON, outputYAML:
		return printList(out, &list, o.output)
	case outputName:
		for _, app := range list.Items {
			fmt.Fprintf(out, "sparkapplication.%s/%s\n", v1beta2.GroupName, app.Name)
		}
		return nil
	}
	if len(list.Items) == 0 {
		if o.allNamespaces {
			fmt.Fprintln(o.streams.ErrOut, "No sparkapplications found.")
		} else {
			fmt.Fprintf(o.streams.ErrOut, "No sparkapplications found in namespace %q.\n", c.namespace)
		}
		return nil
	}
	return printAppTable(out, list.Items, o.allNamespaces, o.output == outputWide, time.Now())
}

// printList writes the list as kubectl -o json or -o yaml would: a SparkApplicationList whose
// items carry their kind, without managed fields.
func printList(out io.Writer, list *v1beta2.SparkApplicationList, format string) error {
	list.APIVersion, list.Kind = v1beta2.GroupVersion.String(), "SparkApplicationList"
	for i := range list.Items {
		list.Items[i].APIVersion, list.Items[i].Kind = v1beta2.GroupVersion.String(), "SparkApplication"
		list.Items[i].ManagedFields = nil
	}
	return printObject(out, list, format)
}

// printObject writes obj as JSON (indented as kubectl does) or YAML.
func printObject(out io.Writer, obj any, format string) error {
	var data []byte
	var err error
	if format == outputJSON {
		data, err = json.MarshalIndent(obj, "", "    ")
		data = append(data, '\n')
	} else {
		data, err = yaml.Marshal(obj)
	}
	if err != nil {
		return err
	}
	_, err = out.Write(data)
	return err
}

// printAppTable writes the table of list; ages are relative to now.
func printAppTable(out io.Writer, apps []v1beta2.SparkApplication, allNamespaces, wide bool, now time.Time) error {
	headers := []string{"NAME", "STATE", "ATTEMPTS", "SUBMITTED", "FINISHED", "AGE"}
	if allNamespaces {
		headers = append([]string{"NAMESPACE"}, headers...)
	}
	if wide {
		headers = append(headers, "TYPE", "DRIVER", "UI ADDRESS", "APPLICATION ID")
	}
	t := newTable(out, headers...)
	for _, app := range apps {
		st := &app.Status
		row := []string{
			app.Name,
			stateString(st.AppState.State),
			fmt.Sprintf("%d/%d", st.SubmissionAttempts, st.ExecutionAttempts),
			age(st.LastSubmissionAttemptTime, now),
			age(st.TerminationTime, now),
			age(app.CreationTimestamp, now),
		}
		if allNamespaces {
			row = append([]string{app.Namespace}, row...)
		}
		if wide {
			row = append(row, orNone(string(app.Spec.Type)), orNone(st.DriverInfo.PodName),
				orNone(st.DriverInfo.WebUIAddress), orNone(st.SparkApplicationID))
		}
		t.row(row...)
	}
	return t.flush()
}

// stateString names an application state; the empty state of an application the operator has
// not seen yet reads NEW.
func stateString(s v1beta2.ApplicationStateType) string {
	if s == v1beta2.ApplicationStateNew {
		return "NEW"
	}
	return string(s)
}
