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
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// selection is which applications a command acts on: NAME arguments, each a name, a submission
// ID or a glob pattern over either (as spark-submit's --status and --kill take), and/or a label
// selector (-l).
type selection struct {
	selector string
}

func (s *selection) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&s.selector, "selector", "l", "", "label selector, such as team=data,tier!=dev")
}

func (s *selection) args(cmd *cobra.Command, args []string) error {
	if len(args) == 0 && s.selector == "" {
		return errors.New("name a sparkapplication, give a pattern such as 'nightly-*', or select by label with -l")
	}
	for _, p := range args {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("bad pattern %q: %w", p, err)
		}
	}
	return nil
}

// isPattern tells an argument with glob characters from a plain name.
func isPattern(arg string) bool { return strings.ContainsAny(arg, `*?[\`) }

// single tells whether args name exactly one application, with neither pattern nor selector.
func (s *selection) single(args []string) bool {
	return s.selector == "" && len(args) == 1 && !isPattern(args[0])
}

// apps returns the applications of c's namespace that args and the selector choose, sorted by
// name. A plain name that is no application's is looked up among submission IDs; nothing
// chosen is an error naming what was asked for.
func (s *selection) apps(ctx context.Context, c *clients, args []string) ([]v1beta2.SparkApplication, error) {
	if s.single(args) {
		app := &v1beta2.SparkApplication{}
		err := c.ctrl.Get(ctx, client.ObjectKey{Namespace: c.namespace, Name: args[0]}, app)
		if err == nil {
			return []v1beta2.SparkApplication{*app}, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, objectError(err, "sparkapplication", c.namespace, args[0])
		}
	}
	opts, err := listOptionsFor(c.namespace, s.selector)
	if err != nil {
		return nil, err
	}
	var list v1beta2.SparkApplicationList
	if err := c.ctrl.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("listing sparkapplications: %s", apiMessage(err))
	}
	var chosen []v1beta2.SparkApplication
	for _, app := range list.Items {
		if len(args) == 0 || slices.ContainsFunc(args, func(p string) bool { return matches(p, &app) }) {
			chosen = append(chosen, app)
		}
	}
	if len(chosen) == 0 && s.single(args) {
		return nil, objectError(apierrors.NewNotFound(v1beta2.GroupVersion.WithResource("sparkapplications").GroupResource(), args[0]),
			"sparkapplication", c.namespace, args[0])
	}
	if len(chosen) == 0 {
		what := strings.Join(quoteAll(args), ", ")
		if s.selector != "" {
			what = strings.TrimPrefix(what+" with labels "+s.selector, " ")
		}
		return nil, fmt.Errorf("no sparkapplication matches %s in namespace %q", what, c.namespace)
	}
	sortApps(chosen)
	return chosen, nil
}

// matches tells whether pattern matches app's name or its current submission ID.
func matches(pattern string, app *v1beta2.SparkApplication) bool {
	for _, s := range []string{app.Name, app.Status.SubmissionID} {
		if ok, _ := path.Match(pattern, s); ok && s != "" {
			return true
		}
	}
	return false
}

func quoteAll(s []string) []string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return q
}

// listOptionsFor lists the applications of namespace ("" for all) matching selector.
func listOptionsFor(namespace, selector string) ([]client.ListOption, error) {
	opts := []client.ListOption{client.InNamespace(namespace)}
	if selector != "" {
		sel, err := labels.Parse(selector)
		if err != nil {
			return nil, fmt.Errorf("label selector %q: %w", selector, err)
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
	}
	return opts, nil
}

func sortApps(apps []v1beta2.SparkApplication) {
	slices.SortFunc(apps, func(a, b v1beta2.SparkApplication) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
}
