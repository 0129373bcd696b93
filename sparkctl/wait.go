/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// waitStates are the states wait --for takes: those a user reads in list and status.
var waitStates = []string{"NEW", "QUEUED", "SUBMITTED", "RUNNING", "COMPLETED", "FAILED", "SUBMISSION_FAILED",
	"PENDING_RERUN", "INVALIDATING", "SUCCEEDING", "FAILING", "UNKNOWN", "SUSPENDING", "SUSPENDED", "RESUMING"}

// Exit codes of wait, beside 0 (the state was reached) and 1 (an error, or the timeout).
const exitEndedOtherwise = 2

// ExitError is an error with the exit code sparkctl ends with.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode is the exit code for an error RunE returned: an ExitError's, else 1.
func ExitCode(err error) int {
	var e *ExitError
	if errors.As(err, &e) {
		return e.Code
	}
	return 1
}

type waitOptions struct {
	*rootOptions
	state    string
	timeout  time.Duration
	interval time.Duration
}

func newWaitCommand(root *rootOptions) *cobra.Command {
	o := &waitOptions{rootOptions: root, interval: time.Second}
	cmd := &cobra.Command{
		Use:   "wait NAME... --for=STATE",
		Short: "Wait until SparkApplications reach a state",
		Long: `Wait until each application reads STATE (as in sparkctl list: QUEUED, RUNNING, COMPLETED, …).
Exit codes: 0 when every one reached it; 2 when one ended (COMPLETED or FAILED) in another state
first, which it then names; 1 on an error or when --timeout passed.`,
		Example:           `  sparkctl wait spark-pi --for=completed --timeout=10m && echo done`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: root.completeApps,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), args)
		},
	}
	cmd.Flags().StringVar(&o.state, "for", "", "the state to wait for: "+strings.ToLower(strings.Join(waitStates, ", ")))
	cmd.Flags().DurationVar(&o.timeout, "timeout", 0, "give up after this long (exit code 1); 0 waits as long as it takes")
	_ = cmd.MarkFlagRequired("for")
	return cmd
}

func (o *waitOptions) run(ctx context.Context, names []string) error {
	want := strings.ToUpper(o.state)
	if !slices.Contains(waitStates, want) {
		return fmt.Errorf("--for=%s: not a state; one of %s", o.state, strings.ToLower(strings.Join(waitStates, ", ")))
	}
	c, err := o.clients()
	if err != nil {
		return err
	}
	// The deadline is checked between reads rather than put on the context, so that a read
	// is never cut short into an error of its own.
	var deadline time.Time
	if o.timeout > 0 {
		deadline = time.Now().Add(o.timeout)
	}
	errTimeout := errors.New("timed out")
	for _, name := range names {
		var last string
		err := wait.PollUntilContextCancel(ctx, o.interval, true, func(ctx context.Context) (bool, error) {
			if !deadline.IsZero() && time.Now().After(deadline) {
				return false, errTimeout
			}
			app, err := c.getApp(ctx, name)
			if err != nil {
				return false, err
			}
			last = displayState(app)
			switch {
			case last == want:
				return true, nil
			case app.Status.AppState.State.IsTerminal():
				return false, &ExitError{Code: exitEndedOtherwise,
					Err: fmt.Errorf("sparkapplication %q ended %s, not %s%s", name, last, want, errorSuffix(app))}
			}
			return false, nil
		})
		var exit *ExitError
		switch {
		case errors.As(err, &exit):
			return err
		case errors.Is(err, errTimeout):
			return fmt.Errorf("timed out waiting for sparkapplication %q to be %s (it is %s)", name, want, last)
		case err != nil:
			return interrupted(ctx, err)
		}
		fmt.Fprintf(o.streams.Out, "sparkapplication/%s %s\n", name, want)
	}
	return nil
}

func errorSuffix(app *v1beta2.SparkApplication) string {
	if msg := app.Status.AppState.ErrorMessage; msg != "" {
		return ": " + msg
	}
	return ""
}
