// Command onekube-agent runs inside every VM of a onekube service: it
// initializes the cluster on the first master, or waits for it and joins.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the bootstrap (or status) failed
	exitUsage   = 2 // bad flags or arguments
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and maps the outcome to an exit code.
func run(args []string, stdout, stderr io.Writer) int {
	cmd := newRootCommand(stdout, stderr)
	cmd.SetArgs(args)
	err := cmd.Execute()
	if err == nil {
		return exitOK
	}
	var rf runFailure
	if errors.As(err, &rf) {
		fmt.Fprintf(stderr, "onekube-agent: %v\n", rf.err)
		return exitFailure
	}
	fmt.Fprintf(stderr, "onekube-agent: %v\nRun 'onekube-agent --help' for usage.\n", err)
	return exitUsage
}

// runFailure marks an error of a command that ran (exit 1); any other
// error comes from cobra's parsing (exit 2).
type runFailure struct{ err error }

func (r runFailure) Error() string { return r.err.Error() }
func (r runFailure) Unwrap() error { return r.err }
