package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/onekube/onekube/agent/system"
)

// Runner runs the loops until its context ends. Loops not marked
// LeaderOnly start at once; the others start when the Elector makes this
// master the acting one and stop when it loses the lease.
type Runner struct {
	Loops []Spec
	// Elector decides who acts; nil means this instance always acts (one
	// master, or a test).
	Elector Elector
	Clock   system.Clock
	Log     *slog.Logger
	Notify  Notifier
	// Status, when set, receives the runner's observations.
	Status *StatusBoard
	// MaxTick bounds one tick before the process counts as stuck
	// (DefaultMaxTick when zero).
	MaxTick time.Duration
}

// Run blocks until ctx ends, then waits for every loop to return.
func (r *Runner) Run(ctx context.Context) error {
	if len(r.Loops) == 0 {
		return errors.New("serve: no loops to run")
	}
	r.defaults()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var leaderLoops []Spec
	for _, s := range r.Loops {
		if s.LeaderOnly {
			leaderLoops = append(leaderLoops, s)
			continue
		}
		wg.Go(func() { r.runLoop(ctx, s) })
	}
	if len(leaderLoops) > 0 {
		if r.Elector == nil {
			r.Status.setActing(true, "")
			for _, s := range leaderLoops {
				wg.Go(func() { r.runLoop(ctx, s) })
			}
		} else {
			wg.Go(func() { r.campaign(ctx, leaderLoops) })
		}
	}
	wg.Go(func() { r.watchdog(ctx) })
	r.Notify.Ready()
	r.Log.Info("serve started", "loops", len(r.Loops), "leader_only", len(leaderLoops))
	<-ctx.Done()
	r.Notify.Stopping()
	wg.Wait()
	r.Log.Info("serve stopped")
	return nil
}

func (r *Runner) defaults() {
	if r.Clock == nil {
		r.Clock = system.RealClock{}
	}
	if r.Log == nil {
		r.Log = slog.New(slog.DiscardHandler)
	}
	if r.Notify == nil {
		r.Notify = nopNotifier{}
	}
	if r.Status == nil {
		r.Status = NewStatusBoard("")
	}
	if r.MaxTick <= 0 {
		r.MaxTick = DefaultMaxTick
	}
}

// campaign runs the election for as long as ctx lives; each term runs the
// leader loops under a context that ends with the term. Terms take turns:
// client-go starts each term in a goroutine and, when the lease is lost,
// cancels it without waiting for it to return (LeaderElector.Run in
// k8s.io/client-go/tools/leaderelection/leaderelection.go), so the next
// term, the lease won back a moment later, could start beside a tick of
// the last one still finishing past its context's end.
func (r *Runner) campaign(ctx context.Context, loops []Spec) {
	var turn sync.Mutex // held while a term's loops run
	r.Elector.Run(ctx, func(term context.Context) {
		turn.Lock()
		defer turn.Unlock()
		if term.Err() != nil {
			return // ended while the last term's loops were returning
		}
		r.runTerm(term, loops)
	}, func(leader string) { r.Status.setLeader(leader) })
	// The last term's loops have returned before Run does.
	turn.Lock()
	defer turn.Unlock()
}

// runTerm runs the leader loops until the term ends and every one of them
// returned; loops with per-term state start the term afresh.
func (r *Runner) runTerm(term context.Context, loops []Spec) {
	r.Log.Info("acting for the cluster", "identity", r.Elector.Identity())
	for _, s := range loops {
		if ts, ok := s.Loop.(TermScoped); ok {
			ts.NewTerm()
		}
	}
	r.Status.setActing(true, r.Elector.Identity())
	var wg sync.WaitGroup
	for _, s := range loops {
		wg.Go(func() { r.runLoop(term, s) })
	}
	wg.Wait()
	r.Status.setActing(false, "")
	r.Log.Info("no longer acting", "identity", r.Elector.Identity())
}

// runLoop ticks one loop until ctx ends. A panic in a tick is an error
// for that tick, not the end of the process.
func (r *Runner) runLoop(ctx context.Context, s Spec) {
	name := s.Loop.Name()
	log := r.Log.With("loop", name)
	errDelay := s.ErrorDelay
	if errDelay <= 0 {
		errDelay = DefaultErrorDelay
	}
	for ctx.Err() == nil {
		start := r.Clock.Now()
		r.Status.tickStarted(name, start, time.Now())
		next, err := tick(ctx, s.Loop)
		r.Status.tickEnded(name, r.Clock.Now(), err, report(s.Loop))
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			log.Warn("tick failed", "error", err, "retry_in", errDelay)
			next = errDelay
		}
		if next <= 0 {
			next = time.Second
		}
		if r.Clock.Sleep(ctx, next) != nil {
			return
		}
	}
}

func tick(ctx context.Context, l Loop) (next time.Duration, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in %s: %v", l.Name(), p)
		}
	}()
	return l.Tick(ctx)
}

func report(l Loop) any {
	if rp, ok := l.(Reporter); ok {
		return rp.Report()
	}
	return nil
}

// watchdog feeds systemd's watchdog while no tick has been running for
// longer than MaxTick, and keeps the status file fresh.
func (r *Runner) watchdog(ctx context.Context) {
	every := r.Notify.WatchdogInterval() / 2
	if every <= 0 || every > 10*time.Second {
		every = 10 * time.Second
	}
	for {
		now := r.Clock.Now()
		if stuck := r.Status.stuck(time.Now(), r.MaxTick); stuck != "" {
			r.Log.Error("a loop is stuck; no longer feeding the watchdog so systemd restarts serve", "loop", stuck, "max_tick", r.MaxTick)
		} else {
			r.Notify.Watchdog()
		}
		if err := r.Status.Flush(now); err != nil {
			r.Log.Warn("writing the status file failed", "error", err)
		}
		if r.Clock.Sleep(ctx, every) != nil {
			return
		}
	}
}
