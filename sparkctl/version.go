/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version is the release of sparkctl, set at build time with
// -ldflags "-X github.com/sparkop/spark-operator/sparkctl.Version=v1.2.3". When it is not set,
// the module version recorded by `go install` is shown instead.
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

func newVersionCommand(root *rootOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of sparkctl",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(root.streams.Out, "sparkctl %s (%s, %s/%s)\n", version(),
				runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
