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
	"io"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

type listOptions struct {
	*rootOptions
	allNamespaces bool
	selector      string
	watch         bool
	noHeaders     bool
	output        *outputFlags
}

func newListCommand(root *rootOptions) *cobra.Command {
	o := &listOptions{rootOptions: root}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls", "get"},
		Short:   "List SparkApplications",
		Long: `List the SparkApplications of the namespace, or of all namespaces with -A.
ATTEMPTS is submission attempts / execution attempts; SUBMITTED and FINISHED are how long ago the
last submission attempt and the end of the application were. With --watch, a row follows for
every change until interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "list the applications of all namespaces")
	cmd.Flags().StringVarP(&o.selector, "selector", "l", "", "label selector, such as team=data,tier!=dev")
	cmd.Flags().BoolVarP(&o.watch, "watch", "w", false, "after listing, print each change of an application until interrupted")
	cmd.Flags().BoolVar(&o.noHeaders, "no-headers", false, "print the table without its header line")
	o.output = newOutputFlags(cmd, true)
	return cmd
}

func (o *listOptions) run(cmd *cobra.Command) error {
	printer, err := o.output.printer()
	if err != nil {
		return err
	}
	c, err := o.clients()
	if err != nil {
		return err
	}
	ns := c.namespace
	if o.allNamespaces {
		ns = "" // every namespace
	}
	opts, err := listOptionsFor(ns, o.selector)
	if err != nil {
		return err
	}
	var list v1beta2.SparkApplicationList
	if err := c.ctrl.List(cmd.Context(), &list, opts...); err != nil {
		return fmt.Errorf("listing sparkapplications: %s", apiMessage(err))
	}
	sortApps(list.Items)
	out := o.streams.Out
	table := printers.NewTablePrinter(printers.PrintOptions{Wide: o.output.format() == outputWide, WithNamespace: o.allNamespaces, NoHeaders: o.noHeaders})
	print := func(apps ...v1beta2.SparkApplication) error {
		if printer == nil {
			return table.PrintObj(appTable(apps, time.Now()), out)
		}
		for i := range apps {
			if err := printer.PrintObj(&apps[i], out); err != nil {
				return err
			}
		}
		return nil
	}
	switch {
	case printer != nil && !o.watch:
		return printList(printer, &list, out)
	case len(list.Items) == 0 && printer == nil:
		if o.allNamespaces {
			fmt.Fprintln(o.streams.ErrOut, "No sparkapplications found.")
		} else {
			fmt.Fprintf(o.streams.ErrOut, "No sparkapplications found in namespace %q.\n", c.namespace)
		}
	default:
		if err := print(list.Items...); err != nil {
			return err
		}
	}
	if !o.watch {
		return nil
	}
	return watchApps(cmd.Context(), c, opts, list.ResourceVersion, func(app *v1beta2.SparkApplication) error { return print(*app) })
}

// watchApps calls print for each change of the applications opts select after resourceVersion,
// until ctx ends. The API server closes watches now and then; the watch goes on from the last
// change seen.
func watchApps(ctx context.Context, c *clients, opts []client.ListOption, resourceVersion string, print func(*v1beta2.SparkApplication) error) error {
	for ctx.Err() == nil {
		raw := &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: resourceVersion}}
		w, err := c.ctrl.Watch(ctx, &v1beta2.SparkApplicationList{}, append([]client.ListOption{raw}, opts...)...)
		if err != nil {
			return fmt.Errorf("watching sparkapplications: %s", apiMessage(err))
		}
		for ev := range w.ResultChan() {
			app, ok := ev.Object.(*v1beta2.SparkApplication)
			if ctx.Err() != nil {
				return nil // interrupted
			}
			if ev.Type == watch.Error || !ok {
				w.Stop()
				return fmt.Errorf("watching sparkapplications: %s", apiMessage(apierrors.FromObject(ev.Object)))
			}
			resourceVersion = app.ResourceVersion
			if err := print(app); err != nil {
				w.Stop()
				return err
			}
		}
	}
	return nil
}

// printList prints list as kubectl get does: as an unstructured list with the kind of each
// item, which every printer of cli-runtime takes (its name printer refuses typed lists).
func printList(p printers.ResourcePrinter, list runtime.Object, out io.Writer) error {
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	gvk, err := apiutil.GVKForObject(list, scheme)
	if err != nil {
		return err
	}
	u := &unstructured.UnstructuredList{}
	u.SetGroupVersionKind(gvk)
	for _, item := range items {
		itemGVK, err := apiutil.GVKForObject(item, scheme)
		if err != nil {
			return err
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(item)
		if err != nil {
			return err
		}
		u.Items = append(u.Items, unstructured.Unstructured{Object: obj})
		u.Items[len(u.Items)-1].SetGroupVersionKind(itemGVK)
	}
	return p.PrintObj(u, out)
}

// appTable is the table of apps for cli-runtime's table printer: the columns of -o wide have
// priority 1, and the printer adds the namespace column with -A. Ages are relative to now.
func appTable(apps []v1beta2.SparkApplication, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string"}, {Name: "State", Type: "string"}, {Name: "Attempts", Type: "string"},
		{Name: "Submitted", Type: "string"}, {Name: "Finished", Type: "string"}, {Name: "Age", Type: "string"},
		{Name: "Type", Type: "string", Priority: 1}, {Name: "Driver", Type: "string", Priority: 1},
		{Name: "UI Address", Type: "string", Priority: 1}, {Name: "Application ID", Type: "string", Priority: 1},
	}}
	for i := range apps {
		app, st := &apps[i], &apps[i].Status
		t.Rows = append(t.Rows, metav1.TableRow{Object: runtime.RawExtension{Object: app}, Cells: []any{
			app.Name,
			displayState(app),
			fmt.Sprintf("%d/%d", st.SubmissionAttempts, st.ExecutionAttempts),
			age(st.LastSubmissionAttemptTime, now),
			age(st.TerminationTime, now),
			age(app.CreationTimestamp, now),
			orNone(string(app.Spec.Type)), orNone(st.DriverInfo.PodName), orNone(st.DriverInfo.WebUIAddress), orNone(st.SparkApplicationID),
		}})
	}
	return t
}

// printAppTable writes the table of apps as list does; ages are relative to now.
func printAppTable(out io.Writer, apps []v1beta2.SparkApplication, allNamespaces, wide bool, now time.Time) error {
	return printers.NewTablePrinter(printers.PrintOptions{Wide: wide, WithNamespace: allNamespaces}).PrintObj(appTable(apps, now), out)
}

// displayState is the state a user reads: the operator's status.summary, as kubectl get shows
// it; for a status an older operator wrote, QUEUED while the application's batch scheduler holds
// it back (the Queued condition; the stored state stays NEW as Kubeflow tools expect), else
// its state.
func displayState(app *v1beta2.SparkApplication) string {
	if s := app.Status.Summary.State; s != "" {
		return s
	}
	if _, ok := queuedReason(app); ok {
		return "QUEUED"
	}
	return stateString(app.Status.AppState.State)
}

// queuedReason says why a held application waits, if it does.
func queuedReason(app *v1beta2.SparkApplication) (string, bool) {
	switch app.Status.AppState.State {
	case v1beta2.ApplicationStateNew, v1beta2.ApplicationStatePendingRerun, v1beta2.ApplicationStateResuming:
	default:
		return "", false
	}
	for _, c := range app.Status.Conditions {
		if c.Type == "Queued" && c.Status == metav1.ConditionTrue {
			return c.Message, true
		}
	}
	return "", false
}

// stateString names an application state; the empty state of an application the operator has
// not seen yet reads NEW.
func stateString(s v1beta2.ApplicationStateType) string {
	if s == v1beta2.ApplicationStateNew {
		return "NEW"
	}
	return string(s)
}
