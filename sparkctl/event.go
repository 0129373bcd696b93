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
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/spf13/cobra"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// Events are read through the core v1 API. The operator records events.k8s.io/v1 events and
// Kubernetes components (scheduler, kubelet) core v1 ones; both APIs serve the same objects,
// and core v1 shows the events.k8s.io fields under their older names (regarding is
// involvedObject, note is message), so one list holds them all.

type eventOptions struct {
	*rootOptions
	follow bool
}

func newEventCommand(root *rootOptions) *cobra.Command {
	o := &eventOptions{rootOptions: root}
	cmd := &cobra.Command{
		Use:     "event NAME",
		Aliases: []string{"events"},
		Short:   "Show the events of a SparkApplication and of its driver and executor pods",
		Long: `Show the events of a SparkApplication and of its driver and executor pods, oldest first.
With -f, keep watching and print new events as they come, until interrupted.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: root.completeApps,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), args[0])
		},
	}
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "watch for new events until interrupted")
	return cmd
}

// eventMatcher decides which events belong to one application.
type eventMatcher struct {
	ctx  context.Context
	c    *clients
	app  *v1beta2.SparkApplication
	pods map[string]bool // pod name -> belongs to the app (a cache of lookups)
}

func newEventMatcher(ctx context.Context, c *clients, app *v1beta2.SparkApplication) (*eventMatcher, error) {
	m := &eventMatcher{ctx: ctx, c: c, app: app, pods: map[string]bool{}}
	m.pods[driverPodName(app)] = true
	for pod := range app.Status.ExecutorState {
		m.pods[pod] = true
	}
	pods, err := c.appPods(ctx, app)
	if err != nil {
		return nil, err
	}
	for _, p := range pods {
		m.pods[p.Name] = true
	}
	return m, nil
}

func (m *eventMatcher) matches(e *corev1.Event) bool {
	obj := e.InvolvedObject
	switch obj.Kind {
	case "SparkApplication":
		return obj.Name == m.app.Name && (obj.UID == "" || obj.UID == m.app.UID)
	case "Pod":
		belongs, known := m.pods[obj.Name]
		if !known {
			// A pod created after we looked, such as a new executor.
			pod, err := m.c.kube.CoreV1().Pods(m.app.Namespace).Get(m.ctx, obj.Name, metav1.GetOptions{})
			belongs = err == nil && pod.Labels[v1beta2.LabelAppName] == m.app.Name
			if err == nil || apierrors.IsNotFound(err) {
				m.pods[obj.Name] = belongs
			}
		}
		return belongs
	}
	return false
}

func (o *eventOptions) run(ctx context.Context, name string) error {
	c, err := o.clients()
	if err != nil {
		return err
	}
	app, err := c.getApp(ctx, name)
	if err != nil {
		return err
	}
	m, err := newEventMatcher(ctx, c, app)
	if err != nil {
		return err
	}
	list, err := c.kube.CoreV1().Events(app.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing events in namespace %q: %s", app.Namespace, apiMessage(err))
	}
	var events []corev1.Event
	for i := range list.Items {
		if m.matches(&list.Items[i]) {
			events = append(events, list.Items[i])
		}
	}
	if len(events) == 0 && !o.follow {
		fmt.Fprintf(o.streams.ErrOut, "No events found for sparkapplication %q in namespace %q.\n", app.Name, app.Namespace)
		return nil
	}
	printer := &eventPrinter{out: o.streams.Out}
	if err := printer.print(events, time.Now()); err != nil {
		return err
	}
	if !o.follow {
		return nil
	}
	return interrupted(ctx, o.watch(ctx, c, m, printer, list.ResourceVersion))
}

// watch prints matching events from resourceVersion on, until ctx ends. A watch the server
// closes is resumed where it stopped; one too old to resume starts afresh from now.
func (o *eventOptions) watch(ctx context.Context, c *clients, m *eventMatcher, printer *eventPrinter, resourceVersion string) error {
	for ctx.Err() == nil {
		if resourceVersion == "" {
			// Too old to resume: carry on from now, leaving out what was missed in between.
			list, err := c.kube.CoreV1().Events(m.app.Namespace).List(ctx, metav1.ListOptions{Limit: 1})
			if err != nil {
				return err
			}
			resourceVersion = list.ResourceVersion
		}
		w, err := c.kube.CoreV1().Events(m.app.Namespace).Watch(ctx, metav1.ListOptions{
			ResourceVersion: resourceVersion, AllowWatchBookmarks: true})
		if err != nil {
			if apierrors.IsGone(err) || apierrors.IsResourceExpired(err) {
				resourceVersion = ""
				continue
			}
			return err
		}
		for ev := range w.ResultChan() {
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Bookmark:
				e, ok := ev.Object.(*corev1.Event)
				if !ok {
					continue
				}
				resourceVersion = e.ResourceVersion
				if ev.Type != watch.Bookmark && m.matches(e) {
					if err := printer.print([]corev1.Event{*e}, time.Now()); err != nil {
						w.Stop()
						return err
					}
				}
			case watch.Error:
				if status := apierrors.FromObject(ev.Object); apierrors.IsGone(status) || apierrors.IsResourceExpired(status) {
					resourceVersion = ""
				}
			}
		}
		w.Stop()
	}
	return ctx.Err()
}

// eventTime is when an event was last seen, whichever API wrote it.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// eventPrinter writes events oldest first under kubectl's columns. The first call prints the
// header and sets the column widths; later calls (followed events, one at a time) keep them,
// so that their rows stay under the header.
type eventPrinter struct {
	out    io.Writer
	widths []int
}

var eventColumns = []string{"LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"}

func (p *eventPrinter) print(events []corev1.Event, now time.Time) error {
	slices.SortStableFunc(events, func(a, b corev1.Event) int {
		return eventTime(&a).Compare(eventTime(&b))
	})
	var rows [][]string
	if p.widths == nil {
		rows = append(rows, eventColumns)
	}
	for i := range events {
		e := &events[i]
		rows = append(rows, []string{age(metav1.NewTime(eventTime(e)), now), e.Type, e.Reason,
			strings.ToLower(e.InvolvedObject.Kind) + "/" + e.InvolvedObject.Name, strings.TrimSpace(e.Message)})
	}
	if p.widths == nil {
		p.widths = columnWidths(rows)
	}
	var b strings.Builder
	for _, row := range rows {
		writeRow(&b, row, p.widths)
	}
	_, err := io.WriteString(p.out, b.String())
	return err
}
