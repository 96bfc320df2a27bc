// Package system holds the agent's side effects behind narrow seams: running
// commands, reading and writing files under a configurable root, and time.
// Phases depend on these interfaces; tests swap in the fakes of systemtest.
package system

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	vmcontext "github.com/onekube/onekube/context"
)

// Cmd is one command to run. Secrets lists values that must not leave the
// process through logs or errors: they are masked in the command line and in
// output folded into an error.
type Cmd struct {
	Name    string
	Args    []string
	Env     []string // added to the agent's own environment
	Stdin   []byte
	Secrets []vmcontext.Secret
	// Scrub masks any certificate key and bootstrap token in the output as
	// it is read (ScrubOutput), so no Result, error or log holds one: set
	// for kubeadm, whose output may carry keys the caller never passed.
	Scrub bool
}

// String renders the command line for logs, secrets masked.
func (c Cmd) String() string {
	parts := append([]string{c.Name}, c.Args...)
	return vmcontext.Redact(strings.Join(parts, " "), c.Secrets...)
}

// Result is what a finished command produced.
type Result struct {
	Stdout []byte
	Stderr []byte
}

// Exec runs commands. It is the only way the agent starts a process.
type Exec interface {
	Run(ctx context.Context, c Cmd) (Result, error)
}

// ErrNoDeadline is returned for a command started without a deadline: a
// hung kubeadm or kubectl must never hold the boot until systemd's own
// timeout, so every caller bounds every command.
var ErrNoDeadline = errors.New("command has no deadline")

// ExitError reports a command that ran and failed. Its message carries the
// redacted command line and the tail of its output, so a phase error tells
// the operator what kubeadm said without a trip to the journal.
type ExitError struct {
	Cmd    string // redacted
	Code   int
	Output string // redacted tail of stderr, else stdout
	// Reason is the redacted lines of the output that say why it failed
	// (see Reason), for a report with no room for the whole tail.
	Reason string
}

func (e *ExitError) Error() string {
	if e.Output == "" {
		return fmt.Sprintf("%s: exit status %d", e.Cmd, e.Code)
	}
	return fmt.Sprintf("%s: exit status %d: %s", e.Cmd, e.Code, e.Output)
}

// Brief says what failed in few words, the tool's reason first: the
// command's name and subcommand (never its arguments), the exit status and
// Reason. It is what a 240-character OneGate report carries.
func (e *ExitError) Brief() string {
	name := e.Cmd
	if f := strings.Fields(e.Cmd); len(f) > 1 && !strings.HasPrefix(f[1], "-") {
		name = f[0] + " " + f[1]
	} else if len(f) > 0 {
		name = f[0]
	}
	if e.Reason == "" {
		return fmt.Sprintf("%s exited %d", name, e.Code)
	}
	return fmt.Sprintf("%s exited %d: %s", name, e.Code, e.Reason)
}

// NewExitError builds the error of a command that exited with code.
func NewExitError(c Cmd, code int, r Result) *ExitError {
	return &ExitError{Cmd: c.String(), Code: code, Output: Tail(r, c.Secrets...), Reason: Reason(r, c.Secrets...)}
}

// waitDelay bounds how long Run waits for a killed command's output pipes:
// a child it left behind (kubeadm starts systemctl, crictl...) may hold
// them open.
const waitDelay = 5 * time.Second

// outputTail bounds what an error carries: enough for kubeadm's last
// complaint, not a whole preflight report.
const outputTail = 2048

// OSExec runs real processes found on PATH.
type OSExec struct{}

var _ Exec = OSExec{}

// Run starts c and waits for it; ctx cancels it and must carry a deadline.
func (OSExec) Run(ctx context.Context, c Cmd) (Result, error) {
	if _, ok := ctx.Deadline(); !ok {
		return Result{}, fmt.Errorf("%s: %w", c.String(), ErrNoDeadline)
	}
	cmd := exec.CommandContext(ctx, c.Name, c.Args...)
	cmd.WaitDelay = waitDelay
	if len(c.Env) > 0 {
		cmd.Env = append(cmd.Environ(), c.Env...)
	}
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	out := NewOutput(c)
	cmd.Stdout, cmd.Stderr = out.Stdout(), out.Stderr()
	err := cmd.Run()
	res := out.Result() // after Run, whose copying goroutines have ended
	if err == nil {
		return res, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ctx.Err() == nil {
		return res, NewExitError(c, ee.ExitCode(), res)
	}
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return res, fmt.Errorf("%s: killed after its deadline, %w", c.String(), ctx.Err())
		}
		return res, fmt.Errorf("%s: %w", c.String(), ctx.Err())
	}
	// Not started (not on PATH, not executable): the error names the binary only.
	return res, fmt.Errorf("%s: %w", c.Name, err)
}

// Output collects what a command writes to stdout and stderr, scrubbed as
// it is written when the Cmd asks (Cmd.Scrub). Every Exec builds its Result
// with one, so a fake's output takes the same path as a real process's.
type Output struct {
	stdout, stderr bytes.Buffer
	so, se         io.Writer
	scrubs         []*scrubWriter
}

// NewOutput returns an Output for c.
func NewOutput(c Cmd) *Output {
	o := &Output{}
	o.so, o.se = &o.stdout, &o.stderr
	if c.Scrub {
		so, se := newScrubWriter(&o.stdout), newScrubWriter(&o.stderr)
		o.so, o.se, o.scrubs = so, se, []*scrubWriter{so, se}
	}
	return o
}

// Stdout is the writer for the command's standard output.
func (o *Output) Stdout() io.Writer { return o.so }

// Stderr is the writer for the command's standard error.
func (o *Output) Stderr() io.Writer { return o.se }

// Result ends the streams (what a scrubber held back is passed on) and
// returns what they carried. Nothing may be written after it.
func (o *Output) Result() Result {
	for _, s := range o.scrubs {
		_ = s.Flush() // a bytes.Buffer does not fail
	}
	return Result{Stdout: o.stdout.Bytes(), Stderr: o.stderr.Bytes()}
}

// Tail returns the redacted, trimmed end of a result's output, preferring
// stderr where tools put their diagnostics.
func Tail(r Result, secrets ...vmcontext.Secret) string {
	s := strings.TrimSpace(string(r.Stderr))
	if s == "" {
		s = strings.TrimSpace(string(r.Stdout))
	}
	s = vmcontext.Redact(s, secrets...)
	if len(s) > outputTail {
		s = "…" + s[len(s)-outputTail:]
	}
	return s
}
