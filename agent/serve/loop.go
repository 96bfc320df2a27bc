package serve

import (
	"context"
	"time"
)

// Loop is one controller. Tick observes and converges once, and returns
// how long to wait before the next tick: a loop ticks fast while something
// is in flight (a VM waiting to join) and slowly when the cluster is idle,
// which keeps OneGate's load small (it has no watch).
type Loop interface {
	Name() string
	Tick(ctx context.Context) (next time.Duration, err error)
}

// Reporter is implemented by loops with something to show in
// `onekube-agent status`; the value is marshalled to JSON, so it must not
// hold secrets.
type Reporter interface {
	Report() any
}

// TermScoped is implemented by LeaderOnly loops that keep state valid only
// while this master acts. Between two terms another master may have acted
// and changed what the state stood for, so the runner calls NewTerm
// before a term's first tick, once the last term's ticks have returned.
type TermScoped interface {
	NewTerm()
}

// Spec places a loop in the Runner.
type Spec struct {
	Loop Loop
	// LeaderOnly loops run only while this master holds the lease.
	LeaderOnly bool
	// ErrorDelay is the wait after a failed tick (default 30 s).
	ErrorDelay time.Duration
}

// Defaults for Spec and Runner.
const (
	DefaultErrorDelay = 30 * time.Second
	// DefaultMaxTick is how long one tick may run before the runner calls
	// the process stuck and stops feeding systemd's watchdog, so that
	// systemd restarts it. Ticks bound their own calls far below this.
	DefaultMaxTick = 10 * time.Minute
)
