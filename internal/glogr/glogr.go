/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package glogr lets the operator log through logr (what controller-runtime and client-go
// expect) with github.com/golang/glog as the backend, so -v, -logtostderr and the other glog
// flags behave as Spark-on-Kubernetes operators have always had them.
package glogr

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/golang/glog"
)

// New returns a logr.Logger writing to glog. logr's V(n) maps to glog's -v=n.
func New() logr.Logger {
	return logr.New(&sink{})
}

type sink struct {
	name   string
	values []any
	depth  int
}

var _ logr.CallDepthLogSink = &sink{}

func (s *sink) Init(info logr.RuntimeInfo) { s.depth = info.CallDepth + 2 }

func (s *sink) Enabled(level int) bool { return bool(glog.V(glog.Level(level))) }

func (s *sink) Info(level int, msg string, kv ...any) {
	glog.InfoDepth(s.depth, s.format(msg, kv, nil))
}

func (s *sink) Error(err error, msg string, kv ...any) {
	glog.ErrorDepth(s.depth, s.format(msg, kv, err))
}

func (s *sink) WithValues(kv ...any) logr.LogSink {
	c := *s
	c.values = append(append([]any(nil), s.values...), kv...)
	return &c
}

func (s *sink) WithName(name string) logr.LogSink {
	c := *s
	if c.name != "" {
		name = c.name + "/" + name
	}
	c.name = name
	return &c
}

func (s *sink) WithCallDepth(depth int) logr.LogSink {
	c := *s
	c.depth += depth
	return &c
}

// format renders `name] msg key=value ...`, quoting values that need it, as klog's text does.
func (s *sink) format(msg string, kv []any, err error) string {
	var b bytes.Buffer
	if s.name != "" {
		b.WriteString(s.name)
		b.WriteString("] ")
	}
	b.WriteString(msg)
	if err != nil {
		b.WriteString(" err=")
		b.WriteString(strconv.Quote(err.Error()))
	}
	writePairs(&b, s.values)
	writePairs(&b, kv)
	return b.String()
}

func writePairs(b *bytes.Buffer, kv []any) {
	for i := 0; i < len(kv); i += 2 {
		b.WriteByte(' ')
		fmt.Fprint(b, kv[i])
		b.WriteByte('=')
		if i+1 >= len(kv) {
			b.WriteString("<missing>")
			break
		}
		switch v := kv[i+1].(type) {
		case string:
			b.WriteString(strconv.Quote(v))
		case error:
			b.WriteString(strconv.Quote(v.Error()))
		case fmt.Stringer:
			b.WriteString(strconv.Quote(v.String()))
		default:
			fmt.Fprintf(b, "%+v", v)
		}
	}
}
