/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/internal/eventnote"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestLongEventMessage: an application whose submission fails with a message quoting a
// 10,000-character value still gets its SubmissionFailed event, stored by the API server with
// the start of the message and a mark that it was cut; its status keeps the whole message.
func TestLongEventMessage(t *testing.T) {
	c := cluster.Client(t)
	e := &env{c: c, ns: cluster.Namespace(t, c, "sparkapp-long-event"),
		sub: &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}, gate: &gate{}}}
	startManager(t, []string{e.ns}, e.sub, Options{})
	value := "carrier-pigeon-" + strings.Repeat("x", 10_000)
	key := e.create(t, newApp(e.ns, "long", func(a *v1beta2.SparkApplication) {
		a.Annotations = map[string]string{v1beta2.AnnotationSubmitter: value}
	}))
	app := e.waitState(t, key, v1beta2.ApplicationStateFailed, 30*time.Second)
	msg := app.Status.AppState.ErrorMessage
	if !strings.Contains(msg, value) {
		t.Errorf("errorMessage (%d bytes) does not quote the whole value", len(msg))
	}

	var note string
	cluster.Eventually(t, 15*time.Second, "a SubmissionFailed event stored", func() (bool, error) {
		list := &eventsv1.EventList{}
		if err := c.List(context.Background(), list, client.InNamespace(e.ns)); err != nil {
			return false, err
		}
		for _, ev := range list.Items {
			if ev.Regarding.Name == "long" && ev.Reason == ReasonSubmissionFailed {
				note = ev.Note
				return true, nil
			}
		}
		return false, nil
	})
	if len(note) > eventnote.Limit || !strings.HasSuffix(note, eventnote.CutMark) ||
		!strings.HasPrefix(msg, strings.TrimSuffix(note, eventnote.CutMark)) {
		t.Errorf("event note (%d bytes) %q\nwant the start of the status message, cut to %d bytes with %q",
			len(note), note, eventnote.Limit, eventnote.CutMark)
	}
}
