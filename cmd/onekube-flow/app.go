package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"

	"github.com/onekube/onekube/cmd/internal/version"
	"github.com/onekube/onekube/flow/register"
	"github.com/spf13/cobra"
)

// Exit codes scripts can rely on.
const (
	exitOK      = 0
	exitFailed  = 1 // validation errors, a bad spec, a failed operation
	exitUsage   = 2 // unknown command or flag, bad arguments
	exitProblem = exitFailed
	// exitInProgress (3, status.go): status found nothing failed, but not
	// everything ready yet.
)

// app holds the process's side effects so tests can run commands in-process.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	env            register.Env
	// readFile reads spec and template files; readFileLimited unless a
	// test sets it.
	readFile func(string) ([]byte, error)
	// sleep is status --wait's pause between polls; the real clock unless
	// a test sets it.
	sleep func(context.Context, time.Duration) error
}

// exitCode: the command printed its result and only the exit code is left
// to set (status).
type exitCode struct{ code int }

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// exitError is a failure to print with an exit code of its own (kubeconfig:
// 3 when the cluster is not ready yet).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// usageError marks a mistake in how the command was called (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// errQuiet: the command already printed why it failed (validate's problem
// list); only the exit code is left to set.
var errQuiet = errors.New("failed")

func (a *app) run(args []string) int {
	if a.readFile == nil {
		a.readFile = readFileLimited
	}
	started := false
	root := a.rootCmd(&started)
	root.SetArgs(args)
	err := root.Execute()
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errQuiet):
		return exitProblem
	}
	var ec exitCode
	if errors.As(err, &ec) {
		return ec.code
	}
	fmt.Fprintf(a.stderr, "onekube-flow: %s\n", printable(err.Error(), maxErrorRunes))
	var xe exitError
	if errors.As(err, &xe) {
		return xe.code
	}
	var ue usageError
	if errors.As(err, &ue) || !started {
		fmt.Fprintln(a.stderr, "Run 'onekube-flow --help' for usage.")
		return exitUsage
	}
	return exitFailed
}

func (a *app) rootCmd(started *bool) *cobra.Command {
	root := &cobra.Command{
		Use:   "onekube-flow",
		Short: "Render, validate and register OneFlow templates for kubeadm Kubernetes clusters",
		Long: `onekube-flow turns a cluster spec (or its built-in defaults and flags) into the
OneFlow service template and the master/worker VM templates of a kubeadm
Kubernetes cluster on OpenNebula, validates service templates, and registers
them. Documents go to stdout, logs and hints to stderr.

Exit codes: 0 success, 1 validation errors or a failed operation, 2 usage error,
3 (status, kubeconfig) the cluster is still coming up.`,
		Example: `  onekube-flow render | oneflow-template create
  onekube-flow render -f cluster.yaml --oneflow 6 --workers 5
  onekube-flow render vm-template --role master | onetemplate create
  onekube-flow validate service.json
  onekube-flow create -f cluster.yaml --replace
  onekube-flow status kubernetes --wait 20m
  onekube-flow kubeconfig kubernetes --merge`,
		Version:           version.String(),
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRun:  func(*cobra.Command, []string) { *started = true },
		Args:              cobra.NoArgs,
		RunE:              func(c *cobra.Command, _ []string) error { return c.Help() },
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(a.renderCmd(), a.validateCmd(), a.createCmd(), a.statusCmd(), a.kubeconfigCmd(), a.upgradeCmd())
	return root
}

// rangeArgs is cobra.RangeArgs with a usage error.
func rangeArgs(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if hi == 0 && len(args) > 0 {
			if cmd.HasSubCommands() {
				return usagef("unexpected argument %q: %s takes no arguments; subcommands: %s", args[0], cmd.Name(), subcommands(cmd))
			}
			return usagef("unexpected argument %q: %s takes no arguments", args[0], cmd.Name())
		}
		if err := cobra.RangeArgs(lo, hi)(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// maxErrorRunes bounds the one line a failure prints: a spec with every
// field wrong still fits, a server's page does not.
const maxErrorRunes = 4000

// printable makes text from anywhere (a server's answer, a document's
// keys) one terminal-safe line: control characters and line breaks become
// spaces, and it is cut at n characters.
func printable(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	if rs := []rune(s); len(rs) > n {
		return string(rs[:n-1]) + "…"
	}
	return s
}

func subcommands(cmd *cobra.Command) string {
	var names []string
	for _, c := range cmd.Commands() {
		names = append(names, c.Name())
	}
	return strings.Join(names, ", ")
}
