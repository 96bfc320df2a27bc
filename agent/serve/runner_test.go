package serve

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

type countLoop struct {
	name  string
	ticks atomic.Int32
	err   error
	panic bool
}

func (l *countLoop) Name() string { return l.name }
func (l *countLoop) Tick(context.Context) (time.Duration, error) {
	l.ticks.Add(1)
	if l.panic {
		panic("boom")
	}
	return time.Millisecond, l.err
}
func (l *countLoop) Report() any { return map[string]int32{"ticks": l.ticks.Load()} }

// Every loop ticks, a failing or panicking loop keeps the others (and
// itself) going, and the status file shows each loop's last error.
func TestRunnerTicksAndSurvivesFailures(t *testing.T) {
	t.Parallel()
	ok := &countLoop{name: "ok"}
	bad := &countLoop{name: "bad", err: errors.New("onegate down")}
	boom := &countLoop{name: "boom", panic: true}
	path := filepath.Join(t.TempDir(), "serve.json")
	board := NewStatusBoard(path)
	r := &Runner{
		Loops: []Spec{
			{Loop: ok},
			{Loop: bad, ErrorDelay: time.Millisecond},
			{Loop: boom, ErrorDelay: time.Millisecond, LeaderOnly: true},
		},
		Status: board,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for ok.ticks.Load() < 3 || bad.ticks.Load() < 3 || boom.ticks.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("ticks: ok=%d bad=%d boom=%d", ok.ticks.Load(), bad.ticks.Load(), boom.ticks.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := board.Flush(time.Now()); err != nil {
		t.Fatal(err)
	}
	st, err := ReadStatus(path)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Acting {
		t.Error("without an elector the runner acts")
	}
	if got := st.Loops["bad"].LastError; got != "onegate down" {
		t.Errorf("bad.LastError = %q", got)
	}
	if got := st.Loops["boom"].LastError; got != "panic in boom: boom" {
		t.Errorf("boom.LastError = %q", got)
	}
	if st.Loops["ok"].Report == nil {
		t.Error("ok has no report")
	}
}

// A tick running longer than MaxTick stops the watchdog pings.
func TestStuckLoopStopsWatchdog(t *testing.T) {
	t.Parallel()
	b := NewStatusBoard("")
	now := time.Now()
	b.tickStarted("tokens", now.Add(-11*time.Minute), now.Add(-11*time.Minute))
	b.tickStarted("cleanup", now.Add(-time.Minute), now.Add(-time.Minute))
	if got := b.stuck(now, DefaultMaxTick); got != "tokens" {
		t.Errorf("stuck = %q, want tokens", got)
	}
	b.tickEnded("tokens", now, nil, nil)
	if got := b.stuck(now, DefaultMaxTick); got != "" {
		t.Errorf("stuck = %q after the tick ended", got)
	}
}

func TestRunnerNeedsLoops(t *testing.T) {
	t.Parallel()
	if err := (&Runner{}).Run(context.Background()); err == nil {
		t.Fatal("no error for a runner without loops")
	}
}

// A clock that jumps (a virtual week, an NTP step) does not make a tick
// look stuck: stuck is judged on the monotonic clock.
func TestStuckIgnoresClockJumps(t *testing.T) {
	t.Parallel()
	b := NewStatusBoard("")
	now := time.Now()
	b.tickStarted("cleanup", now.Add(-7*24*time.Hour), now)
	if got := b.stuck(now.Add(time.Second), DefaultMaxTick); got != "" {
		t.Errorf("stuck = %q after a one-second tick whose clock jumped a week", got)
	}
}
