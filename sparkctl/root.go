/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package sparkctl implements sparkctl, the command-line tool for SparkApplications: creating
// them, listing them, following their events and logs, and reaching the Spark UI of a running
// driver. Every command lives in a file of its own; NewRootCommand assembles them.
//
// The binary also works as a kubectl plugin: installed as kubectl-spark, it runs as
// `kubectl spark ...` and names itself that way in help and completion.
package sparkctl

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// IOStreams are where a command reads its input and writes its output and diagnostics. Tests
// pass buffers; the binary passes the process's standard streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// StdStreams returns the process's standard input, output and error.
func StdStreams() IOStreams {
	return IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

// NewRootCommand returns the sparkctl command with all its subcommands. Its name follows the
// name the binary was started under (os.Args[0]), so that as kubectl-spark it presents itself
// as "kubectl spark".
func NewRootCommand(streams IOStreams) *cobra.Command {
	use, display := commandName(os.Args[0])
	o := &rootOptions{streams: streams, flags: genericclioptions.NewConfigFlags(true)}
	root := &cobra.Command{
		Use:   use,
		Short: "Manage Spark applications run by the Spark operator",
		Long: `sparkctl creates, inspects and deletes SparkApplications (sparkoperator.k8s.io/v1beta2),
shows their events and driver or executor logs, and forwards a local port to the Spark UI.

It reads the cluster configuration as kubectl does: --kubeconfig, the KUBECONFIG environment
variable or ~/.kube/config, and the in-cluster configuration when run in a pod.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{},
	}
	if display != "" {
		root.Annotations[cobra.CommandDisplayNameAnnotation] = display
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)

	o.flags.AddFlags(root.PersistentFlags())
	_ = root.RegisterFlagCompletionFunc("namespace", o.completeNamespaces)

	root.AddCommand(
		newCreateCommand(o),
		newListCommand(o),
		newStatusCommand(o),
		newEventCommand(o),
		newLogCommand(o),
		newForwardCommand(o),
		newDeleteCommand(o),
		newSuspendCommand(o, true),
		newSuspendCommand(o, false),
		newWaitCommand(o),
		newQueuesCommand(o),
		newReservationsCommand(o),
		newSessionCommand(o),
		newVersionCommand(o),
		newCompletionCommand(o),
	)
	return root
}

// commandName returns the Use of the root command and, when started as a kubectl plugin
// (kubectl-spark), the name kubectl users type ("kubectl spark").
func commandName(argv0 string) (use, display string) {
	base := filepath.Base(argv0)
	if i := strings.LastIndexAny(base, `/\`); i >= 0 { // a Windows path seen from elsewhere
		base = base[i+1:]
	}
	base = strings.TrimSuffix(base, ".exe")
	if plugin, ok := strings.CutPrefix(base, "kubectl-"); ok && plugin != "" {
		// kubectl-a-b is `kubectl a b`; "_" in the file name stands for "-" in the command.
		words := strings.ReplaceAll(plugin, "-", " ")
		return base, "kubectl " + strings.ReplaceAll(words, "_", "-")
	}
	return "sparkctl", ""
}
