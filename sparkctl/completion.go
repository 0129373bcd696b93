/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"github.com/spf13/cobra"
)

func newCompletionCommand(root *rootOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print a shell completion script",
		Long: `Print the completion script of a shell. Application and namespace names are completed
from the cluster.

  bash:  source <(sparkctl completion bash)
  zsh:   sparkctl completion zsh > "${fpath[1]}/_sparkctl"
  fish:  sparkctl completion fish > ~/.config/fish/completions/sparkctl.fish`,
		Args:      cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		ValidArgs: []cobra.Completion{"bash", "zsh", "fish"},
		RunE: func(cmd *cobra.Command, args []string) error {
			out := root.streams.Out
			switch args[0] {
			case "bash":
				return cmd.Root().GenBashCompletionV2(out, true)
			case "zsh":
				return cmd.Root().GenZshCompletion(out)
			default:
				return cmd.Root().GenFishCompletion(out, true)
			}
		},
	}
}
