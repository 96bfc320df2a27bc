package systemtest

import (
	"context"
	"sync"
	"time"

	"github.com/onekube/onekube/agent/system"
)

// Clock is a fake clock whose Sleep advances time at once, so a test of a
// 30-minute deadline runs in microseconds and still exercises the real
// deadline arithmetic.
type Clock struct {
	mu    sync.Mutex
	now   time.Time
	Slept []time.Duration
}

var _ system.Clock = (*Clock)(nil)

// NewClock starts at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep advances the fake time by d unless ctx is already done.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.Slept = append(c.Slept, d)
	return nil
}

// Advance moves the fake time forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
