package system

import (
	"context"
	"os"
	"strconv"
	"strings"
	"time"
)

// FileClock is the virtual clock of the simulated cluster: the wall clock
// plus an offset, in nanoseconds, read from a file that the test moves
// forward ("a week later"). Every process of a simulated cluster (agents,
// stand-ins, the simulator) reads the same file, so they agree on the time
// as the VMs of a real cloud roughly do. Only onekube-agent built with
// -tags simclock uses it (cmd/onekube-agent/clock_simclock.go); time
// inside the real API server and client-go's leader election stays real.
type FileClock struct{ Path string }

var _ Clock = FileClock{}

// Offset is how far the virtual clock is ahead of the wall clock.
func (c FileClock) Offset() time.Duration {
	b, err := os.ReadFile(c.Path)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0
	}
	return time.Duration(n)
}

// Now is the wall clock plus the offset.
func (c FileClock) Now() time.Time { return time.Now().Add(c.Offset()) }

// Sleep waits until the virtual time has moved d on, by the wall clock or
// by a jump of the offset, checking at least every 100 ms.
func (c FileClock) Sleep(ctx context.Context, d time.Duration) error {
	deadline := c.Now().Add(d)
	for {
		left := deadline.Sub(c.Now())
		if left <= 0 {
			return nil
		}
		t := time.NewTimer(min(left, 100*time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Advance moves the virtual clock of every reader of the file forward by
// d (written atomically).
func (c FileClock) Advance(d time.Duration) error {
	off := c.Offset() + d
	tmp := c.Path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.FormatInt(int64(off), 10)+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, c.Path)
}
