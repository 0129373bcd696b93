/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package scheduler

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// TestNameOf: an application Kueue queues goes to KueueName, when served, if it names default,
// or names none while the default is none, default or queues itself; naming another scheduler
// keeps it, and without Kueue's label, or KueueName not served, the name is as before.
func TestNameOf(t *testing.T) {
	tests := []struct {
		name, named, def string
		defQueues, kueue bool
		labelled         bool
		want             string
	}{
		{name: "names none, no default", labelled: true, kueue: true, want: KueueName},
		{name: "names default", named: DefaultName, def: "gang", defQueues: true, labelled: true, kueue: true, want: KueueName},
		{name: "names none, the default queues", def: "gang", defQueues: true, labelled: true, kueue: true, want: KueueName},
		{name: "names none, the default does not queue", def: "volcano", labelled: true, kueue: true, want: "volcano"},
		{name: "names a scheduler that queues", named: "gang", def: "gang", defQueues: true, labelled: true, kueue: true, want: "gang"},
		{name: "names volcano", named: "volcano", labelled: true, kueue: true, want: "volcano"},
		{name: "names kueue", named: KueueName, labelled: true, kueue: true, want: KueueName},
		{name: "not served", named: DefaultName, labelled: true, want: DefaultName},
		{name: "not served, names none", def: "gang", defQueues: true, labelled: true, want: "gang"},
		{name: "not labelled", def: "gang", defQueues: true, kueue: true, want: "gang"},
		{name: "not labelled, names default", named: DefaultName, kueue: true, want: DefaultName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := &v1beta2.SparkApplication{}
			if tt.named != "" {
				app.Spec.BatchScheduler = &tt.named
			}
			if tt.labelled {
				app.ObjectMeta = metav1.ObjectMeta{Labels: map[string]string{LabelKueueQueueName: "lq"}}
			}
			if got := NameOf(app, tt.def, tt.defQueues, tt.kueue); got != tt.want {
				t.Errorf("NameOf = %q, want %q", got, tt.want)
			}
		})
	}
}
