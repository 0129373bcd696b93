/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"
)

// tableOptions are the flags of a view that prints the API server's table of a kind, with the
// columns its CRD defines, as kubectl get does.
type tableOptions struct {
	*rootOptions
	allNamespaces, wide, noHeaders bool
	selector                       string
}

func (o *tableOptions) addFlags(cmd *cobra.Command, namespaced bool) {
	if namespaced {
		cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "list those of all namespaces")
	}
	cmd.Flags().StringVarP(&o.selector, "selector", "l", "", "label selector, such as team=data")
	cmd.Flags().BoolVar(&o.wide, "wide", false, "print the extra columns too")
	cmd.Flags().BoolVar(&o.noHeaders, "no-headers", false, "print the table without its header line")
}

func newQueuesCommand(root *rootOptions) *cobra.Command {
	o := &tableOptions{rootOptions: root}
	cmd := &cobra.Command{
		Use:     "queues",
		Aliases: []string{"queue"},
		Short:   "List the gang scheduler's queues: quotas, admitted and pending applications",
		Long: `List the gang scheduler's queues (scheduling.sparkop.dev Queues) with their quota and how many
applications each has admitted and has waiting. sparkctl list shows why each waiting application waits.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.print(cmd.Context(), "queues", false)
		},
	}
	o.addFlags(cmd, false)
	return cmd
}

func newReservationsCommand(root *rootOptions) *cobra.Command {
	o := &tableOptions{rootOptions: root}
	cmd := &cobra.Command{
		Use:     "reservations",
		Aliases: []string{"reservation"},
		Short:   "List the gang scheduler's Reservations: the room held for admitted applications",
		Long: `List the Reservations of the namespace, or of all namespaces with -A: for each admitted
application, its queue, the nodes planned for its pods and how many of them are bound.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.print(cmd.Context(), "reservations", true)
		},
	}
	o.addFlags(cmd, true)
	return cmd
}

// print fetches the table of resource (of scheduling.sparkop.dev/v1alpha1) and prints it.
func (o *tableOptions) print(ctx context.Context, resource string, namespaced bool) error {
	c, err := o.clients()
	if err != nil {
		return err
	}
	path := "/apis/scheduling.sparkop.dev/v1alpha1/" + resource
	if namespaced && !o.allNamespaces {
		path = "/apis/scheduling.sparkop.dev/v1alpha1/namespaces/" + url.PathEscape(c.namespace) + "/" + resource
	}
	req := c.kube.Discovery().RESTClient().Get().AbsPath(path).Param("includeObject", "Metadata").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	if o.selector != "" {
		req = req.Param("labelSelector", o.selector)
	}
	raw, err := req.Do(ctx).Raw()
	if err != nil {
		return fmt.Errorf("listing %s: %s (is the gang scheduler's CRD installed?)", resource, apiMessage(err))
	}
	return printTable(o.streams.Out, o.streams.ErrOut, raw, resource, printers.PrintOptions{
		Wide: o.wide, NoHeaders: o.noHeaders, WithNamespace: namespaced && o.allNamespaces})
}

// printTable prints a Table the API server sent, as kubectl does.
func printTable(out, errOut io.Writer, raw []byte, resource string, opts printers.PrintOptions) error {
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		return fmt.Errorf("reading the table of %s: %w", resource, err)
	}
	if len(table.Rows) == 0 {
		fmt.Fprintf(errOut, "No %s found.\n", resource)
		return nil
	}
	for i := range table.Rows {
		// The namespace column comes from each row's object.
		var m metav1.PartialObjectMetadata
		if err := json.Unmarshal(table.Rows[i].Object.Raw, &m); err == nil {
			table.Rows[i].Object.Object = &m
		}
	}
	return printers.NewTablePrinter(opts).PrintObj(&table, out)
}
