// Package agentcli is what the two programs in the VMs share: the root
// command, exit codes, --log-format/--log-level, the clock and `version`.
// onekube-agent (bootstrap, status) links no Kubernetes client; onekubed
// (serve, lb, leave) does. Keep this package free of one too.
package agentcli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/onekube/onekube/cmd/internal/version"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1 // the command ran and failed
	ExitUsage   = 2 // bad flags or arguments
)

// RunFailure marks an error of a command that ran (exit 1); any other
// error comes from cobra's parsing (exit 2).
type RunFailure struct{ Err error }

func (r RunFailure) Error() string { return r.Err.Error() }
func (r RunFailure) Unwrap() error { return r.Err }

// Failed wraps err as a RunFailure; nil stays nil.
func Failed(err error) error {
	if err == nil {
		return nil
	}
	return RunFailure{err}
}

// NewRoot is a program's root command, with the version command and the
// given subcommands.
func NewRoot(use, short, long string, stdout, stderr io.Writer, cmds ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:           use,
		Short:         short,
		Long:          long,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetOut(stdout)
	root.SetErr(stderr)
	// No SetVersionTemplate (nor any other template): cobra then prints
	// with plain functions, and text/template's reflection stays out of
	// the binary, which lets the linker drop unused methods (4 MB of
	// onekube-agent). --version prints "<name> version <version>"; the
	// version command prints the bare version.
	root.AddCommand(cmds...)
	root.AddCommand(newVersionCommand(stdout))
	return root
}

// Execute runs root with args and maps the outcome to an exit code.
func Execute(root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	name := root.Name()
	var rf RunFailure
	if errors.As(err, &rf) {
		fmt.Fprintf(stderr, "%s: %v\n", name, rf.Err)
		return ExitFailure
	}
	fmt.Fprintf(stderr, "%s: %v\nRun '%s --help' for usage.\n", name, err, name)
	return ExitUsage
}

func newVersionCommand(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(stdout, version.String())
			return err
		},
	}
}
