package system

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
)

func TestOSExecRedactsFailures(t *testing.T) {
	t.Parallel()
	tok := vmcontext.NewSecret("abcdef.0123456789abcdef")
	c := Cmd{
		Name:    "sh",
		Args:    []string{"-c", "echo joining with abcdef.0123456789abcdef >&2; exit 3", "--token", tok.Reveal()},
		Secrets: []vmcontext.Secret{tok},
	}
	_, err := OSExec{}.Run(bounded(t), c)
	var ee *ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("want *ExitError, got %v", err)
	}
	if ee.Code != 3 {
		t.Errorf("code = %d, want 3", ee.Code)
	}
	if strings.Contains(err.Error(), tok.Reveal()) {
		t.Errorf("error leaks the token: %s", err)
	}
	if !strings.Contains(err.Error(), "joining with "+vmcontext.Mask) {
		t.Errorf("error lacks the command's output: %s", err)
	}
}

func TestOSExecOutputsAndEnv(t *testing.T) {
	t.Parallel()
	res, err := OSExec{}.Run(bounded(t), Cmd{
		Name: "sh", Args: []string{"-c", "printf %s \"$ONEKUBE_X\"; cat"},
		Env: []string{"ONEKUBE_X=env-ok "}, Stdin: []byte("stdin-ok"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Stdout); got != "env-ok stdin-ok" {
		t.Errorf("stdout = %q", got)
	}
}

func TestOSExecNotFoundAndCancel(t *testing.T) {
	t.Parallel()
	_, err := OSExec{}.Run(bounded(t), Cmd{Name: "onekube-no-such-binary"})
	if err == nil || !strings.Contains(err.Error(), "onekube-no-such-binary") {
		t.Errorf("missing binary: err = %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = OSExec{}.Run(ctx, Cmd{Name: "sleep", Args: []string{"10"}})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "killed after its deadline") {
		t.Errorf("cancelled command: err = %v, want deadline exceeded", err)
	}
}

func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestOSExecRefusesUnboundedCommands: a command without a deadline is
// never started.
func TestOSExecRefusesUnboundedCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := OSExec{}.Run(context.Background(), Cmd{Name: "touch", Args: []string{dir + "/ran"}})
	if !errors.Is(err, ErrNoDeadline) {
		t.Fatalf("err = %v, want ErrNoDeadline", err)
	}
	if ok, _ := Root(dir).Exists("/ran"); ok {
		t.Error("the command ran")
	}
}

// TestOSExecHungChildDoesNotHang: a killed command whose child keeps the
// output pipe open returns within the wait delay, not when the child ends.
func TestOSExecHungChildDoesNotHang(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := OSExec{}.Run(ctx, Cmd{Name: "sh", Args: []string{"-c", "sleep 60 & sleep 60"}})
	if err == nil {
		t.Fatal("a hung command succeeded")
	}
	if d := time.Since(start); d > waitDelay+5*time.Second {
		t.Errorf("returned after %s", d)
	}
}

func TestTailBounds(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 3*outputTail)
	got := Tail(Result{Stdout: []byte(long)})
	if len(got) > outputTail+len("…") {
		t.Errorf("tail length %d exceeds bound", len(got))
	}
	if got := Tail(Result{Stdout: []byte("out"), Stderr: []byte(" err \n")}); got != "err" {
		t.Errorf("Tail prefers stderr: got %q", got)
	}
}
