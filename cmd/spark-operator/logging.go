/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"fmt"
	"io"

	"github.com/go-logr/glogr"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// newLogger is the operator's logger: glog's text lines (console, glog's flags apply), or with
// --zap-encoder=json one JSON object a line on w, with a timestamp, the level (logr's V level),
// the message and its key-value pairs, up to -v.
func newLogger(o *options, w io.Writer) logr.Logger {
	if o.logEncoder != "json" {
		return glogr.New()
	}
	return funcr.NewJSON(func(obj string) { _, _ = fmt.Fprintln(w, obj) },
		funcr.Options{LogTimestamp: true, TimestampFormat: "2006-01-02T15:04:05.000Z07:00", Verbosity: o.logVerbosity})
}
