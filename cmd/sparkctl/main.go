/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Command sparkctl manages SparkApplications from the command line; installed as kubectl-spark
// it is also the kubectl plugin `kubectl spark`. See docs/sparkctl.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/sparkop/spark-operator/sparkctl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	streams := sparkctl.StdStreams()
	if err := sparkctl.NewRootCommand(streams).ExecuteContext(ctx); err != nil {
		fmt.Fprintln(streams.ErrOut, "error:", err)
		stop()
		os.Exit(sparkctl.ExitCode(err))
	}
}
