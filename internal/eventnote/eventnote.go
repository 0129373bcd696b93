/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package eventnote keeps the operator's events within what the API server stores. The API
// server refuses an event whose message is longer than 1,024 bytes, and the recorder drops it
// ("Server rejected event (will not retry!)"), so a long reason, such as one quoting a long
// field value, would never be seen. The recorders here cut such a message to fit, keeping its
// start and saying it was cut; the full text is in the object's status.
//
// Manager wraps a controller-runtime manager so that every recorder it hands out cuts: the
// controllers and the batch schedulers get their recorders from it, so the rule is applied
// once, where events are made, not at each call site.
package eventnote

import (
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// Limit is the longest event message, in bytes, the API server accepts (core/v1 message and
// events.k8s.io/v1 note alike).
const Limit = 1024

// CutMark ends a message that was cut.
const CutMark = "… (message cut; full text in the status)"

// Cut returns note unchanged when it fits in limit bytes; otherwise its longest start that,
// followed by CutMark, fits, never splitting a UTF-8 character.
func Cut(note string, limit int) string {
	if len(note) <= limit {
		return note
	}
	keep := limit - len(CutMark)
	if keep <= 0 {
		// No room for the mark: keep what fits of it.
		return cutRunes(CutMark, limit)
	}
	return cutRunes(note, keep) + CutMark
}

// cutRunes is the longest start of s of at most n bytes that ends on a character boundary.
func cutRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Recorder cuts the notes of the events it passes on to the recorder it wraps.
type Recorder struct {
	Next recorder.EventRecorder
}

// Wrap returns r cutting its notes; a recorder that already cuts is returned as it is.
func Wrap(r recorder.EventRecorder) recorder.EventRecorder {
	if r == nil {
		return nil
	}
	if _, ok := r.(*Recorder); ok {
		return r
	}
	return &Recorder{Next: r}
}

func (r *Recorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.Next.Eventf(regarding, related, eventtype, reason, action, "%s", format(note, args))
}

func (r *Recorder) AnnotatedEventf(regarding, related runtime.Object, annotations map[string]string,
	eventtype, reason, action, note string, args ...any) {
	r.Next.AnnotatedEventf(regarding, related, annotations, eventtype, reason, action, "%s", format(note, args))
}

// legacyRecorder is Recorder for the core/v1 events API.
type legacyRecorder struct {
	next record.EventRecorder
}

func (r *legacyRecorder) Event(object runtime.Object, eventtype, reason, message string) {
	r.next.Event(object, eventtype, reason, Cut(message, Limit))
}

func (r *legacyRecorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	r.next.Event(object, eventtype, reason, format(messageFmt, args))
}

func (r *legacyRecorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	r.next.AnnotatedEventf(object, annotations, eventtype, reason, "%s", format(messageFmt, args))
}

// format is the note the wrapped recorder would have made (it formats even without
// arguments), cut to fit.
func format(note string, args []any) string {
	return Cut(fmt.Sprintf(note, args...), Limit)
}

// Manager returns mgr with recorders that cut their notes: GetEventRecorder and the older
// GetEventRecorderFor wrap the manager's own. Everything else is mgr's.
func Manager(mgr manager.Manager) manager.Manager {
	if _, ok := mgr.(*cuttingManager); ok {
		return mgr
	}
	return &cuttingManager{Manager: mgr}
}

type cuttingManager struct {
	manager.Manager
}

func (m *cuttingManager) GetEventRecorder(name string) recorder.EventRecorder {
	return Wrap(m.Manager.GetEventRecorder(name))
}

// GetEventRecorderFor wraps the older API too, for whoever still uses it (the leader elector).
func (m *cuttingManager) GetEventRecorderFor(name string) record.EventRecorder {
	//lint:ignore SA1019 this wraps the deprecated method of manager.Manager, which it must implement
	return &legacyRecorder{next: m.Manager.GetEventRecorderFor(name)}
}
