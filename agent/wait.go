package agent

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/onekube/onekube/agent/system"
)

// Backoff shape shared by every wait: grow by half each attempt, with ±50%
// jitter so hundreds of workers booted together spread their requests
// instead of polling OneGate in lockstep.
const (
	backoffMultiplier = 1.5
	backoffJitter     = 0.5
)

// newBackOff returns the exponential backoff of every wait, timed by clock.
func newBackOff(initial, max time.Duration, clock system.Clock) *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(initial),
		backoff.WithMaxInterval(max),
		backoff.WithMultiplier(backoffMultiplier),
		backoff.WithRandomizationFactor(backoffJitter),
		backoff.WithMaxElapsedTime(0), // the waiter's deadline bounds it
		backoff.WithClockProvider(clock),
	)
}

// waiter retries an operation while it fails with a Retryable error, with
// backoff, until a deadline. Any other error stops it at once.
type waiter struct {
	what    string // for errors and logs: "waiting for the master"
	timeout time.Duration
	// expired is wrapped into the error returned at the deadline.
	expired      error
	initial, max time.Duration
	clock        system.Clock
	log          *slog.Logger
	attempts     int
	// next, when set, replaces the backoff: the sleep before the next
	// attempt at now (waitMaster's pacer).
	next func(now time.Time) time.Duration
}

// run calls op until it returns nil or a permanent error, or the deadline
// passes; then the error names the wait, its timeout and the last failure.
func (w *waiter) run(ctx context.Context, op func(context.Context) error) error {
	deadline := w.clock.Now().Add(w.timeout)
	b := newBackOff(w.initial, w.max, w.clock)
	for {
		w.attempts++
		err := op(ctx)
		if err == nil || !IsRetryable(err) {
			return err
		}
		now := w.clock.Now()
		if !now.Before(deadline) {
			expired := w.expired
			if expired == nil {
				expired = fmt.Errorf("%s timed out", w.what)
			}
			return fmt.Errorf("%w after %s (%d attempts); last: %w", expired, w.timeout, w.attempts, err)
		}
		var wait time.Duration
		if w.next != nil {
			wait = w.next(now)
		} else {
			wait = b.NextBackOff()
		}
		wait = min(wait, deadline.Sub(now))
		w.log.Debug("retrying", "wait", w.what, "in", wait.Round(time.Millisecond), "error", err)
		if err := w.clock.Sleep(ctx, wait); err != nil {
			return fmt.Errorf("%s: %w", w.what, err)
		}
	}
}
