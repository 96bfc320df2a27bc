package systemtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/system"
)

func TestFakeExecScript(t *testing.T) {
	t.Parallel()
	f := (&FakeExec{}).
		On("kubeadm init", Reply{Code: 1, Stderr: "preflight failed"}, Reply{Stdout: "ok"}).
		On("kubectl", Reply{Stdout: "applied"})
	if _, err := f.Run(context.Background(), system.Cmd{Name: "kubectl"}); !errors.Is(err, system.ErrNoDeadline) {
		t.Errorf("unbounded call: %v, want ErrNoDeadline", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := f.Run(ctx, system.Cmd{Name: "kubeadm", Args: []string{"init", "--config", "x"}})
	var ee *system.ExitError
	if !errors.As(err, &ee) || ee.Output != "preflight failed" {
		t.Fatalf("first init: %v", err)
	}
	for i := 0; i < 2; i++ { // the last reply repeats
		if res, err := f.Run(ctx, system.Cmd{Name: "kubeadm", Args: []string{"init"}}); err != nil || string(res.Stdout) != "ok" {
			t.Fatalf("later init: %q %v", res.Stdout, err)
		}
	}
	if res, err := f.Run(ctx, system.Cmd{Name: "kubectl", Args: []string{"apply"}}); err != nil || string(res.Stdout) != "applied" {
		t.Fatalf("kubectl: %q %v", res.Stdout, err)
	}
	if _, err := f.Run(ctx, system.Cmd{Name: "kubeadm", Args: []string{"join"}}); err == nil {
		t.Fatal("unscripted command succeeded")
	}
	if n := f.Count("kubeadm init"); n != 3 {
		t.Errorf("Count(kubeadm init) = %d, want 3", n)
	}
	if n := f.Count("kubeadm"); n != 4 {
		t.Errorf("Count(kubeadm) = %d, want 4", n)
	}
}

func TestClock(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewClock(start)
	if err := c.Sleep(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Second)
	if got := c.Now().Sub(start); got != time.Minute+time.Second {
		t.Errorf("elapsed %v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Hour); err == nil {
		t.Error("Sleep on a done context returned nil")
	}
}
