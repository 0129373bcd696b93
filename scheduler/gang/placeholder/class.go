/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package placeholder

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Placeholders hold room at their workload's priority (package gang's placeholders.go) but
// must never preempt. kube-scheduler can find no room for one the gang scheduler placed into
// free room: for a moment a swap's nomination and the placeholder it replaces both count on the
// node, or pods there have ended that it has not seen end yet. A placeholder that may preempt
// would then evict lower-priority pods there: the executors of an application the gang
// scheduler never chose, for a room that frees itself a moment later. A pod's preemption policy
// is its PriorityClass's (the API server refuses a pod that names another), so placeholders
// take a class of their own: the workload's priority value, preemptionPolicy Never. There is
// one per value, created when first needed and kept: classes are cluster-wide, small and shared
// by every run of that priority.

// classPrefix starts the names of the placeholders' PriorityClasses.
const classPrefix = "sparkop-placeholder-"

// LabelClass marks the PriorityClasses the operator created for placeholders.
const LabelClass = "scheduling.sparkop.dev/placeholder-class"

// className names the placeholders' PriorityClass of priority value.
func className(value int32) string {
	if value < 0 {
		return fmt.Sprintf("%sminus-%d", classPrefix, -int64(value))
	}
	return fmt.Sprintf("%s%d", classPrefix, value)
}

// priorityValue is the priority the API server gives a pod naming class: its value; with no
// class, the global default's, or 0. False when class does not exist.
func priorityValue(class string, classes []schedulingv1.PriorityClass) (int32, bool) {
	for i := range classes {
		if pc := &classes[i]; class == "" && pc.GlobalDefault || class != "" && pc.Name == class {
			return pc.Value, true
		}
	}
	return 0, class == ""
}

// PriorityOf is a workload's priority, as its pods get it: priorityValue, 0 for a class that
// does not exist (its pods are refused; the controller says why).
func PriorityOf(class string, classes []schedulingv1.PriorityClass) int32 {
	v, _ := priorityValue(class, classes)
	return v
}

// Classes remembers the placeholders' classes created until the cluster cache shows them, and
// when a class last could not be had, so that a missing permission is logged once a minute, not
// on every write. Its zero value is ready to use.
type Classes struct {
	mu      sync.Mutex
	created map[string]bool
	failed  map[string]time.Time
}

// Of names the PriorityClass for the placeholders of a workload whose pods name class (the
// value of class, preemption Never), creating it if r does not show it. If it cannot, it logs
// why (once a minute) and returns class itself: the placeholders then hold room as before, and
// may preempt.
func (c *Classes) Of(ctx context.Context, r client.Reader, w client.Writer, class string) string {
	name, err := c.ensure(ctx, r, w, class)
	if err == nil {
		return name
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.failed[class]) >= time.Minute {
		if c.failed == nil {
			c.failed = map[string]time.Time{}
		}
		c.failed[class] = time.Now()
		log.FromContext(ctx).Error(err, "placeholders take their workload's PriorityClass, and may preempt lower-priority pods", "priorityClass", class)
	}
	return class
}

func (c *Classes) ensure(ctx context.Context, r client.Reader, w client.Writer, class string) (string, error) {
	var classes schedulingv1.PriorityClassList
	if err := r.List(ctx, &classes); err != nil {
		return "", fmt.Errorf("listing PriorityClasses: %w", err)
	}
	value, ok := priorityValue(class, classes.Items)
	if !ok {
		return "", fmt.Errorf("no PriorityClass %q", class)
	}
	name := className(value)
	for i := range classes.Items {
		if pc := &classes.Items[i]; pc.Name == name {
			if pc.Value != value || pc.PreemptionPolicy == nil || *pc.PreemptionPolicy != corev1.PreemptNever {
				return "", fmt.Errorf("PriorityClass %s is not a placeholders' class of value %d that never preempts", name, value)
			}
			return name, nil
		}
	}
	c.mu.Lock()
	created := c.created[name]
	c.mu.Unlock()
	if created {
		return name, nil
	}
	pc := &schedulingv1.PriorityClass{
		ObjectMeta:       metav1.ObjectMeta{Name: name, Labels: map[string]string{LabelClass: "true"}},
		Value:            value,
		PreemptionPolicy: ptr.To(corev1.PreemptNever),
		Description:      "Spark operator placeholders: hold room for admitted applications' pods at their priority, and never preempt.",
	}
	if err := w.Create(ctx, pc); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating PriorityClass %s: %w", name, err)
	}
	c.mu.Lock()
	if c.created == nil {
		c.created = map[string]bool{}
	}
	c.created[name] = true
	c.mu.Unlock()
	return name, nil
}
