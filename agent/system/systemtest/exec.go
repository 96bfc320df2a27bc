// Package systemtest holds fakes for package system's seams, for tests in
// any package: a scripted Exec that records every call, and a manual clock.
package systemtest

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/onekube/onekube/agent/system"
)

// Reply scripts one answer of FakeExec.
type Reply struct {
	Stdout, Stderr string
	Code           int   // non-zero: the call fails with *system.ExitError
	Err            error // returned as is (e.g. "not found"), before Code
	// Do runs before the reply is returned, to mimic a command's side
	// effects (kubeadm init writing ca.crt).
	Do func(c system.Cmd) error
	// Split writes Stdout and Stderr in pieces of this many bytes, as reads
	// from a pipe may deliver them; 0 writes each whole.
	Split int
}

// FakeExec answers commands from a script keyed by "name subcommand" (the
// binary and its first argument, e.g. "kubeadm init"), falling back to the
// binary alone. Unscripted commands fail, so a test notices calls it did
// not expect.
type FakeExec struct {
	mu      sync.Mutex
	Replies map[string][]Reply // consumed in order; the last one repeats
	Calls   []system.Cmd
}

var _ system.Exec = (*FakeExec)(nil)

// On appends replies for key and returns f for chaining.
func (f *FakeExec) On(key string, r ...Reply) *FakeExec {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Replies == nil {
		f.Replies = map[string][]Reply{}
	}
	f.Replies[key] = append(f.Replies[key], r...)
	return f
}

// Run records c and plays the next scripted reply. Like the real Exec it
// refuses a context without a deadline, so a test of any caller proves
// every command it starts is bounded.
func (f *FakeExec) Run(ctx context.Context, c system.Cmd) (system.Result, error) {
	if _, ok := ctx.Deadline(); !ok {
		return system.Result{}, fmt.Errorf("%s: %w", c.String(), system.ErrNoDeadline)
	}
	f.mu.Lock()
	f.Calls = append(f.Calls, c)
	key := c.Name
	if len(c.Args) > 0 {
		key += " " + c.Args[0]
	}
	r, ok := f.next(key)
	if !ok {
		r, ok = f.next(c.Name)
	}
	f.mu.Unlock()
	if !ok {
		return system.Result{}, fmt.Errorf("fake exec: unexpected command %q", c.String())
	}
	if r.Do != nil {
		if err := r.Do(c); err != nil {
			return system.Result{}, err
		}
	}
	// Through system.Output, as a real process's output goes.
	out := system.NewOutput(c)
	write(out.Stdout(), r.Stdout, r.Split)
	write(out.Stderr(), r.Stderr, r.Split)
	res := out.Result()
	if r.Err != nil {
		return res, r.Err
	}
	if r.Code != 0 {
		return res, system.NewExitError(c, r.Code, res)
	}
	return res, nil
}

func write(w io.Writer, s string, split int) {
	if split <= 0 {
		split = len(s)
	}
	for len(s) > 0 {
		n := min(split, len(s))
		_, _ = w.Write([]byte(s[:n])) // a bytes.Buffer does not fail
		s = s[n:]
	}
}

func (f *FakeExec) next(key string) (Reply, bool) {
	q := f.Replies[key]
	if len(q) == 0 {
		return Reply{}, false
	}
	r := q[0]
	if len(q) > 1 {
		f.Replies[key] = q[1:]
	}
	return r, true
}

// Count returns how many recorded calls start with the words of prefix,
// e.g. Count("kubeadm init").
func (f *FakeExec) Count(prefix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.Calls {
		line := strings.Join(append([]string{c.Name}, c.Args...), " ")
		if line == prefix || strings.HasPrefix(line, prefix+" ") {
			n++
		}
	}
	return n
}
